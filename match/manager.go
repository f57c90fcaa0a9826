package match

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

	"github.com/usid/usid/session"
)

// Config bounds and shapes matches.
type Config struct {
	Service *session.Service
	// MaxPerClient matches queued or running per client; MaxMatches in
	// all, and MaxRunning of those at once (the others wait, queued).
	MaxPerClient, MaxMatches, MaxRunning int
	// MaxGames per match; MaxConcurrency games at once in one match;
	// MaxOpenings a request may bring; MaxPlies a game (then a draw).
	MaxGames, MaxConcurrency, MaxOpenings, MaxPlies int
	// MaxClock bounds a clock's main time, byoyomi and increment.
	MaxClock time.Duration
	// Keep: ended matches stay readable this long, at most MaxKept of them.
	Keep    time.Duration
	MaxKept int
	// Lag is the allowance past a player's time before it loses on time;
	// EngineMargin is taken off the time an engine is told it has.
	Lag, EngineMargin time.Duration
	Logger            *slog.Logger
	// Redis, if set, keeps matches in Redis, shared by every instance
	// using it (Open; shared.go); nil: in this process.
	Redis *RedisConfig
}

// WithDefaults is c with each bound left zero set to its default.
func (c Config) WithDefaults() Config {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.MaxPerClient, 1)
	def(&c.MaxMatches, 8)
	def(&c.MaxRunning, 2)
	def(&c.MaxGames, 1000)
	def(&c.MaxConcurrency, 4)
	def(&c.MaxOpenings, 1000)
	def(&c.MaxPlies, 512)
	def(&c.MaxKept, 100)
	if c.MaxClock <= 0 {
		c.MaxClock = time.Hour
	}
	if c.Keep <= 0 {
		c.Keep = time.Hour
	}
	if c.Lag <= 0 {
		c.Lag = 300 * time.Millisecond
	}
	if c.EngineMargin <= 0 {
		c.EngineMargin = 200 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Manager holds this process's matches: it admits them within the
// bounds, runs MaxRunning at once in the order they came, keeps ended
// ones for a while. It is safe for concurrent use; Close cancels every
// match and waits for their engines to be given back.
type Manager struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	matches map[string]*Match
	waiting []*Match // queued, oldest first
	running int
	ended   []*Match // oldest first
	closed  bool

	// With Redis (shared.go): the store, this pod's slots (a game played
	// each), a nudge for the loop when a match starts here, whom a game's
	// searches are for, and whether the pod was killed (tests).
	shared   *redisStore
	slots    chan struct{}
	kick     chan struct{}
	loopDone chan struct{}
	callers  func(client string) session.Caller
	killed   atomic.Bool
}

// New makes a Manager of this process's matches (cfg.Redis is for Open).
func New(cfg Config) *Manager {
	cfg = cfg.WithDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, ctx: ctx, cancel: cancel, matches: map[string]*Match{}, kick: make(chan struct{}, 1)}
}

// Errors of the bounds.
func errPerClient(n int) *Error {
	return &Error{Code: session.CodeTooManyRequests, Message: fmt.Sprintf("this client has %d matches queued or running; wait for one to end or cancel it", n), MoveIndex: -1}
}

func errFull(n int) *Error {
	return &Error{Code: session.CodeQueueFull, Message: fmt.Sprintf("the server has %d matches queued or running; retry later", n), MoveIndex: -1, Retry: 30 * time.Second}
}

// Start checks r and starts it for who (its engine time charged to who's
// budget); it answers the match's id.
func (m *Manager) Start(who session.Caller, r *Request) (string, *Error) {
	c, err := m.check(r)
	if err != nil {
		return "", err
	}
	if who.Budget != nil {
		if wait := who.Budget.Take(context.Background(), 0); wait > 0 {
			return "", &Error{Code: session.CodeTooManyRequests, Message: fmt.Sprintf("this client's engine time is spent; retry in %ds", int(wait.Seconds())+1), MoveIndex: -1, Retry: wait}
		}
	}
	if m.shared != nil {
		return m.startShared(who, r, c)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", &Error{Code: session.CodeShuttingDown, Message: "the server is shutting down", MoveIndex: -1}
	}
	m.sweepLocked(time.Now())
	mine, live := 0, 0
	for _, mt := range m.matches {
		if !mt.isEnded() {
			live++
			if mt.owner.Client == who.Client {
				mine++
			}
		}
	}
	if mine >= m.cfg.MaxPerClient {
		return "", errPerClient(m.cfg.MaxPerClient)
	}
	if live >= m.cfg.MaxMatches {
		return "", errFull(m.cfg.MaxMatches)
	}
	ctx, cancel := context.WithCancel(m.ctx)
	mt := &Match{id: newID(), owner: who, c: c, ctx: ctx, cancel: cancel, done: make(chan struct{}), status: StatusQueued, games: make([]*Game, c.games)}
	mt.table = m.table(mt)
	m.matches[mt.id] = mt
	m.waiting = append(m.waiting, mt)
	m.dispatchLocked()
	return mt.id, nil
}

