// Package review analyses whole games: every position of a game, each with
// the same limit (by default a time per position, Config.DefaultMoveTime),
// as a background job that outlives the REST request that started it; a
// job started over a WebSocket ends with its connection unless it asked to
// keep (session.GameHandle), and a REST job asked with Request.Follow ends
// once nobody has read it for Config.FollowGrace (its page was closed). It
// takes shogi and chess games; what differs between them is a game
// (game.go). For each position it gives the evaluation from the side that
// moves first (shogi's Black, chess's White), the best move and its line;
// for each move played that is
// not the engine's best, the position after the best move is searched too,
// with the same limits, and the move is judged by comparing the two
// positions reached, which have the same side to move (see Judge for the
// curve and the thresholds); for each side, a summary; while it runs, an
// estimate of the time left.
//
// Every search goes through session.Service.Analyze, the REST analysis
// path, so that validation, caps, emulated limits and everything else
// Analyze does apply to each position; Manager.search is the one place a
// job asks for one (where a pool priority class for background work will
// be passed).
//
// # Jobs
//
// Start checks a request at once (a bad position, limit or engine is
// refused before anything runs) and queues a job. At most
// Config.MaxRunning jobs analyse at a time, the others wait (status
// queued) in order. A running job analyses up to Config.MaxParallel
// positions at once, never more than the engine kind's instances, and past
// the first only while the kind has an idle engine that nobody waits for:
// a game never takes every engine from interactive clients. A client has at
// most Config.MaxPerClient jobs queued or running (more: too_many_requests)
// and the server Config.MaxJobs (more: queue_full). Ended jobs are kept for
// Config.Keep, at most Config.MaxKept of them, then forgotten. Memory is
// counted in bytes (store.go): a client's jobs at most
// Config.MaxBytesPerClient, all jobs Config.MaxBytes; a client's own
// oldest ended jobs are forgotten first to make room for its new one.
//
// Each position's search takes from its owner's engine-time budget
// (session.Caller.Budget) as it starts, as background work: only down to
// the share of the budget kept for its owner's interactive searches
// (Budget.TakeBackground). When the job has spent its part it
// pauses (StatusPaused): it leaves its run slot, looks at the budget again
// after the wait announced (at most Config.PauseCheck), and queues again
// once there is some. A position's search gives way to interactive callers
// at most maxPreempts times, then keeps its engine.
//
// Job ids are 128 random bits (32 hex digits). A job is visible only to the
// client identity that started it (an API key, or the address of an
// anonymous client): to any other, its id is not_found.
//
// # Several instances
//
// With Config.Redis, jobs live in Redis and every instance sharing it
// answers for every job; a job runs on one instance at a time, under a
// lease, and outlives it (shared.go, redis.go). A write Redis did not take
// is retried, never taken as done; a record read back is measured on the
// server and checked as a client's input. Without it, everything is in
// this process.
//
// # Concurrency and ownership
//
// A Manager is safe for concurrent use. It owns its jobs' goroutines: Close
// drains them (the positions being analysed finish within ctx's grace, then
// the jobs end cancelled with shutting_down) and waits for them. Event
// callbacks (session.GameRunner) are called from job goroutines with the
// job's lock held: they must not block or call back into the Manager.
package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

