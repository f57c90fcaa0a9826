package session

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/usid/usid/evalcache"
)

// The evaluation cache (Config.Cache, package evalcache) keeps finished
// analyses keyed by the position (board, side to move, hands: not the move
// number or the moves that led there), the engine's identity (its probed
// profile's binary and USI id, and how it is run: dir, args, env and the
// options set at start, except those that only size it: hash, threads,
// ponder), and the MultiPV count. A WebSocket session whose client has set
// engine options on its lease neither reads nor fills it.
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

// cacheKey returns j's key, or "" when j cannot use the cache.
func (c *Service) cacheKey(j *job) string {
	if c.Cache == nil || j.kind != jobAnalyze || j.noCache || c.Pool == nil {
		return ""
	}
	prof := c.Pool.Profile(j.engine)
	cfg, ok := c.Pool.Config(j.engine)
	if prof == nil || !ok {
		return ""
	}
	id := prof.Identity
	parts := []string{"usid-eval-v1", id.Path, strconv.FormatInt(id.Size, 10), strconv.FormatInt(id.ModTime.UnixNano(), 10), id.Name, id.Author, "dir=" + cfg.Dir}
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
	sfen := j.pos.Pos.SFEN()
	sfen = sfen[:strings.LastIndexByte(sfen, ' ')] // without the move number
	parts = append(parts, "multipv="+strconv.Itoa(j.multipv), "position="+sfen)
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
// added when j asks for it.
func (c *Service) fromCache(ctx context.Context, j *job, ok func(evalcache.Entry) bool) *cachedResult {
	key := c.cacheKey(j)
	if key == "" {
		return nil
	}
	e, hit := c.Cache.Get(ctx, key, ok)
	if !hit {
		return nil
	}
	var r cachedResult
	if err := json.Unmarshal(e.Value, &r); err != nil || len(r.Lines) == 0 {
		return nil
	}
	// Whatever the cache says is checked like an engine's answer: only
	// legal moves reach a client.
	pos := j.pos.Pos
	bm, err := pos.CheckMove(r.BestMove)
	if err != nil {
		return nil
	}
	if r.Ponder != "" {
		after := *pos
		after.Play(bm)
		if _, err := after.CheckMove(r.Ponder); err != nil {
			r.Ponder = ""
		}
	}
	for _, l := range r.Lines {
		if l == nil || len(l.PV) == 0 {
			return nil
		}
		kif, err := pos.KIFLine(l.PV, j.pos.lastTo())
		if err != nil {
			return nil
		}
		if j.kif {
			l.PVKIF = kif
		}
	}
	return &r
}

// toCache offers a finished analysis to the cache: its last line for each
// multipv and its best move.
func (c *Service) toCache(j *job, lines map[int]*Event, term *Event) {
	if term == nil || term.Type != EventBestMove || term.Move == "resign" || term.Move == "win" {
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
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	e.Value = b
	c.Cache.Put(context.Background(), key, e)
}
