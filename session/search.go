package session

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/usid/usid/game"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// Caps are the server's bounds on what a request may ask for.
type Caps struct {
	MaxMoveTime time.Duration // movetime_ms (default 60s)
	MaxAnalysis time.Duration // analysis "until stop" and pondering (default 10m)
	MaxMateTime time.Duration // mate timeout_ms (default 2m: the tsume page offers "2 min")
	MaxClock    time.Duration // btime, wtime, byoyomi, binc, winc (default 6h)
	MaxDepth    int           // default 128
	MaxNodes    int64         // default 10^10
	MaxMultiPV  int           // default 5
	MaxMoves    int           // moves in a position (default 1024)
	// WatchdogMargin is how long past its limit a search may run before usid
	// stops it itself and, if the engine does not answer, replaces it (default 5s).
	WatchdogMargin time.Duration
}

func (c Caps) withDefaults() Caps {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.MaxMoveTime, time.Minute)
	def(&c.MaxAnalysis, 10*time.Minute)
	def(&c.MaxMateTime, 2*time.Minute)
	def(&c.MaxClock, 6*time.Hour)
	def(&c.WatchdogMargin, 5*time.Second)
	if c.MaxDepth <= 0 {
		c.MaxDepth = 128
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = 1e10
	}
	if c.MaxMultiPV <= 0 {
		c.MaxMultiPV = 5
	}
	if c.MaxMoves <= 0 {
		c.MaxMoves = 1024
	}
	return c
}

type jobKind int

const (
	jobAnalyze jobKind = iota
	jobPlay
	jobMate
)

// job is a validated search request: nothing in it came unchecked from a client.
type job struct {
	kind   jobKind
	id     string
	pos    *Checked
	engine string
	kif    bool // notation asked: KIF for shogi, SAN for chess
	mateIn int  // a mate search in moves (UCI): go mate <mateIn>
	// mateInMoves: the position's engines search mates in moves and
	// answer with bestmove (usi.Dialect.MateInMoves).
	mateInMoves bool
	// scale is the engine's declared scale of bare scores (usi.ScoreScale:
	// othello engines), learned when the search starts; nil for none.
	scale     *usi.ScoreScale
	limits    Limits // analyze
	multipv   int    // analyze
	bounded   bool   // analyze: REST refuses unbounded searches
	clock     *usi.Clock
	ponder    bool          // play
	movesToGo int           // play (chess)
	depth     int           // play: a level's depth cap
	random    int           // play: the percent of answers replaced by a random move
	mate      time.Duration // mate

	autoMate  bool // a mate request naming no engine: picked by pickMateEngine
	cancelled bool // stop arrived while it was queued; guarded by Session.mu
	noCache   bool // the lease has client-set options: the cache's key would not describe it
	noStore   bool // the lease's engine searched a repeated history: its hash may carry that answer (cache.go)
	repeats   int8 // historyRepeats(pos), once known: 1 no, 2 yes (cache.go)
	// flush, if set, sends the info events emitted held (Event.held): a
	// search whose engine wrote several lines at once has them written
	// together, after the last (a WebSocket session's outbox).
	flush func()
}

