package probe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/usid/usid/usi"
)

// Bounds of the probe's searches.
const (
	probeDepth    = 3
	probeNodes    = 10000
	probeMoveTime = 500 * time.Millisecond
	baseline      = 500 * time.Millisecond // byoyomi of the plain search
	grace         = 3 * time.Second        // past a search's own bound before usid stops it
	cheapReady    = 250 * time.Millisecond // an isready cheaper than this may run between leases
	readyBound    = 30 * time.Second       // an isready at a new game, past which the engine hangs
	startposBound = baseline + time.Second // the startpos step: a hang shows as no answer by then
)

// NodesOvershot reports whether a search given go nodes limit that searched
// reached nodes overshot it: by more than half and by more than
// nodesSlack. Engines read their node count every so often (the
// stockfish family every thousand nodes or so, and a search finishes its
// current step), so a small limit is overshot by a few thousand nodes
// that cost milliseconds; YaneuraOu's nodes 20000 once searched 30,923.
func NodesOvershot(limit, reached int64) bool {
	return reached > limit*3/2 && reached-limit > nodesSlack
}

// nodesSlack is the overshoot of a nodes limit that is never held against
// an engine (NodesOvershot).
const nodesSlack = 4096

// Config says how to probe one engine.
type Config struct {
	// Start starts a fresh engine process: handshake and the configured
	// options, but no isready (the probe times it). Run calls it again
	// after a probe made the engine exit.
	Start    func(ctx context.Context) (*usi.Engine, error)
	Identity Identity // the engine's file; Run fills in its id name
	Logger   *slog.Logger
	// Dialect is what Start's engines speak (nil: USI); it decides the
	// game of the probe's positions (UCI: chess).
	Dialect *usi.Dialect
	// Keep, if set, is given the engine the probe used last instead of
	// closing it, when the probe succeeds and the engine may serve on: it
	// runs, no search is in flight, and mate searches do not unfit it
	// (Profile.AfterMate ok). Keep owns it from then on: an engine that
	// is slow to get ready is started once, not once for the probe and
	// again to serve. It is in a game (it searched since its last
	// usinewgame; its hash holds the probe's positions), and the options
	// the probe set (the analysis options, USI_AnalyseMode,
	// UCI_AnalyseMode and USI_OwnBook, where advertised) are as the probe
	// left them: its Options and OptionValue say which differ from what
	// Start set.
	Keep func(*usi.Engine)
}

// ErrStart is returned, wrapped, when the engine could not be started at all.
var ErrStart = errors.New("probe: engine does not start")

// Run probes an engine and returns its profile. It fails only when the
// engine cannot be started or made ready once (wrapping ErrStart), or when
// ctx ends; every other misbehaviour is a finding. Every step is bounded.
func Run(ctx context.Context, cfg Config) (*Profile, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Dialect == nil {
		cfg.Dialect = usi.DialectUSI
	}
	r := &runner{cfg: cfg, log: log, g: gameOf(cfg.Dialect),
		prof: &Profile{Version: Version, Identity: cfg.Identity, Protocol: cfg.Dialect.Name, Go: map[string]string{}}}
	began := time.Now()
	defer r.close()
	if err := r.first(ctx); err != nil {
		return nil, err
	}
	// The conversation of a careful GUI (Shogidokoro's order): usi, the
	// options, isready, usinewgame, positions and searches, gameover, and
	// isready again only at the start of the next game; never two isready
	// in a row. A step that makes the engine exit or hang is a finding, the
	// engine is started afresh for the next one.
	for _, step := range []func(context.Context) error{r.baseline, r.depth, r.nodes, r.movetime, r.inc, r.scoreSide, r.newGame, r.mate, r.startpos} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	p := r.prof
	if e := r.eng; cfg.Keep != nil && e != nil && e.Err() == nil && e.ActiveSearch() == nil && p.AfterMate != AfterMateRecycle {
		r.eng = nil
		cfg.Keep(e)
	}
	p.ProbedAt = time.Now().UTC().Truncate(time.Second)
	p.ProbeTook = Millis(time.Since(began).Milliseconds())
	log.Info("engine profile probed", "id", p.Identity.Name, "native", p.NativeParams(), "checkmate", p.Checkmate,
		"after_mate", p.AfterMate, "mate_only", p.MateOnly, "score_side", p.ScoreSide, "isready_ms", p.ReadyAgainMS, "avoid", p.Avoid, "took", time.Since(began).Round(time.Millisecond))
	return p, nil
}

