package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/game"
)

// The evaluation cache (Config.Cache, package evalcache) keeps finished
// analyses keyed by the position (board, side to move, hands: not the move
// number or the moves that led there), the engine's identity (its probed
// profile's binary and USI id, and how it is run: dir, args, env and the
// options set at start, except those that only size it: hash, threads,
// ponder), and the MultiPV count. A WebSocket session whose client has set
// engine options on its lease neither reads nor fills it.
//
// A cached answer stands for exactly the question it answers. The engine is
// sent the whole move list, and a repetition in it changes its answer (a
// position that already occurred three times is a draw at the next return:
// fairy-stockfish answers cp 0 at depth 40 within a second). In shogi no
// move is irreversible (captured pieces come back as drops, promoted ones
// unpromote when captured), so any earlier position may come back: the part
// of the history that can repeat is all of it. So a search whose history
// (its start and the position after each move) holds any position twice
// neither reads nor fills the cache: the engine answers it every time. A
// history without a repeated position leaves an engine nothing to count:
// the engines usid is tested with count a position before the root only
// once it has repeated there (fairy-stockfish at four occurrences,
// YaneuraOu at two), so its answer is the one for the position alone, and
// the key is the position. The engine's hash is shared by the searches of
// one lease, so a WebSocket lease that searched a repeated history fills
// the cache no more until it is given back. Analyses keep the engine's game
// (and hash) from lease to lease, but a lease that searched a repeated
// history ends it (Lease.EndGame): the next lease starts with usinewgame.
//
// Whatever the cache holds is checked like an engine's answer before it is
// used, and before it is stored (validResult): legal best move, ponder and
// lines, exactly MultiPV lines, scores of one kind, bounds and sizes; an
// entry that fails is removed from every tier.
//
// A REST analysis is answered from the cache, without an engine, when the
// cached search already met one of the request's limits: depth (its depth
// ≥ the asked depth), nodes (its nodes ≥ the asked nodes) or movetime (the
// time the engine reported for it ≥ the asked time: it searched at least as
// long as the request would). Limits stop a search at the first one
// reached, so a result that met any of them is what the search would have
// answered at best. A WebSocket analysis gets the cached lines at once,
// marked cached, and then searches live.

// resourceOptions change how fast an engine searches, not what it answers:
// they stay out of the key.
var cacheNeutralOptions = []string{"USI_Hash", "Hash", "Threads", "Thread", "USI_Ponder", "Ponder", "USI_MultiPV", "MultiPV"}

// cachedResult is what the cache holds for a search (the lines without
// their KIF notation, which depends on the request).
type cachedResult struct {
	BestMove string  `json:"bestmove"`
	Ponder   string  `json:"ponder,omitempty"`
	Lines    []*Line `json:"lines"`
}

// Bounds on a cached result, beyond what any real search reports (the
// Stockfish and YaneuraOu families stop at MAX_PLY 246).
const (
	maxCachedDepth    = 255
	maxCachedSelDepth = 1024
	maxCachedPV       = 256
	maxCachedCP       = 1_000_000
	maxCachedMate     = 10_000
)

// historyRepeats is historyRepeats(j.pos), worked out once (a 1000-move
// history takes a millisecond or two).
func (j *job) historyRepeats() bool {
	if j.repeats == 0 {
		j.repeats = 1
		if j.pos.Repeats() {
			j.repeats = 2
		}
	}
	return j.repeats == 2
}

// historyRepeats reports whether a position occurs twice among c's start
// and the positions after each of its moves (game.Position.Repeats).
func historyRepeats(c *Checked) bool { return c.Repeats() }