// newJob checks a search request (analyze, go or mate) against the caps.
func (c *Service) newJob(r *Request) (*job, *Error) {
	caps := c.Caps
	if err := checkText("engine", r.Engine, 64); err != nil {
		return nil, err
	}
	if g := r.Position.GameOf(); g != nil && r.Notation != "" && r.Notation != g.Notation() {
		return nil, notationError(g, r.Notation)
	}
	pos, perr := CheckPosition(r.Position, caps.MaxMoves)
	if perr != nil {
		return nil, perr
	}
	g := pos.Game()
	dialect := usi.DialectNamed(g.Dialects()[0])
	j := &job{id: r.ID, pos: pos, engine: r.Engine, kif: r.Notation != "", mateInMoves: dialect != nil && dialect.MateInMoves}
	if j.engine == "" {
		j.engine = c.DefaultEngine
		if g != game.Default() {
			j.engine = c.engineOf(g.Name(), r.Type == TypeMate, pos.Variant())
		} else if r.Type == TypeMate {
			j.engine, j.autoMate = c.mateEngine(), c.MateEngine == "" && c.Pool != nil
		}
	}
	if err := c.sameGame(j); err != nil {
		return nil, err
	}
	ms := func(field string, v int64, max time.Duration) (time.Duration, *Error) {
		if v < 0 || time.Duration(v)*time.Millisecond > max {
			return 0, errorf(CodeInvalidField, "%s %d: want 0..%d", field, v, max.Milliseconds())
		}
		return time.Duration(v) * time.Millisecond, nil
	}
	switch r.Type {
	case TypeAnalyze:
		j.kind = jobAnalyze
		j.multipv = r.MultiPV
		if j.multipv == 0 {
			j.multipv = 1
		}
		if j.multipv < 1 || j.multipv > caps.MaxMultiPV {
			return nil, errorf(CodeInvalidField, "multipv %d: want 1..%d", r.MultiPV, caps.MaxMultiPV)
		}
		if r.Limits != nil {
			j.limits = *r.Limits
		}
		l := j.limits
		if _, err := ms("limits.movetime_ms", l.MoveTimeMS, caps.MaxMoveTime); err != nil {
			return nil, err
		}
		if l.Depth < 0 || l.Depth > caps.MaxDepth {
			return nil, errorf(CodeInvalidField, "limits.depth %d: want 0..%d", l.Depth, caps.MaxDepth)
		}
		if l.Nodes < 0 || l.Nodes > caps.MaxNodes {
			return nil, errorf(CodeInvalidField, "limits.nodes %d: want 0..%d", l.Nodes, caps.MaxNodes)
		}
		j.bounded = l.MoveTimeMS > 0 || l.Depth > 0 || l.Nodes > 0
	case TypeGo:
		j.kind = jobPlay
		j.ponder = r.Ponder
		if r.BTime == nil || r.WTime == nil {
			return nil, errorf(CodeInvalidField, "go needs btime and wtime (milliseconds)")
		}
		if r.Byoyomi != nil && (r.BInc != nil || r.WInc != nil) {
			return nil, errorf(CodeInvalidField, "byoyomi and binc/winc cannot be used together")
		}
		var clk usi.Clock
		var err *Error
		get := func(field string, v *int64) time.Duration {
			if v == nil || err != nil {
				return 0
			}
			var d time.Duration
			d, err = ms(field, *v, caps.MaxClock)
			return d
		}
		clk.BTime, clk.WTime = get("btime", r.BTime), get("wtime", r.WTime)
		clk.Byoyomi, clk.BInc, clk.WInc = get("byoyomi", r.Byoyomi), get("binc", r.BInc), get("winc", r.WInc)
		if err != nil {
			return nil, err
		}
		if dialect != nil && !dialect.Byoyomi && r.Byoyomi != nil {
			return nil, errorf(CodeInvalidField, "byoyomi: %s clocks have increments (binc, winc) and movestogo", g.Name())
		}
		if r.MovesToGo != nil {
			if *r.MovesToGo < 1 || *r.MovesToGo > 1000 {
				return nil, errorf(CodeInvalidField, "movestogo %d: want 1..1000", *r.MovesToGo)
			}
			j.movesToGo = *r.MovesToGo
		}
		if r.Depth != nil {
			if *r.Depth < 1 || *r.Depth > caps.MaxDepth {
				return nil, errorf(CodeInvalidField, "depth %d: want 1..%d", *r.Depth, caps.MaxDepth)
			}
			j.depth = *r.Depth
		}
		if r.Random != nil {
			if _, ok := pos.Position.(game.Lister); !ok {
				return nil, errorf(CodeInvalidField, "random: %s positions do not list their moves", g.Name())
			}
			if *r.Random < 0 || *r.Random > 100 {
				return nil, errorf(CodeInvalidField, "random %d: want 0..100", *r.Random)
			}
			j.random = *r.Random
		}
		j.clock = &clk
	case TypeMate:
		j.kind = jobMate
		d, err := ms("timeout_ms", r.TimeoutMS, caps.MaxMateTime)
		if err != nil {
			return nil, err
		}
		if d == 0 {
			d = min(10*time.Second, caps.MaxMateTime)
		}
		j.mate = d
		j.mateIn = 10
		if r.MateIn != nil {
			if *r.MateIn < 1 || *r.MateIn > 100 {
				return nil, errorf(CodeInvalidField, "mate_in %d: want 1..100", *r.MateIn)
			}
			j.mateIn = *r.MateIn
		}
	}
	return j, nil
}