type runner struct {
	cfg  Config
	g    *gameProbe
	log  *slog.Logger
	prof *Profile
	eng  *usi.Engine // nil after it exited, until the next step needs one
}

func (r *runner) close() {
	if r.eng != nil {
		r.eng.Close()
		r.eng = nil
	}
}

// engine returns a running engine, starting one (with usinewgame, as GUIs do
// before the first position) if the last one exited.
func (r *runner) engine(ctx context.Context) (*usi.Engine, error) {
	if r.eng != nil && r.eng.Err() == nil {
		return r.eng, nil
	}
	r.close()
	e, err := r.cfg.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = e.IsReady(rctx)
	cancel()
	if err == nil {
		err = e.NewGame()
	}
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	r.eng = e
	return e, nil
}

// first starts the engine, reads its options and makes it ready once, as a
// GUI does before a game: usi, the options, isready (timed: loading files,
// allocating the hash), usinewgame. A second isready comes only at the start
// of the next game (newGame): some engines exit on two in a row.
func (r *runner) first(ctx context.Context) error {
	e, err := r.cfg.Start(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	r.eng = e
	p := r.prof
	id := e.ID()
	p.Identity.Name, p.Identity.Author = id.Name, id.Author
	opts := e.Options()
	p.MultiPVOption = optionName(opts, "USI_MultiPV", "MultiPV")
	p.Variants, p.Chess960 = variants(opts), optionName(opts, "UCI_Chess960") != ""
	p.HashOption = optionName(opts, "USI_Hash", "Hash")
	if p.HashOption == "" {
		p.HashOption = "USI_Hash" // reserved: sent to every engine, as GUIs do
	}
	p.PonderOption = optionName(opts, "USI_Ponder", "Ponder")
	if p.PonderOption == "" {
		p.PonderOption = "USI_Ponder"
	}
	for _, f := range []string{"multipv_option", "hash_option", "ponder_option"} {
		p.set(f, SourceProbed, "")
	}
	// The probe learns how the engine analyses: with the options the USI
	// draft reserves for that, where it has them, as usid's analyses do.
	for _, o := range []struct{ name, value string }{{"USI_AnalyseMode", "true"}, {"UCI_AnalyseMode", "true"}, {"USI_OwnBook", "false"}} {
		if optionName(opts, o.name) != "" {
			if err := e.SetOption(o.name, o.value); err != nil {
				return fmt.Errorf("%w: option %s: %w", ErrStart, o.name, err)
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	t := time.Now()
	err = e.IsReady(rctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	p.ReadyFirstMS = time.Since(t).Milliseconds()
	if err := e.NewGame(); err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	return nil
}

// newGame ends the first game and starts the next the way GUIs do
// (gameover, isready, usinewgame), timing that isready: it is what an
// isready between two leases' games would cost. An engine that exits or
// hangs on it is never sent isready again after a game.
func (r *runner) newGame(ctx context.Context) error {
	e, err := r.engine(ctx)
	if err != nil {
		return err
	}
	p := r.prof
	step := AvoidReadyAfterGameOver
	t := time.Now()
	if err = e.GameOver(usi.Draw); err == nil {
		rctx, cancel := context.WithTimeout(ctx, readyBound)
		err = e.IsReady(rctx)
		cancel()
	}
	took := time.Since(t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		err = e.NewGame()
	}
	if err != nil {
		r.avoid(step, err)
		p.ReadyBetweenLeases = false
		p.set("isready", SourceProbed, "usid sends no isready after a game: "+p.Notes[step])
		return nil
	}
	p.ReadyAgainMS = took.Milliseconds()
	p.ReadyBetweenLeases = took < cheapReady
	note := fmt.Sprintf("isready at a new game took %v", took.Round(time.Millisecond))
	if !p.ReadyBetweenLeases {
		note += ": the engine re-initialises on isready, so usid does not send it between games"
	}
	p.set("isready", SourceProbed, note)
	return nil
}

// avoid records that step made the engine exit or hang, in the engine's own
// words where it left any, and closes the engine: the next step starts a
// fresh one.
func (r *runner) avoid(step string, err error) {
	p := r.prof
	verb := "exits on "
	if errors.Is(err, usi.ErrTimeout) || (r.eng != nil && r.eng.Err() == nil) {
		verb = "hangs on " // alive, but it did not answer (and usid killed it)
	}
	note := verb + step + ": " + err.Error()
	if r.eng != nil {
		if w := r.eng.LastWords(); len(w) > 0 && !strings.Contains(note, w[len(w)-1]) {
			note += "; the engine said: " + strings.Join(w, " | ")
		}
	}
	r.log.Info("probe: avoided from now on", "step", step, "finding", note)
	if !slices.Contains(p.Avoid, step) {
		p.Avoid = append(p.Avoid, step)
	}
	p.set(step, SourceProbed, note)
	r.close()
}

// variants lists the variants an engine advertises in its UCI_Variant (or
// USI_Variant) combo option, as fairy-stockfish does.
func variants(opts []usi.Option) []string {
	for _, o := range opts {
		if (o.Name == "UCI_Variant" || o.Name == "USI_Variant") && o.Type == usi.TypeCombo {
			return slices.Clone(o.Vars)
		}
	}
	return nil
}

func optionName(opts []usi.Option, names ...string) string {
	for _, n := range names {
		if slices.ContainsFunc(opts, func(o usi.Option) bool { return o.Name == n }) {
			return n
		}
	}
	return ""
}

// outcome is what one probe search did.
type outcome struct {
	res      usi.Result
	err      error         // the engine exited, or ignored stop
	took     time.Duration // from go to the answer
	stopped  bool          // the probe had to send stop
	maxDepth int
	maxNodes int64
	nps      int64
	infos    int
	depthSet bool            // some info line had depth
	nodesSet bool            // ... and nodes
	scored   bool            // some info line of the best line had a score
	score    usi.Score       // ... the last one
	scale    *usi.ScoreScale // the engine's scale of bare scores, if it declared one
}

// search sends one go and waits at most bound for the answer, then stops the
// search (and waits StopTimeout more, after which usi kills the engine).
func (r *runner) search(ctx context.Context, sfen string, g usi.Go, bound time.Duration) (outcome, error) {
	e, err := r.engine(ctx)
	if err != nil {
		return outcome{}, err
	}
	var o outcome
	start := time.Now()
	s, err := e.Go(ctx, r.g.position(sfen, nil), g)
	if err != nil {
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		o.err = err
		return o, nil
	}
	var stopped atomic.Bool
	t := time.AfterFunc(bound, func() {
		stopped.Store(true)
		s.Stop()
	})
	defer t.Stop()
	for {
		in, ok := s.Next(ctx)
		if !ok {
			break
		}
		o.infos++
		if in.Has(usi.InfoDepth) {
			o.depthSet = true
			o.maxDepth = max(o.maxDepth, in.Depth)
		}
		if in.Has(usi.InfoNodes) {
			o.nodesSet = true
			o.maxNodes = max(o.maxNodes, in.Nodes)
		}
		if in.Has(usi.InfoNPS) {
			o.nps = in.NPS
		}
		if in.Has(usi.InfoScore) && in.MultiPV <= 1 {
			o.scored, o.score = true, in.Score
		}
	}
	if sc, ok := e.ScoreScale(); ok {
		o.scale = &sc
	}
	o.res, o.err = s.Wait(context.WithoutCancel(ctx))
	o.took = time.Since(start)
	o.stopped = stopped.Load()
	if ctx.Err() != nil {
		return o, ctx.Err()
	}
	if o.err != nil {
		r.log.Info("probe: the engine failed a search", "go", goLine(g), "err", o.err,
			"expected", "the probe tries what the engine may not take; what it fails is emulated by usid or refused")
	}
	return o, nil
}

func goLine(g usi.Go) string {
	l, _ := g.Line()
	return l
}

// answered reports whether the search ended with a legal best move in pos,
// and says what went wrong otherwise.
func (r *runner) answered(o outcome, pos string) (bool, string) {
	switch {
	case o.err != nil:
		return false, fmt.Sprintf("the engine failed: %v", o.err)
	case o.res.Checkmate != nil:
		return false, "it answered with checkmate"
	case o.res.BestMove == nil || o.res.BestMove.Move == usi.MoveNone:
		return false, "no best move"
	}
	if err := r.g.legal(pos, o.res.BestMove.Move); err != nil {
		return false, fmt.Sprintf("best move %q: %v", o.res.BestMove.Move, err)
	}
	return true, ""
}

// baseline asks for a plain timed search, the one every Shogidokoro engine
// takes, and learns whether the engine analyses at all and what its info
// lines carry.
func (r *runner) baseline(ctx context.Context) error {
	g := r.g.plainGo
	o, err := r.search(ctx, r.g.Middle, g, baseline+grace)
	if err != nil {
		return err
	}
	p := r.prof
	p.ReportsDepth, p.ReportsNodes, p.NPS = o.depthSet, o.nodesSet, o.nps
	if p.NPS == 0 && o.maxNodes > 0 && o.took >= 100*time.Millisecond { // a rate over less says little
		p.NPS = int64(float64(o.maxNodes) / o.took.Seconds())
	}
	p.set("reports_depth", SourceProbed, "")
	p.set("reports_nodes", SourceProbed, "")
	ok, why := r.answered(o, r.g.Middle)
	if ok && o.stopped {
		ok, why = false, "it answered only when stopped"
	}
	if ok {
		p.set("mate_only", SourceProbed, "")
		return nil
	}
	p.MateOnly = true // unless the mate probe finds no mate search either
	p.set("mate_only", SourceProbed, "a plain go "+goLine(g)+": "+why)
	return nil
}

// limitStep probes one limit parameter: the engine honours it when it
// answers by itself, in time, with a legal move, within the limit as far as
// its info lines show.
func (r *runner) limitStep(ctx context.Context, param string, g usi.Go, bound time.Duration, judge func(outcome) string) error {
	p := r.prof
	if p.MateOnly {
		p.Go[param] = Unsupported
		p.set(param, SourceProbed, "the engine does not analyse")
		return nil
	}
	o, err := r.search(ctx, r.g.Middle, g, bound)
	if err != nil {
		return err
	}
	why := ""
	if ok, w := r.answered(o, r.g.Middle); !ok {
		why = w
	} else if o.stopped {
		why = "it did not end the search by itself"
	} else {
		why = judge(o)
	}
	if why == "" {
		p.Go[param] = Native
		p.set(param, SourceProbed, fmt.Sprintf("%s: answered in %v", goLine(g), o.took.Round(time.Millisecond)))
		return nil
	}
	p.Go[param] = Emulated
	if param == "binc" {
		p.Go[param] = Unsupported
	}
	p.set(param, SourceProbed, goLine(g)+": "+why)
	return nil
}

func (r *runner) depth(ctx context.Context) error {
	return r.limitStep(ctx, "depth", usi.Go{Depth: probeDepth}, 5*time.Second, func(o outcome) string {
		if o.depthSet && o.maxDepth > probeDepth {
			return fmt.Sprintf("it searched to depth %d", o.maxDepth)
		}
		return ""
	})
}

func (r *runner) nodes(ctx context.Context) error {
	return r.limitStep(ctx, "nodes", usi.Go{Nodes: probeNodes}, 5*time.Second, func(o outcome) string {
		if o.nodesSet && NodesOvershot(probeNodes, o.maxNodes) {
			return fmt.Sprintf("it searched %d nodes", o.maxNodes)
		}
		return ""
	})
}

func (r *runner) movetime(ctx context.Context) error {
	return r.limitStep(ctx, "movetime", usi.Go{MoveTime: probeMoveTime}, probeMoveTime+grace, func(o outcome) string {
		// Some engines take movetime as a byoyomi less a safety margin
		// and answer far too early; others overrun it.
		if o.took < probeMoveTime*6/10 || o.took > probeMoveTime+500*time.Millisecond {
			return fmt.Sprintf("it answered after %v", o.took.Round(time.Millisecond))
		}
		return ""
	})
}

func (r *runner) inc(ctx context.Context) error {
	g := usi.Go{Clock: &usi.Clock{BTime: time.Second, WTime: time.Second, BInc: 200 * time.Millisecond, WInc: 200 * time.Millisecond}}
	return r.limitStep(ctx, "binc", g, 2*time.Second+grace, func(outcome) string { return "" })
}

// mate asks for a one-move mate, then (for an engine that also analyses)
// whether a plain search still gets an answer afterwards.
func (r *runner) mate(ctx context.Context) error {
	p := r.prof
	if r.g.MateInOne == "" {
		// A game without mates (othello): nothing is sent that the
		// engine could misread.
		p.Checkmate, p.AfterMate = false, AfterMateOK
		p.set("checkmate", SourceDefault, "the game ("+r.g.g.Name()+") has no mate search")
		if p.MateOnly { // neither analysis nor mates: try it for analysis
			p.MateOnly = false
			p.set("mate_only", SourceProbed, p.Notes["mate_only"]+"; the game has no mates")
		}
		p.set("after_mate", SourceDefault, "")
		return nil
	}
	o, err := r.search(ctx, r.g.MateInOne, r.g.mateGo, 2*time.Second+grace)
	if err != nil {
		return err
	}
	note := ""
	switch {
	case r.cfg.Dialect.MateInMoves:
		// UCI: "go mate 1" is answered by the mating move.
		switch {
		case o.err != nil:
			note = fmt.Sprintf("go mate: the engine failed: %v", o.err)
		case o.res.BestMove == nil || o.res.BestMove.Move == usi.MoveNone:
			note = "go mate: no best move"
		default:
			if err := r.g.mates(r.g.MateInOne, []string{o.res.BestMove.Move}); err != nil {
				note = fmt.Sprintf("go mate 1: best move %s: %v", o.res.BestMove.Move, err)
			}
		}
	case o.err != nil:
		note = fmt.Sprintf("go mate: the engine failed: %v", o.err)
	case o.res.BestMove != nil:
		note = "go mate: answered with bestmove (no mate search)"
	case o.res.Checkmate == nil:
		note = "go mate: no answer"
	case o.res.Checkmate.Result != usi.MateFound:
		note = "go mate on a mate in one: checkmate " + string(o.res.Checkmate.Result)
	default:
		if err := r.g.mates(r.g.MateInOne, o.res.Checkmate.Moves); err != nil {
			note = fmt.Sprintf("go mate: a false mate line: %v", err)
		}
	}
	p.Checkmate = note == ""
	p.set("checkmate", SourceProbed, note)
	if !p.Checkmate {
		if p.MateOnly {
			// Neither analysis nor mates: an engine usid can still try to
			// use for analysis; say so rather than refuse everything.
			p.MateOnly = false
			p.set("mate_only", SourceProbed, p.Notes["mate_only"]+"; no mate search either")
		}
		p.AfterMate = AfterMateOK
		p.set("after_mate", SourceDefault, "")
		return nil
	}
	if p.MateOnly {
		p.AfterMate = AfterMateOK
		p.set("after_mate", SourceDefault, "a mate-only engine gets only mate searches")
		return nil
	}
	g := r.g.plainGo
	o, err = r.search(ctx, r.g.Middle, g, baseline+grace)
	if err != nil {
		return err
	}
	if ok, why := r.answered(o, r.g.Middle); ok && !o.stopped {
		p.AfterMate = AfterMateOK
		p.set("after_mate", SourceProbed, "")
	} else {
		if why == "" {
			why = "it answered only when stopped"
		}
		p.AfterMate = AfterMateRecycle
		p.set("after_mate", SourceProbed, "a plain go after go mate: "+why)
	}
	return nil
}

// startpos checks the start position written as USI's "startpos" with
// moves, after positions given as SFEN (every probe position so far). Some
// engines (gpsusi) play the moves on the previous board and loop for ever,
// reading nothing more, stop and quit included. For them usid writes the
// start position as its SFEN, which every engine reads.
func (r *runner) startpos(ctx context.Context) error {
	g := r.g.plainGo
	if r.prof.MateOnly {
		g = r.g.mateGo
	}
	e, err := r.engine(ctx)
	if err != nil {
		return err
	}
	s, err := e.Go(ctx, r.g.position("startpos", r.g.StartMoves), g)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.avoid(AvoidStartposAfterSFEN, err)
		return nil
	}
	t := time.AfterFunc(startposBound, s.Stop)
	defer t.Stop()
	for {
		if _, ok := s.Next(ctx); !ok {
			break
		}
	}
	_, err = s.Wait(context.WithoutCancel(ctx))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil && !t.Stop() {
		err = fmt.Errorf("no answer within %v of %s", startposBound, goLine(g))
	}
	if err != nil {
		// Written as SFEN, the start position costs nothing: a slow
		// answer is reason enough.
		r.avoid(AvoidStartposAfterSFEN, err)
		return nil
	}
	r.prof.set(AvoidStartposAfterSFEN, SourceProbed, "")
	return nil
}
