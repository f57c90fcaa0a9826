package review

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/usid/usid/game"
	"github.com/usid/usid/session"
)

// Ply is one position of a game as analysed, and the move played from it.
type Ply struct {
	Ply int `json:"ply"` // moves played before it: 0 is the start
	// Position is the position's text, written in its game's field
	// ("sfen" for shogi, "fen" for chess: see MarshalJSON).
	Position   string `json:"-"`
	field      string
	SideToMove string `json:"side_to_move"` // b or w
	// Eval is the engine's evaluation from the side that moves first
	// (shogi's Black, chess's White), not the side to move's; WinRate is
	// that side's win rate on the game's curve (see Judge).
	Eval        *session.Score `json:"eval,omitempty"`
	WinRate     *float64       `json:"winrate,omitempty"`
	BestMove    string         `json:"bestmove,omitempty"` // a USI or UCI move, "resign" or "win"
	BestMoveKIF string         `json:"bestmove_kif,omitempty"`
	BestMoveSAN string         `json:"bestmove_san,omitempty"`
	PV          []string       `json:"pv,omitempty"`
	PVKIF       []string       `json:"pv_kif,omitempty"`
	PVSAN       []string       `json:"pv_san,omitempty"`
	Depth       int            `json:"depth,omitempty"`
	Nodes       int64          `json:"nodes,omitempty"`
	Emulated    []string       `json:"emulated,omitempty"`
	// LimitedByBudget: the search was cut to the owner's engine time
	// left (a movetime longer than the whole budget's bucket).
	LimitedByBudget bool `json:"limited_by_budget,omitempty"`
	// Cached: the evaluation came from the evaluation cache, not a search.
	Cached bool `json:"cached,omitempty"`
	// Checkmate: the side to move is checkmated (the game's last
	// position). It is evaluated by the rules; no engine is asked.
	Checkmate bool `json:"checkmate,omitempty"`
	// Draw: the game is drawn by the rules in this position (chess: the
	// game's last position, "stalemate", "insufficient_material",
	// "repetition" or "fifty_moves"); its eval is 0, no engine asked.
	Draw string `json:"draw,omitempty"`
	// The move played from this position (absent at the last), with the
	// mover's loss of winning chances and its judgement once both this
	// position and the next have an evaluation.
	Move    string `json:"move,omitempty"`
	MoveKIF string `json:"move_kif,omitempty"`
	MoveSAN string `json:"move_san,omitempty"`
	// BestEval is the evaluation (Black's side) of the position after the
	// engine's best move, searched with the same limits as every position
	// when the move played was another (see Judge).
	BestEval *session.Score `json:"best_eval,omitempty"`
	// WinRateLoss is the mover's drop of win rate (0..1) by playing Move
	// rather than BestMove, the number the thresholds are compared with;
	// Loss is the same drop in winning chances 2·winrate − 1 (2×).
	WinRateLoss *float64 `json:"winrate_loss,omitempty"`
	Loss        *float64 `json:"loss,omitempty"`
	Judgement   string   `json:"judgement,omitempty"`
	// Unjudged says why a move has no judgement although both positions
	// were analysed: "no_evaluation" (a search gave no score, e.g. a book
	// move).
	Unjudged string `json:"unjudged,omitempty"`
}