// mateEngine is the engine for a mate request that names none.
func (c *Service) mateEngine() string {
	if c.MateEngine != "" || c.Pool == nil {
		return cmp.Or(c.MateEngine, c.DefaultEngine)
	}
	for _, n := range c.Pool.Engines() {
		if p := c.Pool.Profile(n); p != nil && p.Checkmate {
			return n
		}
	}
	return c.DefaultEngine
}

// searchPlan is how a job is put to a particular engine: the go command it
// takes, plus what usid must enforce itself because the engine does not
// honour the native parameter (its profile says which).
type searchPlan struct {
	cmd       usi.Go
	stopAfter time.Duration // usid stops the search after this long (0: never)
	stopDepth int           // ... or once an info line reaches this depth
	stopNodes int64         // ... or this many nodes
	watchdog  time.Duration // past this, the engine is deemed hung
	emulated  []string      // the limits usid enforces itself
	capped    []string      // play: the request's own caps on the move (Event.Capped)
	// timeBound is how long the search may take by the client's own
	// limit (movetime, a mate's timeout), taken from the caller's budget
	// whole as it starts; 0: none, the budget is charged as it goes.
	timeBound time.Duration
	// limited: the time bound was cut to the caller's balance (cutTo).
	limited bool
}

// cutTo cuts the plan's time bound to d, the caller's engine time left
// (issue 35): the engine's own time (movetime, go mate's) becomes d, and
// usid stops the search at d where it keeps the time, or a little after
// where the engine does, in case it overruns its own.
func (p *searchPlan) cutTo(d time.Duration, margin time.Duration) {
	d = max(d, time.Millisecond) // a movetime of 0 would be no limit
	native := false
	if p.cmd.MoveTime > 0 {
		p.cmd.MoveTime, native = d, true
	}
	if p.cmd.Mate && p.cmd.MateTime > 0 {
		p.cmd.MateTime, native = d, true
	}
	p.stopAfter = d
	if native {
		p.stopAfter = d + budgetGrace
	}
	p.watchdog = p.stopAfter + margin
	p.timeBound, p.limited = d, true
}

// budgetGrace is how long past a cut native time usid waits for the
// engine's own answer before it stops the search.
const budgetGrace = 300 * time.Millisecond

func (c *Service) plan(j *job, prof *probe.Profile) (searchPlan, *Error) {
	var p searchPlan
	margin := c.Caps.WatchdogMargin
	native := func(param string) bool { return prof.Goes(param) == probe.Native }
	switch j.kind {
	case jobMate:
		if !prof.Checkmate {
			return p, nil // answered notimplemented without asking
		}
		p.cmd = usi.Go{Mate: true, MateTime: j.mate}
		if j.mateInMoves {
			p.cmd = usi.Go{Mate: true, MateMoves: j.mateIn}
		}
		p.timeBound = j.mate
		p.stopAfter = j.mate + margin/2 // in case the engine ignores its own time
		p.watchdog = j.mate + margin
	case jobPlay:
		if prof.MateOnly {
			return p, errorf(CodeUnsupported, "engine %s only solves mates; use mate, or another engine", j.engine)
		}
		clk := *j.clock
		if (clk.BInc > 0 || clk.WInc > 0) && !native("binc") {
			return p, errorf(CodeUnsupported, "engine %s does not take binc/winc; use byoyomi", j.engine)
		}
		p.cmd = usi.Go{Clock: &clk, Ponder: j.ponder, MovesToGo: j.movesToGo}
		if j.depth > 0 {
			p.capped = append(p.capped, "depth")
			if native("depth") {
				p.cmd.Depth = j.depth
			} else {
				p.stopDepth = j.depth
				p.emulated = append(p.emulated, "depth")
			}
		}
		own := clk.BTime
		if j.pos.SideToMove() == game.White {
			own = clk.WTime
		}
		p.watchdog = min(own+clk.Byoyomi+clk.BInc+clk.WInc+margin, c.Caps.MaxAnalysis+margin)
		if j.ponder {
			p.watchdog = c.Caps.MaxAnalysis + margin
		}
	case jobAnalyze:
		if prof.MateOnly {
			return p, errorf(CodeUnsupported, "engine %s only solves mates; use mate, or another engine", j.engine)
		}
		l := j.limits
		bound := time.Duration(0) // usid's own time bound, when it has one
		if l.MoveTimeMS > 0 {
			d := time.Duration(l.MoveTimeMS) * time.Millisecond
			if native("movetime") {
				p.cmd.MoveTime = d
			} else {
				// usid's own timer, then stop: more exact than Shogidokoro's
				// "byoyomi d" form, which some engines stretch by a second.
				p.emulated = append(p.emulated, "movetime")
			}
			bound = d
			p.timeBound = d
		}
		if l.Depth > 0 {
			if native("depth") {
				p.cmd.Depth = l.Depth
			} else {
				p.stopDepth = l.Depth
				p.emulated = append(p.emulated, "depth")
				if !prof.ReportsDepth && bound == 0 {
					// Nothing to count depth by: the engine is stopped by time.
					bound = c.Caps.MaxMoveTime
				}
			}
		}
		if l.Nodes > 0 {
			if native("nodes") {
				p.cmd.Nodes = l.Nodes
			} else {
				p.stopNodes = l.Nodes
				p.emulated = append(p.emulated, "nodes")
				if !prof.ReportsNodes && bound == 0 {
					bound = c.Caps.MaxMoveTime
					if prof.NPS > 0 { // the probe's speed, with room to spare
						bound = min(bound, time.Duration(float64(l.Nodes)/float64(prof.NPS)*2*float64(time.Second))+time.Second)
					}
				}
			}
		}
		if p.cmd.MoveTime == 0 && p.cmd.Depth == 0 && p.cmd.Nodes == 0 {
			p.cmd.Infinite = true
		}
		switch {
		case bound > 0 && p.cmd.MoveTime == 0:
			p.stopAfter = bound
			p.watchdog = bound + margin
		case bound > 0:
			p.watchdog = bound + margin
		default:
			// "Until stop", or depth/nodes that could take forever: the cap.
			p.stopAfter = c.Caps.MaxAnalysis
			p.watchdog = c.Caps.MaxAnalysis + margin
		}
	}
	return p, nil
}