// table is what mt's games need of it.
func (m *Manager) table(mt *Match) *table {
	c := mt.c
	return &table{game: c.game, players: [2]Player{c.Players[0], c.Players[1]}, limits: c.Limits, clock: c.Clock, adj: c.Adjudicate,
		maxPlies: m.cfg.MaxPlies, lag: m.cfg.Lag, margin: m.cfg.EngineMargin, event: "usid match " + mt.id}
}

// dispatchLocked starts the matches waiting, in the order they came,
// while fewer than MaxRunning play.
func (m *Manager) dispatchLocked() {
	for m.running < m.cfg.MaxRunning && len(m.waiting) > 0 && !m.closed {
		mt := m.waiting[0]
		m.waiting = m.waiting[1:]
		m.running++
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			mt.run(mt.ctx, m.cfg.Service)
			mt.cancel()
			m.mu.Lock()
			defer m.mu.Unlock()
			m.running--
			m.endedLocked(mt)
			m.dispatchLocked()
		}()
	}
}

// endedLocked keeps mt among the ended matches.
func (m *Manager) endedLocked(mt *Match) {
	m.ended = append(m.ended, mt)
	m.sweepLocked(time.Now())
}

// unqueueLocked ends mt, still waiting to start, cancelled.
func (m *Manager) unqueueLocked(mt *Match) {
	i := slices.Index(m.waiting, mt)
	if i < 0 {
		return
	}
	m.waiting = slices.Delete(m.waiting, i, i+1)
	mt.mu.Lock()
	mt.status, mt.ended, mt.games = StatusCancelled, time.Now(), mt.games[:0]
	mt.version++
	mt.mu.Unlock()
	close(mt.done)
	m.endedLocked(mt)
}

func (mt *Match) isEnded() bool {
	select {
	case <-mt.done:
		return true
	default:
		return false
	}
}

// Get is match id, or nil. With Redis, it is the match as stored now, a
// copy (nil too when the store could not be read: see Lookup).
func (m *Manager) Get(id string) *Match {
	mt, _ := m.Lookup(id)
	return mt
}

// Lookup is Get, with the error of a store that could not be read
// (unavailable, retry later) told apart from no such match.
func (m *Manager) Lookup(id string) (*Match, *Error) {
	if m.shared != nil {
		return m.getShared(id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.matches[id], nil
}

// Cancel cancels match id for who: only its owner may (anyone else is
// told there is no such match). It reports whether the match was found,
// or the error of a store that could not be reached (as Lookup's: retry
// later), told apart from no such match.
func (m *Manager) Cancel(id string, who session.Caller) (bool, *Error) {
	if m.shared != nil {
		ok, err := m.shared.cancel(m.ctx, id, who.Client)
		if err != nil {
			m.cfg.Logger.Warn("match: redis", "err", err)
			return false, errStore()
		}
		return ok, nil
	}
	mt := m.Get(id)
	if mt == nil || mt.owner.Client != who.Client {
		return false, nil
	}
	mt.cancel()
	m.mu.Lock()
	m.unqueueLocked(mt)
	m.mu.Unlock()
	return true, nil
}

// Wait waits until match mt has ended or ctx is done.
func (mt *Match) Wait(ctx context.Context) error {
	select {
	case <-mt.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sweepLocked forgets ended matches older than Keep, and the oldest past
// MaxKept.
func (m *Manager) sweepLocked(now time.Time) {
	for len(m.ended) > 0 && (len(m.ended) > m.cfg.MaxKept || now.Sub(m.ended[0].endedAt()) > m.cfg.Keep) {
		delete(m.matches, m.ended[0].id)
		m.ended = m.ended[1:]
	}
}

func (mt *Match) endedAt() time.Time {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.ended
}

// Close cancels every match and waits until their engines are given back.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for len(m.waiting) > 0 {
		m.unqueueLocked(m.waiting[0])
	}
	m.mu.Unlock()
	m.cancel()
	if m.loopDone != nil {
		<-m.loopDone
	}
	m.wg.Wait()
	if m.shared != nil {
		m.shared.Close()
	}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