// View is a job as GET /v1/games/analysis/{id} shows it.
type View struct {
	ID         string               `json:"id"`
	Status     string               `json:"status"`
	Engine     string               `json:"engine"`
	Limits     limitsJSON           `json:"limits"`
	Thresholds Thresholds           `json:"thresholds"`
	Progress   session.GameProgress `json:"progress"`
	// Positions has one entry per position, by ply (0 to the number of
	// moves); null for a position not analysed yet.
	Positions []*Ply `json:"positions"`
	// Summary, once the job has ended done or cancelled (then over the
	// moves judged).
	Summary *Summary   `json:"summary,omitempty"`
	Error   *errorJSON `json:"error,omitempty"`
	// FollowMS, for a followed job (Request.Follow): it is cancelled
	// once nobody has read it for this long.
	FollowMS   int64      `json:"follow_ms,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

type limitsJSON struct {
	MoveTimeMS int64 `json:"movetime_ms,omitempty"`
	Depth      int   `json:"depth,omitempty"`
	Nodes      int64 `json:"nodes,omitempty"`
}

// errorJSON says why a job failed, or why the server cancelled it.
type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Ply     *int   `json:"ply,omitempty"` // the position whose search failed
}

// sub is a WebSocket session following a job.
type sub struct {
	id   string // the analyze_game request's id
	emit func(*session.Event)
}

type job struct {
	m      *Manager
	id     string
	client string
	caller session.Caller // whom its searches are for: client, Background
	engine string
	limits session.Limits
	th     Thresholds
	// notation: the moves' notation is shown (KIF for shogi, SAN for chess).
	notation bool
	// The game (its start and moves, checked; its rules) and its length.
	// Nothing per position is precomputed (store.go).
	g     *gameRec
	plies int
	// over: the game's last position is the end by the rules (checkmate,
	// a draw): evaluated by them, no engine asked.
	over     ending
	parallel int
	// follow is the grace of a followed job (Request.Follow), 0 if not.
	follow time.Duration
	// bytes is what the Manager counts for it: its worst case while it may
	// still grow, its real size once ended. Guarded by the Manager's lock.
	bytes int64

	ctx    context.Context // cancelled: searches stop now
	cancel context.CancelFunc
	ended  chan struct{} // closed by finish

	mu      sync.Mutex
	status  string
	results []*result // by ply, nil until analysed; nil until the first is
	done    int
	next    int   // the next ply to take
	redo    []int // plies handed out and given back (a pause): taken first
	// noMore is closed once no ply is left to hand out in this run (all
	// taken, or the job halts or pauses): workers waiting for a spare
	// engine leave at once.
	noMore       chan struct{}
	noMoreClosed bool
	halt         bool // take no new ply
	// pausing: a search was refused because the owner's engine time is
	// spent; no new ply is taken and the run ends paused (pauseWhy, for
	// pauseWait), then the job queues again.
	pausing   bool
	pauseWait time.Duration
	pauseWhy  *session.Error
	resume    *time.Timer    // a paused job's next look at its owner's budget
	why       *session.Error // why the server cancelled it (nil: the client did), or why it failed
	failed    bool
	failPly   int
	// With Redis: lost, another instance holds the job now; handback, the
	// job goes back to the store unfinished (a drain, a pause).
	lost, handback bool
	// seen is when a followed job was last read (or started); watch
	// cancels it once nobody has for its grace (without Redis: with
	// Redis the lease holder looks at the store's record).
	seen     time.Time
	watch    *time.Timer
	subs     []*sub
	created  time.Time
	started  time.Time
	finished time.Time
	summary  *Summary
	// For the time-left estimate: the last searches' wall times (a ring),
	// searches running now, positions searched and how many of them
	// needed the best move's position searched too.
	recent    [recentSearches]time.Duration
	searches  int
	inflight  int
	searchedN int
	extras    int

	// enc is the View encoded when it stood at encKey (encoded); gone:
	// the Manager holds the job no more, and caches nothing for it.
	enc    *Encoded
	encKey viewKey
	gone   bool
}

// recentSearches is how many search times the time-left estimate looks at.
const recentSearches = 16

// newJob checks req and builds its job (not yet queued).
func (m *Manager) newJob(client string, req *Request) (*job, *session.Error) {
	pos := req.Position
	if req.Record != nil {
		if req.Position != nil {
			return nil, invalid("give position or record, not both")
		}
		p, err := recordPosition(*req.Record, m.svc.Caps.MaxMoves)
		if err != nil {
			return nil, err
		}
		pos = p
	}
	if pos == nil {
		return nil, invalid("position is required: the game's start (sfen, default startpos) and its moves")
	}
	engine := req.Engine
	if engine == "" {
		engine = m.svc.EngineFor(pos)
	}
	limits := req.Limits
	if limits == nil || *limits == (session.Limits{}) {
		// The default: a time per position, which means the same on every
		// engine (a depth is emulated, and slow, on some).
		limits = &session.Limits{MoveTimeMS: m.cfg.DefaultMoveTime.Milliseconds()}
	}
	th := DefaultThresholds()
	if req.Thresholds != nil {
		th = *req.Thresholds
	}
	if err := th.check(); err != nil {
		return nil, err
	}
	r := &session.Request{Position: pos, Engine: engine, Limits: limits, Notation: req.Notation}
	checked, err := m.svc.CheckGameAnalysis(r)
	if err != nil {
		return nil, err
	}
	cfg, ok := m.svc.Pool.Config(engine)
	if !ok {
		return nil, &session.Error{Code: session.CodeUnknownEngine, Message: "no engine named " + quote(engine), MoveIndex: -1}
	}
	if prof := m.svc.Pool.Profile(engine); prof != nil && prof.MateOnly {
		return nil, &session.Error{Code: session.CodeUnsupported, Message: "engine " + engine + " only solves mates; use another engine", MoveIndex: -1}
	}
	g := gameOf(checked)
	all := make([]string, g.plies())
	for i := range all {
		all[i] = g.move(i)
	}
	j := &job{m: m, id: newID(), client: client, engine: engine, limits: *limits, th: th, notation: req.Notation != "",
		g: g, plies: g.plies(), over: g.ending(all), status: StatusQueued, ended: make(chan struct{})}
	j.parallel = max(1, min(m.cfg.MaxParallel, cfg.Instances))
	if req.Follow {
		j.follow = m.cfg.FollowGrace
	}
	j.ctx, j.cancel = context.WithCancel(context.Background())
	return j, nil
}

func invalid(msg string) *session.Error {
	return &session.Error{Code: session.CodeInvalidField, Message: msg, MoveIndex: -1}
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// run analyses the game with j.parallel workers, then ends the job, or,
// when a search found its owner's engine time spent, pauses it.
func (j *job) run() {
	defer j.m.wg.Done()
	j.mu.Lock()
	j.noMore, j.noMoreClosed, j.pausing = make(chan struct{}), false, false
	j.mu.Unlock()
	var wg sync.WaitGroup
	for w := range j.parallel {
		wg.Go(func() { j.work(w) })
	}
	wg.Wait()
	j.mu.Lock()
	if j.pausing && !j.halt && !j.failed {
		wait := j.pauseWait
		j.mu.Unlock()
		j.m.jobPaused(j, wait)
		return
	}
	if j.m.st != nil && (j.lost || j.handback) && !j.failed && j.done < j.plies+1 {
		j.mu.Unlock()
		j.m.endedShared(j)
		return
	}
	status, why := StatusCancelled, j.why
	switch {
	case j.failed:
		status = StatusFailed
	case j.done == j.plies+1:
		status, why = StatusDone, nil
	}
	j.finishLocked(status, why)
	j.mu.Unlock()
	j.m.jobEnded(j)
}

// work analyses positions until none is left or the job halts or pauses.
// Worker 0 always goes on; the others only while the engine kind has a
// spare engine.
func (j *job) work(w int) {
	for {
		ply, ok := j.take(w)
		if !ok {
			return
		}
		res, err := j.analyse(ply)
		switch {
		case err != nil && err.Code == session.CodeTooManyRequests:
			j.pause(ply, err)
			return
		case err != nil:
			j.fail(ply, err)
			return
		case res == nil: // cancelled
			return
		}
		j.store(ply, res)
		if st := j.m.st; st != nil {
			if ok, err := st.put(j.id, ply, res); err != nil {
				// Retried for twice the lease: the job cannot go on (it
				// would end with a hole where the store is read).
				j.m.log.Warn("games: storing a position in redis failed", "job", j.id, "ply", ply, "err", err)
				j.fail(ply, unavailable(err))
				return
			} else if !ok {
				j.lose()
				return
			}
		}
	}
}

func (j *job) closeNoMoreLocked() {
	if !j.noMoreClosed {
		close(j.noMore)
		j.noMoreClosed = true
	}
}

// take returns the next ply to analyse.
func (j *job) take(w int) (int, bool) {
	for {
		j.mu.Lock()
		if j.halt || j.pausing || (len(j.redo) == 0 && j.next > j.plies) {
			j.closeNoMoreLocked()
			j.mu.Unlock()
			return 0, false
		}
		ply := j.next
		if len(j.redo) > 0 {
			ply = j.redo[0]
		}
		if w == 0 || (ply == j.plies && j.over != endNone) || j.m.spare(j.engine) {
			if len(j.redo) > 0 {
				j.redo = j.redo[1:]
			} else {
				j.next++
			}
			if len(j.redo) == 0 && j.next > j.plies {
				j.closeNoMoreLocked()
			}
			j.mu.Unlock()
			return ply, true
		}
		noMore := j.noMore
		j.mu.Unlock()
		t := time.NewTimer(j.m.cfg.SpareCheck)
		select {
		case <-t.C:
		case <-noMore:
			t.Stop()
			return 0, false
		case <-j.ctx.Done():
			t.Stop()
			return 0, false
		}
	}
}

// maxPreempts is how often one position's search gives way to interactive
// callers; after that it keeps its engine once it has one, so that a
// steady trickle of short searches cannot keep a job from progressing (an
// interactive caller then waits for one position's search at most).
const maxPreempts = 2

// analyse evaluates one position: by the rules when it is checkmate, else
// by a search; and, when the move played from it is not the engine's best,
// the position after the best move too, with the same limits (the move's
// judgement compares the two positions reached). It returns nil, nil when
// the job was cancelled meanwhile, and a too_many_requests error when the
// owner's engine time is spent (the position is then analysed again).
func (j *job) analyse(ply int) (*result, *session.Error) {
	if ply == j.plies && j.over != endNone {
		j.m.m.positions.WithLabelValues("rules").Inc()
		return ended(j.over), nil
	}
	moves := make([]string, ply, ply+1)
	for i := range moves {
		moves[i] = j.g.move(i)
	}
	res, err := j.searchAt(moves, searchKey(ply, false))
	if res == nil {
		return nil, err
	}
	j.m.m.positions.WithLabelValues("engine").Inc()
	r := resultOf(res)
	extra := ply < j.plies && r.kind != noScore && j.g.isMove(r.bestmove) && r.bestmove != j.g.move(ply)
	j.mu.Lock()
	j.searchedN++
	if extra {
		j.extras++
	}
	j.mu.Unlock()
	if !extra {
		return r, nil
	}
	after := append(moves, r.bestmove)
	if end := j.g.ending(after); end != endNone {
		r.setBest(ended(end).sideScore()) // the best move mates or draws: no engine is asked
		return r, nil
	}
	res, err = j.searchAt(after, searchKey(ply, true))
	if res == nil {
		return nil, err
	}
	if len(res.Lines) > 0 {
		r.setBest(res.Lines[0].Score)
	}
	return r, nil
}

// searchAt is search, but a position whose side to move has one move,
// which changes nothing on the board (othello's pass), is worth the next
// one, turned round: the search is of that one (engines are not asked
// about the forced move: the UOI draft's are told "pass", not "go", and
// the engines seen answer it without a score).
func (j *job) searchAt(moves []string, key string) (*session.AnalyzeResult, *session.Error) {
	f := j.g.forced(moves)
	if f == "" {
		return j.search(moves, key)
	}
	res, err := j.search(append(moves[:len(moves):len(moves)], f), key)
	if res == nil {
		return nil, err
	}
	return forcedResult(res, f), nil
}

// search runs one search of the position after moves, with the job's
// limits, waiting and retrying as a background job does. It returns nil,
// nil when the job was cancelled meanwhile.
func (j *job) search(moves []string, key string) (_ *session.AnalyzeResult, serr *session.Error) {
	lim := j.limits
	r := &session.Request{Position: j.g.position(moves), Engine: j.engine, Limits: &lim}
	who := j.caller
	who.FreshGame = true // independent searches, as the verdicts were measured
	charged := false
	if st := j.m.st; st != nil {
		// A search done again after another instance lost the job is not
		// charged again.
		charged = st.charge(j.id, key)
		if who.Budget != nil {
			who.Budget = &onceBudget{inner: who.Budget, free: !charged}
		}
		defer func() {
			if charged && serr != nil && serr.Code == session.CodeTooManyRequests {
				st.uncharge(j.id, key) // refused: the budget was spent
			}
		}()
	}
	backoff, retried, preempts, unscored := time.Second, false, 0, false
	for {
		t0 := time.Now()
		j.mu.Lock()
		j.inflight++
		j.mu.Unlock()
		res, err := j.m.search(j.ctx, who, r)
		j.mu.Lock()
		j.inflight--
		if err == nil && j.ctx.Err() == nil {
			j.recent[j.searches%recentSearches] = time.Since(t0)
			j.searches++
		}
		j.mu.Unlock()
		if j.ctx.Err() != nil {
			return nil, nil // stopped: whatever it found honoured no limit
		}
		if err == nil && !unscored && !scored(res) {
			// A bestmove with no score is no evaluation: an engine starved
			// of CPU (a busy machine) answers so when its time runs out
			// before its first iteration ends (session tells it from a
			// book answer by its time, Unscored, where the search had a
			// movetime). Once more, charged as a search; an engine
			// that answers from its book answers so again, at one more
			// search's cost.
			unscored = true
			j.m.m.positions.WithLabelValues("unscored").Inc()
			continue
		}
		if err == nil {
			return res, nil
		}
		switch err.Code {
		case session.CodePreempted:
			// An interactive caller took the engine: queue again, behind it
			// (the search was not charged).
			j.m.m.positions.WithLabelValues("preempted").Inc()
			if preempts++; preempts >= maxPreempts {
				who.NoPreempt = true
			}
		case session.CodeNoEngine, session.CodeQueueFull:
			// Busy engines: a background job waits its turn. (An engine
			// kind that keeps failing, engine_unavailable, fails the job.)
			wait := max(backoff, err.Retry)
			backoff = min(2*backoff, 10*time.Second)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-j.ctx.Done():
				t.Stop()
				return nil, nil
			}
		case session.CodeEngineError:
			// The pool replaces an engine that failed; once more on another.
			if retried {
				return nil, err
			}
			retried = true
		case session.CodeShuttingDown:
			j.stop(err, false)
			return nil, nil
		default:
			return nil, err
		}
	}
}

// scored reports whether res evaluates its position, or could not have (a
// search cut by the owner's budget).
func scored(res *session.AnalyzeResult) bool {
	return res.LimitedByBudget || (len(res.Lines) > 0 && res.Lines[0].Score != nil)
}

// pause gives ply back and ends the run paused: the owner's engine time
// is spent (err says until when).
func (j *job) pause(ply int, err *session.Error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.redo = append(j.redo, ply)
	slices.Sort(j.redo)
	j.pausing, j.pauseWait, j.pauseWhy = true, max(err.Retry, time.Second), err
	j.closeNoMoreLocked()
}

// store records a position's result and tells the job's followers: the
// position, and the one before once its move is judged by this one.
func (j *job) store(ply int, r *result) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.finished.IsZero() {
		return
	}
	if j.results == nil {
		j.results = make([]*result, j.plies+1)
	}
	if j.results[ply] != nil {
		return
	}
	j.results[ply] = r
	j.done++
	if len(j.subs) == 0 {
		return
	}
	var changed []*Ply
	if prev := ply - 1; prev >= 0 && j.results[prev] != nil && j.results[prev].kind != noScore && r.kind != noScore {
		changed = append(changed, j.renderOneLocked(prev))
	}
	changed = append(changed, j.renderOneLocked(ply)) // judged, when the next was there first
	ev := &session.Event{Type: session.EventProgress, Job: j.id, Progress: j.progressLocked()}
	for _, c := range changed {
		b, err := json.Marshal(c)
		if err == nil {
			ev.Positions = append(ev.Positions, b)
		}
	}
	for _, s := range j.subs {
		e := *ev
		e.ID = s.id
		s.emit(&e)
	}
}

// realBytesLocked is what the job holds now.
func (j *job) realBytesLocked() int64 {
	n := jobBytes + gameBytes(j.g.startLen(), j.plies)
	if j.results != nil {
		n += 8*int64(len(j.results)) + 16
		for _, r := range j.results {
			if r != nil {
				n += r.bytes()
			}
		}
	}
	return n
}

// fail ends the job with err (the position ply's search failed).
func (j *job) fail(ply int, err *session.Error) {
	j.mu.Lock()
	if !j.failed && !j.halt {
		j.failed, j.why, j.failPly = true, err, ply
	}
	j.halt = true
	j.closeNoMoreLocked()
	j.mu.Unlock()
	j.m.log.Warn("game analysis failed", "job", j.id, "ply", ply, "code", err.Code, "err", err.Message)
	j.cancel() // the other workers' searches
}

// stop halts j: no new position is taken; with now, the searches running
// are stopped too. why, if the first reason given, is what clients are told.
func (j *job) stop(why *session.Error, now bool) {
	j.mu.Lock()
	if !j.halt {
		j.why = why // the first reason stands
	}
	j.halt = true
	if j.noMore != nil {
		j.closeNoMoreLocked()
	}
	j.mu.Unlock()
	if now {
		j.cancel()
	}
}

// watchFollowers starts the grace of a followed job (in this process,
// without Redis), started at now.
func (j *job) watchFollowers(now time.Time) {
	if j.follow <= 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seen = now
	j.watch = time.AfterFunc(j.follow, j.checkFollowed)
}

// followed notes that the job's owner read it: its grace starts again.
func (j *job) followed() {
	if j.follow <= 0 {
		return
	}
	j.mu.Lock()
	j.seen = time.Now()
	j.mu.Unlock()
}

// checkFollowed cancels a followed job that nobody read for its grace,
// or looks again when its grace since the last read has passed.
func (j *job) checkFollowed() {
	j.mu.Lock()
	if !j.finished.IsZero() {
		j.mu.Unlock()
		return
	}
	if left := j.follow - time.Since(j.seen); left > 0 {
		j.watch.Reset(left)
		j.mu.Unlock()
		return
	}
	j.mu.Unlock()
	j.m.log.Info("game analysis abandoned: nobody followed it", "job", j.id, "grace", j.follow)
	j.m.cancel(j, abandoned(j.follow))
}

// halting reports whether the job takes no new position (it is being
// cancelled, drained or has failed).
func (j *job) halting() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.halt
}

// detach stops sending events to s.
func (j *job) detach(s *sub) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, x := range j.subs {
		if x == s {
			j.subs = append(j.subs[:i:i], j.subs[i+1:]...)
			return
		}
	}
}

// finish ends a job that never ran.
func (j *job) finish(status string, why *session.Error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.finishLocked(status, why)
}

// finishLocked sets the final status and sends the terminal event: a
// game_analysis event (done, cancelled), or an error event (failed).
func (j *job) finishLocked(status string, why *session.Error) {
	if !j.finished.IsZero() {
		return
	}
	j.status, j.why, j.finished = status, why, time.Now()
	j.cancel()
	if j.resume != nil {
		j.resume.Stop()
	}
	if j.watch != nil {
		j.watch.Stop()
	}
	if status != StatusFailed {
		j.summary = summarize(j.renderLocked())
	}
	close(j.ended)
	j.m.m.finished.WithLabelValues(status).Inc()
	for _, s := range j.subs {
		var ev *session.Event
		if status == StatusFailed {
			ev = session.ErrorEvent(s.id, why)
		} else {
			ev = &session.Event{Type: session.EventGameAnalysis, ID: s.id, Status: status,
				Progress: &session.GameProgress{Done: j.done, Total: j.plies + 1}}
			ev.Summary, _ = json.Marshal(j.summary)
			if why != nil {
				ev.Code, ev.Message = why.Code, why.Message
			}
		}
		ev.Job = j.id
		s.emit(ev)
	}
	j.subs = nil
}

func (j *job) finishedAt() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.finished
}

// view shows the job as it stands.
func (j *job) view() *View {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.viewLocked()
}

func (j *job) viewLocked() *View {
	v := &View{ID: j.id, Status: j.status, Engine: j.engine,
		Limits:     limitsJSON{MoveTimeMS: j.limits.MoveTimeMS, Depth: j.limits.Depth, Nodes: j.limits.Nodes},
		Thresholds: j.th,
		Progress:   *j.progressLocked(),
		Positions:  j.renderLocked(),
		Summary:    j.summary, CreatedAt: j.created, FollowMS: j.follow.Milliseconds()}
	if !j.started.IsZero() {
		t := j.started
		v.StartedAt = &t
	}
	if !j.finished.IsZero() {
		t := j.finished
		v.FinishedAt = &t
	}
	why := j.why
	if j.status == StatusPaused {
		why = j.pauseWhy
	}
	if why != nil {
		v.Error = &errorJSON{Code: why.Code, Message: why.Message}
		if j.status == StatusFailed {
			p := j.failPly
			v.Error.Ply = &p
		}
	}
	return v
}

// progressLocked counts the positions and, while the job has not ended,
// estimates the time left: the searches left (the positions left, each
// with the share of positions so far whose best move's position had to be
// searched too) times the time of a search (the median of the last ones,
// with the time per position counted twice among them, so that one slow
// first search — an engine starting — does not set the estimate), divided
// by the searches running now.
func (j *job) progressLocked() *session.GameProgress {
	p := &session.GameProgress{Done: j.done, Total: j.plies + 1}
	if !j.finished.IsZero() {
		return p
	}
	times := make([]time.Duration, 0, recentSearches+2)
	times = append(times, j.recent[:min(j.searches, recentSearches)]...)
	if mt := time.Duration(j.limits.MoveTimeMS) * time.Millisecond; mt > 0 {
		times = append(times, mt, mt)
	}
	if len(times) == 0 {
		return p // a depth or nodes, and no search has ended
	}
	slices.Sort(times)
	per := times[len(times)/2]
	// A position whose best move was not played costs a second search;
	// until a few are known, assume half of them (Laplace's rule).
	extra := float64(j.extras+1) / float64(j.searchedN+2)
	left := float64(p.Total-j.done) * (1 + extra) * float64(per) / float64(max(1, j.inflight))
	ms := int64(left / float64(time.Millisecond))
	p.EstimatedLeftMS = &ms
	return p
}

// MarshalJSON writes the entry with its position in its game's field
// ("sfen", "fen").
func (p *Ply) MarshalJSON() ([]byte, error) {
	type plain Ply
	b, err := json.Marshal((*plain)(p))
	if err != nil || p.field == "" {
		return b, err
	}
	k, _ := json.Marshal(p.field)
	v, _ := json.Marshal(p.Position)
	out := make([]byte, 0, len(b)+len(k)+len(v)+2)
	out = append(out, '{')
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// UnmarshalJSON reads an entry as MarshalJSON writes it.
func (p *Ply) UnmarshalJSON(b []byte) error {
	type plain Ply
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for _, g := range game.All() {
		if v, ok := fields[g.Field()]; ok {
			p.field = g.Field()
			return json.Unmarshal(v, &p.Position)
		}
	}
	return nil
}