// runSearch runs j on the leased engine, sends its events through emit, and
// returns the terminal event (already emitted) and whether the engine should
// be discarded rather than reused. Cancelling ctx stops the search; its
// bestmove still comes. started, if not nil, learns the search once it runs.
func (c *Service) runSearch(ctx context.Context, lease *pool.Lease, j *job, emit func(*Event), started func(*usi.Search)) (term *Event, discard bool) {
	defer func() { emit(term) }()
	eng := lease.Engine()
	prof := lease.Profile()
	if prof.Game() != j.pos.GameName() {
		return errorEvent(j.id, gameMismatch(j, prof.Game())), false
	}
	if err := no960(j, prof); err != nil {
		return errorEvent(j.id, err), false
	}
	p, perr := c.plan(j, prof)
	if perr != nil {
		return errorEvent(j.id, perr), false
	}
	if j.kind == jobMate && !prof.Checkmate {
		return &Event{Type: EventCheckmate, ID: j.id, Result: string(usi.MateNotImplemented), Moves: []string{}}, false
	}
	if j.kind == jobAnalyze {
		name, ok := lease.HasOption("USI_MultiPV")
		if !ok && j.multipv > 1 {
			return errorEvent(j.id, errorf(CodeUnsupported, "engine %s has no MultiPV option", lease.Name())), false
		}
		// Most searches want the value the engine already has: skip the line.
		if cur, _ := eng.OptionValue(name); ok && cur != strconv.Itoa(j.multipv) {
			if err := lease.SetManagedOption(name, strconv.Itoa(j.multipv)); err != nil {
				return errorEvent(j.id, errorf(CodeEngineError, "setting MultiPV: %v", err)), true
			}
		}
	}
	if prof.Chess960 {
		// Every search of an engine that has UCI_Chess960 says which
		// castling the engine speaks.
		if err := lease.Chess960(j.pos.Variant() == variant960); err != nil {
			return errorEvent(j.id, errorf(CodeEngineError, "setting UCI_Chess960: %v", err)), true
		}
	}
	if j.kind != jobMate {
		if err := lease.SearchMode(j.kind == jobAnalyze); err != nil {
			return errorEvent(j.id, errorf(CodeEngineError, "setting the analysis mode: %v", err)), true
		}
	}
	who := CallerOf(ctx)
	// Before the meter: the new game is the engine's setting up, not the search.
	if who.FreshGame {
		if err := lease.NewGame(); err != nil {
			return errorEvent(j.id, errorf(CodeEngineError, "starting a new game: %v", err)), true
		}
	}
	// The budget is checked here, with the engine in hand, not when the
	// request arrived: a search that waited in the queue meanwhile may
	// find it spent.
	m, berr := startMeter(ctx, who, p.timeBound, p.cmd.Ponder)
	if berr != nil {
		return errorEvent(j.id, berr), false
	}
	if m.cut {
		p.cutTo(m.taken, c.Caps.WatchdogMargin)
	}
	var preempted, budgetOut, yielded atomic.Bool
	if j.historyRepeats() {
		lease.EndGame() // the engine's hash may carry the repetition: not into the next lease (cache.go)
	}
	if sc, ok := eng.ScoreScale(); ok {
		j.scale = &sc
	}
	if d := eng.Dialect(); d != nil && d.PassCommand && j.pos.CheckMove(usi.MovePass) == nil {
		p.cmd.Pass = true // the side to move must pass: UOI says "pass <position>", not go
	}
	searched := time.Now() // go: where an emulated nodes limit's count starts
	s, err := lease.Go(ctx, enginePosition(j, eng.Dialect()), p.cmd)
	if err != nil {
		m.settle(true) // nothing searched: all comes back
		if errors.Is(err, context.Canceled) {
			return errorEvent(j.id, errorf(CodeCancelled, "stopped before the search started")), false
		}
		return errorEvent(j.id, errorf(CodeEngineError, "starting the search: %v", err)), true
	}
	// The engine time, settled with the caller and reported (Timing)
	// before the terminal event goes out.
	defer func() {
		d := m.settle(preempted.Load())
		if t := timingOf(ctx); t != nil {
			t.Search = d
		}
	}()
	if started != nil {
		started(s)
	}
	// stoppedByUs: usid, not the engine, ended the search (a timer, an
	// emulated limit, the client's stop). A mate search ended that way has
	// proven nothing, whatever the engine says.
	var stoppedByUs atomic.Bool
	stop := func() {
		stoppedByUs.Store(true)
		s.Stop()
	}
	context.AfterFunc(ctx, func() { stoppedByUs.Store(true) })
	if p.stopAfter > 0 {
		t := time.AfterFunc(p.stopAfter, stop)
		defer t.Stop()
	}
	var hung atomic.Bool
	wd := time.AfterFunc(p.watchdog, func() {
		hung.Store(true)
		c.Logger.Warn("search past its limit; stopping it", "id", j.id, "engine", lease.Name(), "limit", p.watchdog)
		stop()
	})
	defer wd.Stop()
	// A stopped process (SIGSTOP, a debugger) never answers, and a search
	// bounded by depth or nodes has no timer that would notice before the
	// watchdog: look at the process once a second, and kill it if frozen.
	var frozen atomic.Bool
	watched := make(chan struct{})
	defer close(watched)
	// A Background search gives way to an interactive caller waiting for
	// the kind: stopped at once, answered preempted, searched again later.
	var urgent <-chan struct{}
	if who.Class == pool.Background && !who.NoPreempt {
		urgent = lease.Urgent()
	}
	// A search without a time bound takes its engine time as it goes: when
	// what it took runs out it takes more, and is stopped when its
	// caller's balance is spent.
	var tick <-chan time.Time
	var tk *time.Timer
	var budgetWait atomic.Int64
	if p.timeBound == 0 && who.Budget != nil {
		tk = time.NewTimer(m.until())
		defer tk.Stop()
		tick = tk.C
	}
	// Pondering gives way, like an idle lease, to a caller waiting for the
	// kind (Lease.Wanted): it is the engine thinking on the human's time,
	// which nobody asked for; the game searches afresh at the human's move.
	// From ponderhit on, the search is the engine's move and is charged.
	var hit, wanted <-chan struct{}
	if p.cmd.Ponder {
		hit, wanted = s.Hit(), lease.Wanted()
	}
	onHit := func() {
		hit, wanted = nil, nil
		if wait := m.hit(); wait > 0 {
			budgetWait.Store(int64(wait))
			budgetOut.Store(true)
			stop()
			tick = nil
		} else if tk != nil {
			tk.Reset(m.until()) // the engine's own time runs from now
		}
	}
	go func() {
		t := time.NewTicker(c.frozenCheck())
		defer t.Stop()
		for {
			select {
			case <-watched:
				return
			case <-tick:
				if wait := m.more(); wait > 0 {
					budgetWait.Store(int64(wait))
					budgetOut.Store(true)
					stop()
					tick = nil
				} else {
					tk.Reset(m.until())
				}
			case <-hit:
				onHit()
			case <-wanted:
				select {
				case <-hit: // the human's move came too: the engine's turn
					onHit()
				default:
					yielded.Store(true)
					stop()
					hit, wanted = nil, nil
				}
			case <-urgent:
				preempted.Store(true)
				stop()
				urgent = nil
			case <-t.C:
				if lease.Frozen() {
					frozen.Store(true)
					c.Logger.Warn("engine process stopped mid-search; killing it", "id", j.id, "engine", lease.Name(), "pid", eng.PID())
					eng.Kill()
					return
				}
			}
		}
	}()

	var nodes *nodeStop // an emulated nodes limit, by the engine's speed
	if p.stopNodes > 0 {
		nodes = newNodeStop(p.stopNodes, prof.NPS, searched, stop)
		defer nodes.close()
	}
	bg := context.Background()
	lines := map[int]*Event{} // the last line per multipv, for the cache
	var reached int64         // the nodes searched, as the engine last said
	scored := false           // some line had an evaluation
	var last usi.Info         // the last scored line of the best move (a chess mate's line)
	// Each line is converted and emitted on the engine's stdout reader as
	// it is parsed (Deliver): no hand-off to this goroutine per line. The
	// state above is read after Wait, which returns after the last call.
	// An engine whose scores are from another side than the side to move
	// (the probe's score_side) has every line turned here, before anything
	// reads it: events, the cache, a chess mate's check, and through them
	// REST answers, game analyses, games and broadcasts.
	flip := prof.ScoresFlipped(j.pos.SideToMove())
	s.Deliver(func(in *usi.Info, more bool) {
		if flip {
			in.FromOtherSide(j.scale)
		}
		if (p.stopDepth > 0 && in.Has(usi.InfoPV) && in.Depth >= p.stopDepth) || (p.stopNodes > 0 && in.Nodes >= p.stopNodes) {
			stop()
		}
		if nodes != nil {
			nodes.seen(in, time.Now(), searched)
		}
		reached = max(reached, in.Nodes)
		scored = scored || in.Has(usi.InfoScore)
		if in.Has(usi.InfoScore) && in.MultiPV <= 1 {
			last = *in
		}
		if ev := c.infoEvent(j, in); ev != nil {
			if j.kind == jobAnalyze && len(ev.PV) > 0 && ev.Score != nil {
				lines[ev.MultiPV] = ev
			}
			ev.held = j.flush != nil
			emit(ev)
		}
		if !more && j.flush != nil {
			j.flush()
		}
	})
	res, err := s.Wait(bg)
	if err != nil {
		switch {
		case frozen.Load():
			return errorEvent(j.id, errorf(CodeEngineError, "the engine's process was stopped mid-search; it is being replaced")), true
		case j.kind == jobMate && errors.Is(err, usi.ErrTimeout):
			// Engines may ignore stop during a mate search: past its time,
			// the answer is "timeout", and the engine is replaced.
			return &Event{Type: EventCheckmate, ID: j.id, Result: string(usi.MateTimeout), Moves: []string{}}, true
		case errors.Is(err, usi.ErrTimeout):
			return errorEvent(j.id, errorf(CodeEngineError, "the engine did not answer stop in time; it is being replaced")), true
		case errors.Is(err, usi.ErrClosed):
			return errorEvent(j.id, errorf(CodeShuttingDown, "the engine was shut down")), true
		default:
			return errorEvent(j.id, errorf(CodeEngineError, "the engine failed: %v", err)), true
		}
	}
	if hung.Load() {
		discard = true // it answered, but only when prodded: don't trust it with the next search
	}
	if preempted.Load() {
		return errorEvent(j.id, errorf(CodePreempted, "the engine went to an interactive caller; search again")), discard
	}
	if yielded.Load() {
		return errorEvent(j.id, errorf(CodePreempted, "pondering gave the engine to a caller waiting for it; search again")), discard
	}
	if budgetOut.Load() && j.kind == jobAnalyze && j.bounded {
		// Stopped short of the client's own limit: not its answer. (An
		// analysis until stop, or a move of a game, ends as if stopped.)
		return errorEvent(j.id, budgetSpent(time.Duration(budgetWait.Load()), "this client's engine time ran out before the search reached its limit")), discard
	}
	term = c.resultEvent(j, res, stoppedByUs.Load(), &last)
	// Cut to the budget as it started, or stopped when it ran out.
	term.LimitedByBudget = (p.limited || budgetOut.Load()) && (term.Type == EventBestMove || term.Type == EventCheckmate)
	if term.Type == EventBestMove {
		// No evaluation, and the engine answered by itself: its book, if
		// it answered well before its movetime; at the end of it, a search
		// that finished no iteration (starved of CPU), which is no book.
		bare := !scored && !stoppedByUs.Load() && !j.pos.NoMove(term.Move)
		late := p.cmd.MoveTime > 0 && time.Since(searched) >= p.cmd.MoveTime/2
		term.Emulated, term.Capped, term.Nodes = p.emulated, slices.Concat(p.capped, term.Capped), reached
		term.Book, term.Unscored = bare && !late, bare && late
		c.checkNative(lease, p, reached)
	}
	if term.Type == EventError {
		discard = true // an illegal move or a false mate: not trusted again
	}
	if j.kind == jobAnalyze && !hung.Load() {
		c.toCache(j, lines, term)
	}
	return term, discard
}

