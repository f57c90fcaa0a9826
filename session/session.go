// Package session turns client requests (JSON) into engine work and engine
// output into client events: a Session per WebSocket connection, and
// one-shot Analyze and Mate calls for REST. It knows nothing of HTTP.
//
// Every position goes through the shogi package before an engine sees it;
// every line sent to an engine is built from parsed, validated values. Limits
// behave the same on every engine: what an engine lacks natively (gpsusi has
// no go depth, nodes or movetime) usid enforces itself by stopping the
// search. Every search request ends in exactly one terminal event
// (bestmove, checkmate or error).
//
// # Concurrency and ownership
//
// A Service is safe for concurrent use. A Session has one reader that calls
// Handle with each client message, and one writer that calls Next for the
// events to send; both may run concurrently with each other and with Close.
// Inside, one worker goroutine owns the session's engine lease and runs one
// request at a time; stop and ponderhit act at once. The caller must Close a
// Session; Close stops any search, waits for its bestmove (bounded by the
// engine's stop timeout) and gives the engine back to the pool.
package session

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/usi"
)

// More codes, for requests that never reached an engine.
const (
	CodeSuperseded = "superseded" // a newer search request replaced this one before it started
	CodeCancelled  = "cancelled"  // stopped before an engine was assigned
)

// Config is shared by all sessions and REST requests. Zero fields take the
// defaults shown.
type Config struct {
	Pool          *pool.Pool
	DefaultEngine string // for analyze and go; default: the first configured
	// MateEngine is for mate; default: the first whose profile says it
	// answers go mate with checkmate (else DefaultEngine).
	MateEngine string
	Caps       Caps
	// IdleRelease gives a session's engine back after this long without a
	// request (30s).
	IdleRelease time.Duration
	// QueueTimeout bounds a session's wait for a free engine (60s).
	QueueTimeout time.Duration
	// AcquireTimeout bounds a REST request's wait for a free engine (10s).
	AcquireTimeout time.Duration
	// MaxLease is how long a session keeps one engine: past it, the next
	// request gives the engine back and queues again like everyone (15m).
	MaxLease   time.Duration
	InfoRate   float64 // info batches per second to one client (60)
	InfoBurst  int     // (10)
	MaxPending int     // undelivered non-info events before a client counts as too slow (256)
	// FrozenCheck is how often a searching engine's process is checked for
	// being stopped (SIGSTOP, a debugger), which would never answer (1s).
	FrozenCheck time.Duration
	// Cache, if set, keeps finished analyses and answers from them (see
	// cache.go); nil: every request searches.
	Cache  *evalcache.Cache
	Logger *slog.Logger
}

func (c *Config) frozenCheck() time.Duration {
	if c.FrozenCheck > 0 {
		return c.FrozenCheck
	}
	return time.Second
}

// Service runs requests for sessions and REST handlers.
type Service struct {
	Config
}