// cacheKey returns j's key, or "" when j cannot use the cache.
func (c *Service) cacheKey(j *job) string {
	if c.Cache == nil || j.kind != jobAnalyze || j.noCache || c.Pool == nil || j.historyRepeats() {
		return ""
	}
	prof := c.Pool.Profile(j.engine)
	cfg, ok := c.Pool.Config(j.engine)
	if prof == nil || !ok {
		return ""
	}
	id := prof.Identity
	parts := []string{"usid-eval-v2", id.Path, strconv.FormatInt(id.Size, 10), strconv.FormatInt(id.ModTime.UnixNano(), 10), id.Name, id.Author, "dir=" + cfg.Dir}
	if prof.ScoresFlipped(game.Black) || prof.ScoresFlipped(game.White) {
		// Its scores are turned to the side to move's (search.go): not
		// what a cache filled before usid knew it holds.
		parts = append(parts, "scores="+prof.ScoreSide)
	}
	for _, a := range cfg.Args {
		parts = append(parts, "arg="+a)
	}
	for _, e := range cfg.Env {
		parts = append(parts, "env="+e)
	}
	names := make([]string, 0, len(cfg.Options))
	for n := range cfg.Options {
		if !slices.Contains(cacheNeutralOptions, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		parts = append(parts, "option="+n+"="+cfg.Options[n])
	}
	// The game is in the position's key ("chess ..."), and the engine's
	// identity differs anyway: a chess key never meets a shogi one.
	parts = append(parts, "multipv="+strconv.Itoa(j.multipv), "position="+j.pos.Key())
	return evalcache.Key(parts...)
}

// limitMet reports whether a cached search met one of j's limits.
func limitMet(j *job) func(evalcache.Entry) bool {
	l := j.limits
	return func(e evalcache.Entry) bool {
		return l.Depth > 0 && e.Depth >= l.Depth || l.Nodes > 0 && e.Nodes >= l.Nodes || l.MoveTimeMS > 0 && e.TimeMS >= l.MoveTimeMS
	}
}

// fromCache returns j's cached result if ok accepts it, with notation
// added when j asks for it. An entry that fails validResult is rejected
// (removed from every tier).
func (c *Service) fromCache(ctx context.Context, j *job, ok func(evalcache.Entry) bool) *cachedResult {
	key := c.cacheKey(j)
	if key == "" {
		return nil
	}
	var r *cachedResult
	_, hit := c.Cache.Get(ctx, key, func(e evalcache.Entry) evalcache.Verdict {
		d, err := decodeResult(e.Value)
		if err != nil || !validResult(j, d, e) {
			return evalcache.Reject
		}
		if !ok(e) {
			return evalcache.Short
		}
		r = d
		return evalcache.Use
	})
	if !hit {
		return nil
	}
	if j.kif {
		for _, l := range r.Lines {
			ev := &Event{}
			j.setPVNotation(ev, l.PV)
			l.PVKIF, l.PVSAN = ev.PVKIF, ev.PVSAN
		}
	}
	return r
}

// decodeResult reads a cached value strictly: one JSON object of the
// fields usid writes, nothing else.
func decodeResult(b []byte) (*cachedResult, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var r cachedResult
	if err := d.Decode(&r); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data")
	}
	return &r, nil
}

// validResult checks a result as an engine's answer to j is checked, and
// that e describes it: a legal best move and ponder, exactly j's MultiPV
// lines, numbered in order, each a non-empty legal line of at most
// maxCachedPV moves with exactly one of cp and mate, a bound usid writes and
// numbers a search reports; e's depth, nodes and time those of its lines.
func validResult(j *job, r *cachedResult, e evalcache.Entry) bool {
	b := j.pos
	if b.CheckMove(r.BestMove) != nil || (r.Ponder != "" && !b.PonderOK(r.BestMove, r.Ponder)) {
		return false
	}
	if len(r.Lines) != j.multipv {
		return false
	}
	var nodes, ms int64
	for i, l := range r.Lines {
		if l == nil || l.MultiPV != i+1 || !validScore(l.Score) || (l.Bound != "" && l.Bound != "lower" && l.Bound != "upper") ||
			l.Depth < 0 || l.Depth > maxCachedDepth || l.SelDepth < 0 || l.SelDepth > maxCachedSelDepth ||
			l.Nodes < 0 || l.TimeMS < 0 || len(l.PV) == 0 || len(l.PV) > maxCachedPV || len(l.PVKIF) != 0 || len(l.PVSAN) != 0 {
			return false
		}
		if b.CheckLine(l.PV) != nil {
			return false
		}
		nodes, ms = max(nodes, l.Nodes), max(ms, l.TimeMS)
	}
	return e.Depth == r.Lines[0].Depth && e.Nodes == nodes && e.TimeMS == ms
}

// validScore: exactly one of cp and mate, within bounds; a mate sign only
// on a mate of unknown length.
func validScore(s *Score) bool {
	switch {
	case s == nil || (s.CP == nil) == (s.Mate == nil):
		return false
	case s.CP != nil:
		return *s.CP >= -maxCachedCP && *s.CP <= maxCachedCP && s.MateSign == ""
	case s.MateSign != "":
		return *s.Mate == 0 && (s.MateSign == "+" || s.MateSign == "-")
	}
	return *s.Mate >= -maxCachedMate && *s.Mate <= maxCachedMate
}

// toCache offers a finished analysis to the cache: its last line for each
// multipv and its best move, if it passes the checks a cached entry must
// pass when read.
func (c *Service) toCache(j *job, lines map[int]*Event, term *Event) {
	if term == nil || term.Type != EventBestMove || j.pos.NoMove(term.Move) || j.noStore {
		return
	}
	key := c.cacheKey(j)
	if key == "" {
		return
	}
	r := cachedResult{BestMove: term.Move, Ponder: term.PonderMv}
	var e evalcache.Entry
	for k := 1; k <= j.multipv; k++ {
		ev := lines[k]
		if ev == nil {
			return // a line is missing: not the answer a hit would stand for
		}
		r.Lines = append(r.Lines, &Line{MultiPV: k, Score: ev.Score, Bound: ev.Bound, Depth: ev.Depth, SelDepth: ev.SelDepth,
			Nodes: ev.Nodes, TimeMS: ev.TimeMS, PV: ev.PV})
		e.Nodes, e.TimeMS = max(e.Nodes, ev.Nodes), max(e.TimeMS, ev.TimeMS)
	}
	e.Depth = r.Lines[0].Depth
	if !validResult(j, &r, e) {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	e.Value = b
	c.Cache.Put(context.Background(), key, e)
}