// infoEvent converts an engine info line; lines with nothing a client shows
// (currmove chatter) give nil.
func (c *Service) infoEvent(j *job, in *usi.Info) *Event {
	if !in.Has(usi.InfoDepth) && !in.Has(usi.InfoPV) && !in.Has(usi.InfoScore) && !in.Has(usi.InfoNodes) && !in.Has(usi.InfoString) {
		return nil
	}
	// One allocation for the event and what it points to; in itself is
	// the engine reader's (usi.Search.Deliver), so nothing may point into it.
	a := new(struct {
		ev    Event
		score Score
		v     int
		wdl   [3]int
	})
	ev := &a.ev
	*ev = Event{Type: EventInfo, ID: j.id, MultiPV: max(in.MultiPV, 1), Depth: in.Depth, SelDepth: in.SelDepth,
		Nodes: in.Nodes, NPS: in.NPS, TimeMS: in.Time, Hashfull: in.Hashfull, PV: in.PV, Text: in.Text}
	if in.Has(usi.InfoScore) {
		if in.Score.Scaled {
			ev.Score = j.scoreOf(in.Score)
		} else {
			a.v = in.Score.Value
			a.score = scoreIn(in.Score, &a.v)
			ev.Score = &a.score
		}
		switch in.Score.Bound {
		case usi.LowerBound:
			ev.Bound = "lower"
		case usi.UpperBound:
			ev.Bound = "upper"
		}
	}
	if in.Has(usi.InfoWDL) {
		a.wdl = in.WDL
		ev.WDL = a.wdl[:]
	}
	if len(in.PV) > 0 {
		// Every line a client is shown is legal in its game: an engine's
		// bad move cuts it short, and its notation with it.
		ev.PV = in.PV[:j.pos.Legal(in.PV)]
		if j.kif {
			j.setPVNotation(ev, ev.PV)
		}
	}
	return ev
}

