// Package games analyses whole games: every position of a game, each with
// the same limit (by default a time per position, Config.DefaultMoveTime),
// as a background job that outlives the REST request that started it; a
// job started over a WebSocket ends with its connection unless it asked to
// keep (session.GameHandle). For each position it gives the evaluation from
// Black's side, the best move and its line; for each move played that is
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
// Config.Keep, at most Config.MaxKept of them, then forgotten.
//
// Job ids are 128 random bits (32 hex digits). A job is visible only to the
// client identity that started it (an API key, or the address of an
// anonymous client): to any other, its id is not_found.
//
// # Concurrency and ownership
//
// A Manager is safe for concurrent use. It owns its jobs' goroutines: Close
// drains them (the positions being analysed finish within ctx's grace, then
// the jobs end cancelled with shutting_down) and waits for them. Event
// callbacks (session.GameRunner) are called from job goroutines with the
// job's lock held: they must not block or call back into the Manager.
package games

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync"
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
	// SpareCheck is how often a job's extra workers look for an idle
	// engine (250ms).
	SpareCheck time.Duration
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// DefaultMoveTime is Config.DefaultMoveTime's default.
const DefaultMoveTime = time.Second

// Statuses of a job.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// CodeNotFound is the code for a job id that is unknown to the asking
// client (never started, forgotten, or another client's).
const CodeNotFound = "not_found"

// Request asks for a game's analysis: POST /v1/games/analysis's body.
type Request struct {
	Position *session.Position `json:"position"`
	// Record is a game record's text (KIF, KI2, CSA, USI, SFEN; read by
	// package kifu), instead of Position: its main line is the game.
	Record *string `json:"record"`
	Engine string  `json:"engine"`
	// Limits of each search; none: Config.DefaultMoveTime per position.
	Limits *session.Limits `json:"limits"`
	// Thresholds of the judgements; none: DefaultThresholds.
	Thresholds *Thresholds `json:"thresholds"`
	Notation   string      `json:"notation"`
}

// Manager runs game analysis jobs.
type Manager struct {
	cfg Config
	svc *session.Service
	log *slog.Logger
	m   *metrics

	mu       sync.Mutex
	jobs     map[string]*job
	active   map[string]int // client -> jobs queued or running
	queue    []*job         // waiting for a run slot, in order
	running  map[*job]struct{}
	ended    []*job // oldest first
	closing  bool
	wg       sync.WaitGroup // job goroutines
	cutTimer *time.Timer
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
	if cfg.SpareCheck <= 0 {
		cfg.SpareCheck = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// DefaultMoveTime is the time per position of a request without limits.
func (m *Manager) DefaultMoveTime() time.Duration { return m.cfg.DefaultMoveTime }

// New makes a Manager; Close it.
func New(cfg Config) *Manager {
	cfg = cfg.WithDefaults()
	return &Manager{cfg: cfg, svc: cfg.Service, log: cfg.Logger, m: newMetrics(cfg.Registerer),
		jobs: map[string]*job{}, active: map[string]int{}, running: map[*job]struct{}{}}
}

// Start checks req and queues a job for who (its Client owns the job; its
// Charge, if set, is told each search's engine time); it returns the job as
// it stands (queued or running).
func (m *Manager) Start(who session.Caller, req *Request) (*View, *session.Error) {
	j, err := m.start(who, req, nil)
	if err != nil {
		return nil, err
	}
	return j.view(), nil
}

// Get returns client's job id as it stands.
func (m *Manager) Get(client, id string) (*View, *session.Error) {
	j := m.find(client, id)
	if j == nil {
		return nil, notFound(id)
	}
	return j.view(), nil
}

// Cancel cancels client's job id and waits, until ctx ends, for it to end
// (a position being searched is stopped; its partial result is dropped).
// It returns the job as it then stands; cancelling an ended job changes
// nothing.
func (m *Manager) Cancel(ctx context.Context, client, id string) (*View, *session.Error) {
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
	j.caller = session.Caller{Client: client, Class: pool.Background, Charge: who.Charge}
	if s != nil {
		j.subs = []*sub{s}
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
	case len(m.queue)+len(m.running) >= m.cfg.MaxJobs:
		return nil, &session.Error{Code: session.CodeQueueFull, Message: "too many game analyses are waiting; retry later", MoveIndex: -1, Retry: 30 * time.Second}
	}
	j.created = now
	m.jobs[j.id] = j
	m.active[client]++
	m.queue = append(m.queue, j)
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
		j.status, j.started = StatusRunning, time.Now()
		j.mu.Unlock()
		m.wg.Add(1)
		go j.run()
	}
}

// jobEnded is called by a job that has ended (it has sent its terminal
// events): its slot goes to the next queued job.
func (m *Manager) jobEnded(j *job) {
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
	m.ended = append(m.ended, j)
	m.sweepLocked(time.Now())
}

// sweepLocked forgets ended jobs past Keep, and the oldest past MaxKept.
func (m *Manager) sweepLocked(now time.Time) {
	n := 0
	for n < len(m.ended) && (len(m.ended)-n > m.cfg.MaxKept || now.Sub(m.ended[n].finishedAt()) > m.cfg.Keep) {
		delete(m.jobs, m.ended[n].id)
		n++
	}
	if n > 0 {
		m.ended = slices.Delete(m.ended, 0, n)
	}
}

// cancel ends j: a queued job at once, a running one once its workers have
// stopped. why is the reason given to its clients (nil: the client's own
// cancel).
func (m *Manager) cancel(j *job, why *session.Error) {
	m.mu.Lock()
	if i := slices.Index(m.queue, j); i >= 0 {
		m.queue = slices.Delete(m.queue, i, i+1)
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
	m.mu.Lock()
	m.closing = true
	queued := m.queue
	m.queue = nil
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
	cut := func() {
		for _, j := range running {
			j.stop(why, true)
		}
	}
	if deadline, ok := ctx.Deadline(); ok {
		// As the server does for REST searches: stop them a little before
		// the grace ends, so that each job still reports how it ended.
		left := time.Until(deadline)
		margin := min(5*time.Second, max(time.Second, left/5))
		t := time.AfterFunc(left-margin, cut)
		defer t.Stop()
	}
	stop := context.AfterFunc(ctx, cut)
	defer stop()
	m.wg.Wait()
	return nil
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