// Config configures a Manager. Zero fields take the defaults shown.
type Config struct {
	Service *session.Service
	// MaxPerClient bounds one client's jobs queued or running (2).
	MaxPerClient int
	// MaxJobs bounds the jobs queued or running over all clients (64).
	MaxJobs int
	// MaxRunning is how many jobs analyse at once; the others wait (4).
	MaxRunning int
	// MaxParallel bounds the positions one job analyses at once (4); it is
	// never more than the engine kind's instances.
	MaxParallel int
	// Keep is how long an ended job stays readable (1h); MaxKept bounds
	// how many are kept (1000), the oldest forgotten first.
	Keep    time.Duration
	MaxKept int
	// DefaultMoveTime is the time per position of a request without
	// limits (1s): the board's default, measured in BENCHMARKS.md.
	DefaultMoveTime time.Duration
	// MaxBytesPerClient bounds the memory of one client's jobs (1 MiB),
	// and MaxBytes that of every job (8 MiB): a job queued, running or
	// paused counts as much as it can come to (its game with every
	// position analysed), an ended job what it holds. To make room for a
	// new job, the client's own oldest ended jobs are forgotten first,
	// then (for MaxBytes) the oldest ended job of the client holding the
	// most; when that is not enough the job is refused.
	MaxBytesPerClient int64
	MaxBytes          int64
	// PauseCheck is how often a job paused for its owner's engine time
	// looks at the owner's balance again, at most (10s): the balance may
	// come back before the refill's announced time (a search that took
	// more than it used gives the rest back).
	PauseCheck time.Duration
	// SpareCheck is how often a job's extra workers look for an idle
	// engine (250ms).
	SpareCheck time.Duration
	// FollowGrace is how long a followed job (Request.Follow) runs on
	// while nobody reads it (10s): longer than a page takes to reload,
	// after which the page that started it is taken to be closed and the
	// job is cancelled (error abandoned). Each Get by its owner starts the
	// grace again.
	FollowGrace time.Duration
	// Redis, when set, keeps the jobs in Redis, shared by every instance
	// using it (shared.go): any instance reads and cancels any job, and a
	// job outlives the instance running it. Nil: in this process only.
	Redis      *RedisConfig
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// DefaultMoveTime is Config.DefaultMoveTime's default.
const DefaultMoveTime = time.Second

// DefaultFollowGrace is Config.FollowGrace's default.
const DefaultFollowGrace = 10 * time.Second

// Statuses of a job.
const (
	StatusQueued  = "queued"
	StatusRunning = "running"
	// StatusPaused: the owner's engine time is spent; the job queues again
	// once it is back (its error says when).
	StatusPaused    = "paused"
	StatusDone      = "done"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// CodeNotFound is the code for a job id that is unknown to the asking
// client (never started, forgotten, or another client's).
const CodeNotFound = "not_found"

// CodeAbandoned is why a followed job (Request.Follow) was cancelled:
// nobody read it for Config.FollowGrace (its page was closed).
const CodeAbandoned = "abandoned"

// Request asks for a game's analysis: POST /v1/games/analysis's body.
type Request struct {
	Position *session.Position `json:"position"`
	// Record is a game record's text (KIF, KI2, CSA, USI, SFEN, read by
	// package kifu; or PGN, read by chess/pgn), instead of Position: its
	// main line is the game.
	Record *string `json:"record"`
	Engine string  `json:"engine"`
	// Limits of each search; none: Config.DefaultMoveTime per position.
	Limits *session.Limits `json:"limits"`
	// Thresholds of the judgements; none: DefaultThresholds.
	Thresholds *Thresholds `json:"thresholds"`
	Notation   string      `json:"notation"`
	// Follow: the job lives only while it is read. Every Get by its owner
	// (the page polling it) keeps it; once nobody has for
	// Config.FollowGrace (the page was closed, not reloaded) it is
	// cancelled with CodeAbandoned. Without it a REST job runs to its end
	// whoever reads it.
	Follow bool `json:"follow"`
}

// Manager runs game analysis jobs.
type Manager struct {
	cfg Config
	svc *session.Service
	log *slog.Logger
	m   *metrics

	mu      sync.Mutex
	jobs    map[string]*job
	active  map[string]int // client -> jobs queued or running
	queue   []*job         // waiting for a run slot, in order
	running map[*job]struct{}
	paused  map[*job]struct{} // waiting for their owners' engine time
	ended   []*job            // oldest first
	// bytes counts every job's memory (job.bytes), clientBytes each
	// client's.
	bytes       int64
	clientBytes map[string]int64
	closing     bool
	wg          sync.WaitGroup // job goroutines
	cutTimer    *time.Timer

	// With Redis (shared.go): the store, whom a job taken from it is for
	// (SetCallers), the jobs started here for a WebSocket and not yet
	// taken, and the loop that renews leases and takes jobs.
	st       *store
	callers  func(client string) session.Caller
	pending  map[string]*job
	kick     chan struct{}
	loopStop chan struct{}
	loopDone chan struct{}
	stopOnce sync.Once

	// encBytes counts the jobs' cached encodings (job.encoded), at most
	// MaxBytes.
	encBytes atomic.Int64
}

// WithDefaults returns cfg with the defaults New applies filled in (the
// values documented on Config's fields).
func (cfg Config) WithDefaults() Config {
	if cfg.MaxPerClient <= 0 {
		cfg.MaxPerClient = 2
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = 64
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 4
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 4
	}
	if cfg.Keep <= 0 {
		cfg.Keep = time.Hour
	}
	if cfg.MaxKept <= 0 {
		cfg.MaxKept = 1000
	}
	if cfg.DefaultMoveTime <= 0 {
		cfg.DefaultMoveTime = DefaultMoveTime
	}
	if cfg.MaxBytesPerClient <= 0 {
		cfg.MaxBytesPerClient = 1 << 20
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 8 << 20
	}
	if cfg.PauseCheck <= 0 {
		cfg.PauseCheck = 10 * time.Second
	}
	if cfg.SpareCheck <= 0 {
		cfg.SpareCheck = 250 * time.Millisecond
	}
	if cfg.FollowGrace <= 0 {
		cfg.FollowGrace = DefaultFollowGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// DefaultMoveTime is the time per position of a request without limits.
func (m *Manager) DefaultMoveTime() time.Duration { return m.cfg.DefaultMoveTime }

// New makes a Manager; Close it. It panics on a Config.Redis that Open
// refuses.
func New(cfg Config) *Manager {
	m, err := Open(cfg)
	if err != nil {
		panic(err)
	}
	return m
}

// Open makes a Manager, or refuses Config.Redis (a malformed URL); Close
// it. With Redis, it takes jobs from the store once SetCallers is called.
func Open(cfg Config) (*Manager, error) {
	cfg = cfg.WithDefaults()
	m := &Manager{cfg: cfg, svc: cfg.Service, log: cfg.Logger, m: newMetrics(cfg.Registerer),
		jobs: map[string]*job{}, active: map[string]int{}, running: map[*job]struct{}{}, paused: map[*job]struct{}{},
		clientBytes: map[string]int64{}}
	if cfg.Redis != nil {
		st, err := newStore(*cfg.Redis)
		if err != nil {
			return nil, err
		}
		st.maxMoves, st.pauseCheck = 1024, cfg.PauseCheck
		if cfg.Service != nil {
			st.maxMoves = max(cfg.Service.Caps.MaxMoves, st.maxMoves)
		}
		m.st, m.pending, m.kick = st, map[string]*job{}, make(chan struct{}, 1)
		m.loopStop, m.loopDone = make(chan struct{}), make(chan struct{})
		go m.loop()
	}
	return m, nil
}

// SetCallers says whom the searches of a job taken from the shared store
// are for, given its owner (the owner's engine-time budget); until it is
// called, this instance takes no job from the store.
func (m *Manager) SetCallers(f func(client string) session.Caller) {
	m.mu.Lock()
	m.callers = f
	m.mu.Unlock()
	if m.st != nil {
		m.wake()
	}
}

// Start checks req and queues a job for who (its Client owns the job; its
// Budget, if set, pays each search's engine time); it returns the job as
// it stands (queued or running).
func (m *Manager) Start(who session.Caller, req *Request) (*View, *session.Error) {
	j, err := m.start(who, req, nil)
	if err != nil {
		return nil, err
	}
	return j.view(), nil
}

// Get returns client's job id as it stands. For a followed job
// (Request.Follow) it counts as following it: the job's grace starts
// again.
func (m *Manager) Get(client, id string) (*View, *session.Error) {
	if m.st != nil {
		return m.viewShared(client, id)
	}
	j := m.find(client, id)
	if j == nil {
		return nil, notFound(id)
	}
	j.followed()
	return j.view(), nil
}

// abandoned is why a followed job nobody read for grace was cancelled.
func abandoned(grace time.Duration) *session.Error {
	return &session.Error{Code: CodeAbandoned, MoveIndex: -1,
		Message: fmt.Sprintf("nobody followed the analysis for %v (the page that started it was closed): it was cancelled; start it again", grace)}
}

// Cancel cancels client's job id and waits, until ctx ends, for it to end
// (a position being searched is stopped; its partial result is dropped).
// It returns the job as it then stands; cancelling an ended job changes
// nothing.
func (m *Manager) Cancel(ctx context.Context, client, id string) (*View, *session.Error) {
	if m.st != nil {
		return m.cancelShared(ctx, client, id)
	}
	j := m.find(client, id)
	if j == nil {
		return nil, notFound(id)
	}
	m.cancel(j, nil)
	select {
	case <-j.ended:
	case <-ctx.Done():
	}
	return j.view(), nil
}

func notFound(id string) *session.Error {
	if len(id) > 40 {
		id = id[:40] + "..."
	}
	return &session.Error{Code: CodeNotFound, Message: "no game analysis " + id + " (unknown, forgotten, or started by another client)", MoveIndex: -1}
}

func (m *Manager) find(client, id string) *job {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(time.Now())
	j := m.jobs[id]
	if j == nil || j.client != client {
		return nil
	}
	return j
}

// For returns the session.GameRunner of one caller, for its WebSocket
// sessions.
func (m *Manager) For(who session.Caller) session.GameRunner { return runner{m, who} }

type runner struct {
	m   *Manager
	who session.Caller
}

func (r runner) StartGame(req *session.Request, emit func(*session.Event)) (session.GameHandle, *session.Error) {
	s := &sub{id: req.ID, emit: emit}
	greq := &Request{Position: req.Position, Record: req.Record, Engine: req.Engine, Limits: req.Limits, Notation: req.Notation}
	if req.Thresholds != nil {
		th := Thresholds(*req.Thresholds)
		greq.Thresholds = &th
	}
	j, err := r.m.start(r.who, greq, s)
	if err != nil {
		return nil, err
	}
	return handle{j, s}, nil
}

type handle struct {
	j *job
	s *sub
}

func (h handle) Cancel() { h.j.m.cancel(h.j, nil) }
func (h handle) Detach() { h.j.detach(h.s) }

// start checks req, then queues a job with s (if not nil) subscribed.
func (m *Manager) start(who session.Caller, req *Request, s *sub) (*job, *session.Error) {
	client := who.Client
	j, err := m.newJob(client, req)
	if err != nil {
		return nil, err
	}
	// The job's searches wait behind interactive callers, and give way to
	// them; their engine time is the client's.
	j.caller = session.Caller{Client: client, Class: pool.Background, Budget: who.Budget}
	if s != nil {
		j.subs = []*sub{s}
	}
	if m.st != nil {
		if err := m.startShared(j, s); err != nil {
			j.cancel()
			return nil, err
		}
		return j, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.sweepLocked(now)
	switch {
	case m.closing:
		return nil, &session.Error{Code: session.CodeShuttingDown, Message: "the server is shutting down", MoveIndex: -1}
	case m.active[client] >= m.cfg.MaxPerClient:
		return nil, &session.Error{Code: session.CodeTooManyRequests, Message: "this client already has the most game analyses it may run at once; wait for one to end or cancel it", MoveIndex: -1, Retry: 10 * time.Second}
	case len(m.queue)+len(m.running)+len(m.paused) >= m.cfg.MaxJobs:
		return nil, &session.Error{Code: session.CodeQueueFull, Message: "too many game analyses are waiting; retry later", MoveIndex: -1, Retry: 30 * time.Second}
	}
	need := worstBytes(j.g.startLen(), j.plies)
	if err := m.makeRoomLocked(client, need); err != nil {
		return nil, err
	}
	j.bytes = need
	j.created = now
	m.jobs[j.id] = j
	m.active[client]++
	m.queue = append(m.queue, j)
	j.watchFollowers(now)
	m.startQueuedLocked()
	m.updateGaugesLocked()
	return j, nil
}

// startQueuedLocked starts queued jobs while run slots are free.
func (m *Manager) startQueuedLocked() {
	for len(m.queue) > 0 && len(m.running) < m.cfg.MaxRunning && !m.closing {
		j := m.queue[0]
		m.queue = slices.Delete(m.queue, 0, 1)
		m.running[j] = struct{}{}
		j.mu.Lock()
		j.status = StatusRunning
		if j.started.IsZero() {
			j.started = time.Now()
		}
		j.mu.Unlock()
		m.wg.Add(1)
		go j.run()
	}
}

// jobEnded is called by a job that has ended (it has sent its terminal
// events): its slot goes to the next queued job.
func (m *Manager) jobEnded(j *job) {
	if m.st != nil {
		m.endedShared(j)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.running, j)
	m.endedLocked(j)
	m.startQueuedLocked()
	m.updateGaugesLocked()
}

func (m *Manager) endedLocked(j *job) {
	if m.active[j.client]--; m.active[j.client] <= 0 {
		delete(m.active, j.client)
	}
	// From its worst case to what it holds.
	j.mu.Lock()
	real := j.realBytesLocked()
	j.mu.Unlock()
	m.countLocked(j, real-j.bytes)
	m.ended = append(m.ended, j)
	m.sweepLocked(time.Now())
}

// countLocked adds d bytes to j's count, its client's and the total.
func (m *Manager) countLocked(j *job, d int64) {
	j.bytes += d
	m.bytes += d
	if m.clientBytes[j.client] += d; m.clientBytes[j.client] <= 0 {
		delete(m.clientBytes, j.client)
	}
}

// sweepLocked forgets ended jobs past Keep, and the oldest past MaxKept.
func (m *Manager) sweepLocked(now time.Time) {
	n := 0
	for n < len(m.ended) && (len(m.ended)-n > m.cfg.MaxKept || now.Sub(m.ended[n].finishedAt()) > m.cfg.Keep) {
		m.forgetLocked(m.ended[n])
		n++
	}
	if n > 0 {
		m.ended = slices.Delete(m.ended, 0, n)
	}
}

// forgetLocked drops an ended job (the caller takes it out of m.ended).
func (m *Manager) forgetLocked(j *job) {
	delete(m.jobs, j.id)
	j.dropEncoding(true)
	m.countLocked(j, -j.bytes)
}

// makeRoomLocked counts need bytes for a new job of client, forgetting
// ended jobs to make room: the client's own oldest first, then the oldest
// of whoever holds the most. It refuses the job when that is not enough.
func (m *Manager) makeRoomLocked(client string, need int64) *session.Error {
	evict := func(owner string) bool {
		for i, j := range m.ended {
			if j.client == owner {
				m.forgetLocked(j)
				m.ended = slices.Delete(m.ended, i, i+1)
				return true
			}
		}
		return false
	}
	for m.clientBytes[client]+need > m.cfg.MaxBytesPerClient && evict(client) {
	}
	if m.clientBytes[client]+need > m.cfg.MaxBytesPerClient {
		return &session.Error{Code: session.CodeTooManyRequests, MoveIndex: -1, Retry: 10 * time.Second,
			Message: fmt.Sprintf("this client's game analyses under way hold as much memory as one client may (%d KiB; this game needs up to %d KiB); wait for one to end or cancel it", m.cfg.MaxBytesPerClient>>10, need>>10)}
	}
	for m.bytes+need > m.cfg.MaxBytes {
		holder, most := "", int64(0)
		for _, j := range m.ended {
			if b := m.clientBytes[j.client]; b > most {
				holder, most = j.client, b
			}
		}
		if holder == "" || !evict(holder) {
			return &session.Error{Code: session.CodeQueueFull, Message: "game analyses under way hold as much memory as the server gives them; retry later", MoveIndex: -1, Retry: 30 * time.Second}
		}
	}
	m.bytes += need
	m.clientBytes[client] += need
	return nil
}

// jobPaused takes a job whose run ended for its owner's engine time out
// of its run slot; it looks at the owner's balance again after wait (at
// most PauseCheck) and queues again once there is some.
func (m *Manager) jobPaused(j *job, wait time.Duration) {
	if m.st != nil {
		m.pausedShared(j, wait)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.running, j)
	j.mu.Lock()
	if j.halt { // cancelled or drained meanwhile
		j.finishLocked(StatusCancelled, j.why)
		j.mu.Unlock()
		m.endedLocked(j)
	} else {
		j.status = StatusPaused
		m.paused[j] = struct{}{}
		j.resume = time.AfterFunc(min(wait, m.cfg.PauseCheck), func() { m.tryResume(j) })
		j.mu.Unlock()
	}
	m.startQueuedLocked()
	m.updateGaugesLocked()
}

// tryResume queues a paused job again when its owner has engine time.
func (m *Manager) tryResume(j *job) {
	var wait time.Duration
	if b := j.caller.Budget; b != nil {
		wait = b.TakeBackground(context.Background(), 0)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.paused[j]; !ok {
		return // cancelled meanwhile
	}
	j.mu.Lock()
	if wait > 0 {
		j.resume = time.AfterFunc(min(wait, m.cfg.PauseCheck), func() { m.tryResume(j) })
		j.mu.Unlock()
		return
	}
	delete(m.paused, j)
	j.status, j.pauseWhy, j.resume = StatusQueued, nil, nil
	j.mu.Unlock()
	m.queue = append(m.queue, j)
	m.startQueuedLocked()
	m.updateGaugesLocked()
}

// cancel ends j: a queued job at once, a running one once its workers have
// stopped. why is the reason given to its clients (nil: the client's own
// cancel).
func (m *Manager) cancel(j *job, why *session.Error) {
	if m.st != nil {
		m.mu.Lock()
		_, pending := m.pending[j.id]
		m.mu.Unlock()
		if pending {
			if res, err := m.st.cancel(j.id, j.client); err == nil && res == "claimed" {
				m.endUnheld(j.id, why)
			}
			return
		}
	}
	m.mu.Lock()
	_, paused := m.paused[j]
	if i := slices.Index(m.queue, j); i >= 0 || paused {
		if paused {
			delete(m.paused, j)
		} else {
			m.queue = slices.Delete(m.queue, i, i+1)
		}
		j.finish(StatusCancelled, why)
		m.endedLocked(j)
		m.updateGaugesLocked()
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	j.stop(why, true)
}

// Close drains: no new job is taken, queued jobs end at once, running jobs
// take no new position and end once the positions being analysed are done;
// a little before ctx's deadline (or when ctx ends) those searches are
// stopped too. Every job ends cancelled with shutting_down. Close waits for
// the jobs' goroutines.
func (m *Manager) Close(ctx context.Context) error {
	why := &session.Error{Code: session.CodeShuttingDown, Message: "the server is shutting down: the analysis was stopped; start it again on another instance", MoveIndex: -1}
	if m.st != nil {
		m.closeShared(ctx, why)
		return nil
	}
	m.mu.Lock()
	m.closing = true
	queued := m.queue
	m.queue = nil
	for j := range m.paused {
		queued = append(queued, j)
	}
	clear(m.paused)
	running := make([]*job, 0, len(m.running))
	for j := range m.running {
		running = append(running, j)
	}
	for _, j := range queued {
		j.finish(StatusCancelled, why)
		m.endedLocked(j)
	}
	m.updateGaugesLocked()
	m.mu.Unlock()
	for _, j := range running {
		j.stop(why, false)
	}
	defer cutBefore(ctx, running, why)()
	m.wg.Wait()
	return nil
}

// cutBefore cuts the searches of jobs short a little before ctx's deadline
// (as the server does for REST searches, so that each job still reports
// how it ended), or when ctx ends; the returned func disarms it.
func cutBefore(ctx context.Context, jobs []*job, why *session.Error) (disarm func()) {
	cut := func() {
		for _, j := range jobs {
			j.stop(why, true)
		}
	}
	var t *time.Timer
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline)
		margin := min(5*time.Second, max(time.Second, left/5))
		t = time.AfterFunc(left-margin, cut)
	}
	stop := context.AfterFunc(ctx, cut)
	return func() {
		if t != nil {
			t.Stop()
		}
		stop()
	}
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// search runs one position's search for client. Every search of a game
// job goes through here, in the pool's Background class: an engine goes to
// any interactive caller first, and a search under way gives way to one
// (session.CodePreempted).
func (m *Manager) search(ctx context.Context, who session.Caller, r *session.Request) (*session.AnalyzeResult, *session.Error) {
	return m.svc.Analyze(session.WithCaller(ctx, who), r)
}

// spare reports whether engine has an idle instance that nobody waits for:
// only then does a job analyse more than one position at once.
func (m *Manager) spare(engine string) bool {
	for _, st := range m.svc.Pool.Status() {
		if st.Name == engine {
			return st.Idle > 0 && st.Queue == 0 && st.Available
		}
	}
	return false
}