// enginePosition is the position command's payload for an engine of
// dialect d: the start and the moves, or the position reached alone where
// the dialect takes no moves (UOI) or the game says engines misread the
// moves (game.Reached: a pass inside an othello move list).
func enginePosition(j *job, d *usi.Dialect) usi.Position {
	r, ok := j.pos.Position.(game.Reached)
	if (d == nil || !d.PositionOnly) && (!ok || !r.SendReached()) || len(j.pos.USI.Moves) == 0 {
		return j.pos.USI
	}
	return usi.NewPosition(j.pos.Game().Keyword(), j.pos.Text(), nil)
}

// scoreOf is an engine's score as clients get it. A bare score in the
// engine's declared scale (othello's "score 41.0") keeps its number
// (Points, Scale) and is also given in hundredths of the game's unit (CP):
// a disc difference as is, a win probability through the game's win-rate
// curve, so that the eval bar and the verdicts read every engine alike.
func (j *job) scoreOf(s usi.Score) *Score {
	v := s.Value
	if s.Scaled {
		pts := s.Points
		sc := &Score{CP: &v, Points: &pts}
		if j.scale != nil {
			sc.Scale = string(j.scale.Type)
			if j.scale.Type == usi.ScoreWP && j.scale.Max > j.scale.Min {
				p := min(max((pts-j.scale.Min)/(j.scale.Max-j.scale.Min), 0.001), 0.999)
				cp := int(math.Round(j.pos.Game().WinRateScale() * math.Log(p/(1-p))))
				sc.CP = &cp
			}
		}
		return sc
	}
	return scoreOf(s)
}