// NewService fills in defaults.
func NewService(cfg Config) *Service {
	c := cfg
	c.Caps = c.Caps.withDefaults()
	if c.IdleRelease <= 0 {
		c.IdleRelease = 30 * time.Second
	}
	if c.QueueTimeout <= 0 {
		c.QueueTimeout = time.Minute
	}
	if c.MaxLease <= 0 {
		c.MaxLease = 15 * time.Minute
	}
	if c.AcquireTimeout <= 0 {
		c.AcquireTimeout = 10 * time.Second
	}
	if c.InfoRate <= 0 {
		c.InfoRate = 60
	}
	if c.InfoBurst <= 0 {
		c.InfoBurst = 10
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 256
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Pool != nil && c.DefaultEngine == "" && len(c.Pool.Engines()) > 0 {
		c.DefaultEngine = c.Pool.Engines()[0]
	}
	return &Service{Config: c}
}

// Session is one client's conversation: requests in, events out.
type Session struct {
	svc    *Service
	out    *outbox
	log    *slog.Logger
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	work   chan any // *job, *Request, idleTick: handled by the worker in order
	done   chan struct{}
	// once starts the worker at the first request, or marks it done at Close
	// if none came: an idle connection costs no goroutine here.
	once sync.Once

	// clientOpts: the client set engine options on the lease held now;
	// the worker's alone (it owns the lease).
	clientOpts bool
	// replacePaid: the client paid for the replacement of the engine held
	// now (an option no setoption undoes); it is replaced once however
	// often the option is set. The worker's alone.
	replacePaid bool
	// repeated: the lease held now searched a history with a repeated
	// position, so its engine's hash may hold that answer; its searches
	// fill the cache no more (cache.go). The worker's alone.
	repeated bool
	// kept is the options the client set per engine kind, in the order
	// first set, re-applied to every engine the session leases later, so
	// that giving an idle engine back (idle_release, another client
	// waiting, max_lease) never changes the opponent. (The game state needs
	// no keeping: the pool hands out every engine with usinewgame sent.)
	// The worker's alone.
	kept map[string]*kept
	// caller is whom the session searches for (SetCaller); set before
	// the first request, then only read.
	caller Caller

	mu        sync.Mutex
	cur       *run            // the search request the worker is on
	pending   map[string]*job // queued search requests, by id
	ended     []string        // ids of the latest searches that have ended, newest last
	latest    string          // id of the newest search request
	idleTimer *time.Timer
	closed    bool
	draining  bool
	games     GameRunner // analyze_game; nil: refused
	play      PlayRunner // play_*; nil: refused
	game      gameState
}

// run is a search request being served.
type run struct {
	id         string
	cancel     context.CancelFunc
	superseded bool        // a newer request replaced it: its infos are stale
	stopped    bool        // the client sent stop
	unbounded  bool        // runs until stop: analysis without limits, pondering
	search     *usi.Search // once the engine searches
}

// maxEnded is how many ended search ids a session remembers, to take a late
// stop for one of them quietly.
const maxEnded = 16

type idleTick struct{}

// drainMark is queued by Drain; the worker closes it when it gets there,
// that is when every earlier request has been served.
type drainMark chan struct{}

// NewSession starts a session; Close it when the client goes.
func (svc *Service) NewSession() *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		svc: svc, log: svc.Logger, ctx: ctx, cancel: cancel,
		out:     newOutbox(svc.InfoRate, svc.InfoBurst, svc.MaxPending),
		work:    make(chan any, 16),
		done:    make(chan struct{}),
		pending: make(map[string]*job),
	}
	return s
}

func (s *Session) start() { s.once.Do(func() { go s.worker() }) }

// SetCaller says whom the session searches for (an API key's or an
// address's identity): its turn in the pool's fair queue and where its
// engine time is charged. Sessions are interactive whatever who.Class says.
// Call it before the first Handle.
func (s *Session) SetCaller(who Caller) {
	who.Class = pool.Interactive
	s.caller = who
}

// Next returns the next events to send to the client, waiting for them. It
// returns an error when the session is over: ErrSlowClient when the client
// could not keep up, or ctx's or the session's end.
func (s *Session) Next(ctx context.Context) ([]*Event, error) { return s.out.next(ctx) }

// SetReady has f called whenever events are queued or the session ends, so
// that a writer need not wait in Next while the session is quiet (an idle
// WebSocket connection then costs no writer goroutine): f starts one when
// none runs, and the writer returns once Pending is false. f is called with
// the session's outbox locked: it must not block or call the Session. Call
// SetReady before Handle, Serve or Notify.
func (s *Session) SetReady(f func()) {
	s.out.mu.Lock()
	s.out.ready = f
	s.out.mu.Unlock()
}

// SetInline has f called, instead of SetReady's function, after an info
// event is queued: by the goroutine that queued it (the session's worker,
// during a search), with no lock of the session's held. f may take the
// events with TryNext and write them itself, so that delivering an engine's
// line does not wake a writer goroutine; it must not block, and must leave
// to a writer (started as SetReady's function would) what it cannot write
// at once. Other events and the session's end still call SetReady's
// function. Call SetInline before Handle, Serve or Notify.
func (s *Session) SetInline(f func()) {
	s.out.mu.Lock()
	s.out.inline = f
	s.out.mu.Unlock()
}

// TryNext is Next without waiting: the events queued, if the rate of
// batches allows sending them now; nil when there are none, when they must
// wait for the rate, or when the session is over (Next reports the end).
func (s *Session) TryNext() []*Event { return s.out.tryNext() }

// Pending reports whether Next has something to return without waiting for
// new events: events are queued, or the session is over.
func (s *Session) Pending() bool { return s.out.pending() }

// Searching reports whether a search request is being served: its events
// (info, then the terminal one) are still to come. A writer may wait in Next
// meanwhile rather than return and be started again for every event.
func (s *Session) Searching() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}

// Notify sends an event that does not answer a request (a server notice).
func (s *Session) Notify(ev *Event) { s.out.push(ev) }

// Handle takes one client message. It never blocks on an engine: work is
// queued for the session's worker, and stop and ponderhit act at once.
func (s *Session) Handle(raw []byte) {
	req, perr := ParseRequest(raw)
	if perr != nil {
		id := ""
		if req != nil {
			id = req.ID
		}
		s.out.push(errorEvent(id, perr))
		return
	}
	s.Serve(req)
}