func scoreOf(s usi.Score) *Score {
	v := s.Value
	sc := scoreIn(s, &v)
	return &sc
}

// scoreIn is a score that is not Scaled as clients get it, its number in
// *v (s.Value).
func scoreIn(s usi.Score, v *int) Score {
	if !s.Mate {
		return Score{CP: v}
	}
	sc := Score{Mate: v}
	switch s.MateSign {
	case '+':
		sc.MateSign = "+"
	case '-':
		sc.MateSign = "-"
	case 0:
	default:
		sc.MateSign = string(s.MateSign)
	}
	return sc
}

// resultEvent turns the engine's answer into the terminal event, checking it
// with the rules first: an illegal best move or a false mate never reaches
// a client.
func (c *Service) resultEvent(j *job, res usi.Result, stoppedByUs bool, last *usi.Info) *Event {
	if j.kind == jobMate && j.mateInMoves {
		return c.bestMoveMateEvent(j, res, stoppedByUs, last)
	}
	if j.kind == jobMate {
		if res.Checkmate == nil {
			// An engine that answers go mate with bestmove has no mate search.
			return &Event{Type: EventCheckmate, ID: j.id, Result: string(usi.MateNotImplemented)}
		}
		ev := &Event{Type: EventCheckmate, ID: j.id, Result: string(res.Checkmate.Result)}
		if stoppedByUs && res.Checkmate.Result == usi.NoMate {
			ev.Result = string(usi.MateTimeout) // stopped: nothing was proven
		}
		if res.Checkmate.Result == usi.MateFound {
			_, proof, err := j.pos.Mate(res.Checkmate.Moves, -1)
			if err != nil {
				c.Logger.Warn("engine sent a false mate line", "id", j.id, "line", res.Checkmate.Moves, "err", err)
				return errorEvent(j.id, errorf(CodeEngineError, "the engine's mate line failed verification: %v", err))
			}
			ev.Moves, ev.Verified = res.Checkmate.Moves, proof
			if j.kif {
				j.setMovesNotation(ev, ev.Moves)
			}
		}
		return ev
	}
	if res.BestMove == nil {
		return errorEvent(j.id, errorf(CodeEngineError, "the engine answered go with checkmate"))
	}
	bm := res.BestMove
	ev := &Event{Type: EventBestMove, ID: j.id, Move: bm.Move}
	b := j.pos
	if b.NoMove(bm.Move) {
		return ev
	}
	if err := b.CheckMove(bm.Move); err != nil {
		return errorEvent(j.id, errorf(CodeEngineError, "the engine's best move %q is illegal: %v", clip(bm.Move), err))
	}
	if j.kif {
		j.setMoveNotation(ev, bm.Move)
	}
	if j.random > 0 && rand.IntN(100) < j.random {
		// A beginner's move: any legal one (Lister: newJob checked it).
		moves := b.Position.(game.Lister).LegalMoves()
		ev.Move, ev.Capped = moves[rand.IntN(len(moves))], []string{"random"}
		if j.kif {
			ev.MoveKIF, ev.MoveSAN = "", ""
			j.setMoveNotation(ev, ev.Move)
		}
		return ev
	}
	if bm.Ponder != "" && b.PonderOK(bm.Move, bm.Ponder) {
		ev.PonderMv = bm.Ponder
	}
	return ev
}

// acquireError words an Acquire failure as a client error.
func acquireError(engine string, err error) *Error {
	var ue *pool.UnavailableError
	switch {
	case errors.Is(err, pool.ErrUnknownEngine):
		return errorf(CodeUnknownEngine, "no engine named %q", clip(engine))
	case errors.Is(err, pool.ErrQueueFull):
		return errorf(CodeQueueFull, "too many requests wait for engine %s; retry later", engine)
	case errors.As(err, &ue):
		// Whole seconds, rounded up: the text and the Retry-After header
		// announce the same wait, never one shorter than the pool's.
		wait := max(time.Second, (ue.RetryAfter + time.Second - 1).Truncate(time.Second))
		e := errorf(CodeUnavailable, "engine %s keeps failing; retry in %ds", engine, int(wait.Seconds()))
		if ue.Reason != "" {
			e.Message += ": " + ue.Reason
		}
		e.Retry = wait
		return e
	case errors.Is(err, pool.ErrClosed):
		return errorf(CodeShuttingDown, "the server is shutting down")
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(CodeNoEngine, "no %s engine became free in time", engine)
	}
	return errorf(CodeNoEngine, "no engine: %v", err)
}