// Serve takes one request that ParseRequest accepted (the server parses
// each message once, for its rate limiter and for this).
func (s *Session) Serve(req *Request) {
	switch req.Type {
	case TypeStop:
		if !s.stopGame(req.ID) {
			s.stop(req.ID)
		}
	case TypeAnalyzeGame:
		s.startGame(req)
	case TypePlayStart, TypePlayMove, TypePlayResign, TypePlayResume, TypePlayDeclare:
		s.servePlay(req)
	case TypePonderhit:
		s.ponderhit(req.ID)
	case TypeAnalyze, TypeGo, TypeMate:
		s.mu.Lock()
		draining := s.draining
		s.mu.Unlock()
		if draining {
			s.out.push(errorEvent(req.ID, errorf(CodeShuttingDown, "the server is shutting down; reconnect to another instance")))
			return
		}
		j, err := s.svc.newJob(req)
		if err != nil {
			s.out.push(errorEvent(req.ID, err))
			return
		}
		s.mu.Lock()
		// The newest search request wins: stop the one running, skip queued ones.
		if s.cur != nil && !s.cur.superseded {
			s.cur.superseded = true
			s.cur.cancel()
			s.out.dropInfo(s.cur.id)
		}
		s.latest = j.id
		s.pending[j.id] = j
		s.mu.Unlock()
		s.enqueue(req.ID, j)
	default:
		s.enqueue(req.ID, req)
	}
}

func (s *Session) enqueue(id string, item any) {
	s.start()
	select {
	case s.work <- item:
	default:
		s.out.push(errorEvent(id, errorf(CodeTooManyRequests, "requests arrive faster than they are served")))
		if j, ok := item.(*job); ok {
			s.mu.Lock()
			delete(s.pending, j.id)
			s.mu.Unlock()
		}
	}
}

func (s *Session) stop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.id == id {
		s.cur.stopped = true
		s.cur.cancel() // the engine gets stop; its bestmove ends the request
		return
	}
	if j := s.pending[id]; j != nil {
		j.cancelled = true
		return
	}
	if slices.Contains(s.ended, id) {
		// Its terminal event has gone out already (an engine that answered
		// at once, from its book, a mate engine): a second one for the same
		// id would break "exactly one terminal event per search".
		return
	}
	s.out.push(errorEvent(id, errorf(CodeNoSearch, "no search with id %q is running", clip(id))))
}

// markEnded remembers that search id has had its terminal event.
func (s *Session) markEnded(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ended) == maxEnded {
		s.ended = slices.Delete(s.ended, 0, 1)
	}
	s.ended = append(s.ended, id)
}

func (s *Session) ponderhit(id string) {
	s.mu.Lock()
	r := s.cur
	var srch *usi.Search
	if r != nil && r.id == id {
		srch = r.search
	}
	s.mu.Unlock()
	if srch == nil {
		s.out.push(errorEvent(id, errorf(CodeNoSearch, "no search with id %q is pondering", clip(id))))
		return
	}
	if err := srch.Ponderhit(); err != nil {
		s.out.push(errorEvent(id, errorf(CodeNoSearch, "%v", err)))
	}
}

// Close ends the session: a running search is stopped, the engine goes back
// to the pool once it has answered, and Next returns an error after the
// events still queued.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.closed = true
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.mu.Unlock()
	s.cancel()
	s.detachGames()                     // game jobs end with the connection, unless keep
	s.once.Do(func() { close(s.done) }) // no request ever came: no worker
	<-s.done
	s.out.close()
}

// Drain refuses new search requests, stops a search that would run until
// stop (analysis without limits, pondering), and waits until the requests
// already taken have ended (their terminal events are queued for the client).
func (s *Session) Drain() {
	s.mu.Lock()
	s.draining = true
	// A search that runs until stop, or a request still waiting for an
	// engine, would hold the drain up: end it now.
	if s.cur != nil && (s.cur.unbounded || s.cur.search == nil) {
		s.cur.stopped = true
		s.cur.cancel()
	}
	s.mu.Unlock()
	s.start()
	mark := make(drainMark)
	select {
	case s.work <- mark:
	case <-s.done:
		return
	}
	select {
	case <-mark:
	case <-s.done:
	}
	// Game jobs are drained by their manager (package review): wait for
	// their terminal events, so that the client gets them before the close.
	select {
	case <-s.gamesIdle():
	case <-s.ctx.Done():
	}
}
