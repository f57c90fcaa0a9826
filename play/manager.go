package play

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/usid/usid/session"
)

// Config bounds and times games. Zero fields take the defaults shown.
type Config struct {
	Service *session.Service
	Store   Store // NewMemoryStore()
	// Grace is how long a game waits for its player to come back after
	// the connection went (60s); the clocks run meanwhile.
	Grace time.Duration
	// Keep is how long an ended game can still be resumed to see its
	// result (5m).
	Keep time.Duration
	// MaxPerClient bounds one client's games in progress (2);
	// MaxPerNetwork the games of the clients of one network together (8:
	// an IPv4 /24, an IPv6 /64; a /56 twice that, a /48 four times, see
	// session.Places), so that one subscriber's many addresses cannot
	// take every slot;
	// MaxGames all games in progress (64); MaxKept the ended games kept
	// (256).
	MaxPerClient, MaxPerNetwork, MaxGames, MaxKept int
	// Idle is the longest a player's turn may last whatever the clock
	// (30m): past it the player is taken to have left the game (as past
	// Grace without a connection), which is lost, or aborted if the
	// player made no move in it. A game's slot is held no longer by
	// someone who does not play.
	Idle time.Duration
	// MaxPlies ends a game as a draw (持将棋 by the move cap) after this
	// many moves played (512).
	MaxPlies int
	// Lag is the allowance past a side's time before it loses on time, for
	// the way between the server and the player (300ms).
	Lag time.Duration
	// EngineMargin is taken off the time the engine is told it has
	// (200ms): the way from its bestmove to the server's clock, which a
	// loaded machine stretches.
	EngineMargin time.Duration
	Logger       *slog.Logger
}

// WithDefaults fills in the zero fields.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Grace, time.Minute)
	def(&c.Idle, 30*time.Minute)
	def(&c.Keep, 5*time.Minute)
	def(&c.Lag, 300*time.Millisecond)
	def(&c.EngineMargin, 200*time.Millisecond)
	n := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	n(&c.MaxPerClient, 2)
	n(&c.MaxPerNetwork, 8)
	n(&c.MaxGames, 64)
	n(&c.MaxKept, 256)
	n(&c.MaxPlies, 512)
	if c.Store == nil {
		c.Store = NewMemoryStore()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Manager owns the games of this process.
type Manager struct {
	cfg Config

	mu       sync.Mutex
	games    map[string]*game // in progress and ended (until Keep)
	playing  session.Places   // games in progress, per client and network
	done     []*game          // ended games, oldest first
	closed   bool
	taking   map[string]chan struct{} // games being taken over from another instance
	sessions sync.WaitGroup           // games' engine sessions being closed
	finishes sync.WaitGroup           // ended games' states being stored (finish)

	shared     Shared // cfg.Store when several instances share it
	stopRenew  context.CancelFunc
	renewDone  chan struct{}
	handedBack int // games handed to other instances (tests)
}

// New returns a Manager. With a Shared store it renews the leases of the
// games it drives until Close.
func New(cfg Config) *Manager {
	m := &Manager{cfg: cfg.WithDefaults(), games: map[string]*game{}, taking: map[string]chan struct{}{}}
	if sh, ok := m.cfg.Store.(Shared); ok {
		m.shared = sh
		ctx, cancel := context.WithCancel(context.Background())
		m.stopRenew, m.renewDone = cancel, make(chan struct{})
		go m.renewLoop(ctx)
	}
	return m
}

// For returns the runner of play_* requests for who (Session.SetPlay).
func (m *Manager) For(who session.Caller) session.PlayRunner { return runner{m, who} }

type runner struct {
	m   *Manager
	who session.Caller
}

func (r runner) Play(ctx context.Context, req *session.Request, emit func(*session.Event)) {
	if err := r.m.serve(ctx, r.who, req, emit); err != nil {
		emit(session.ErrorEvent(req.ID, err))
	}
}

// CodeNotFound: no such game of this client's (as for game analysis jobs).
const CodeNotFound = "not_found"

func newError(code, format string, args ...any) *session.Error {
	return &session.Error{Code: code, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

func (m *Manager) serve(ctx context.Context, who session.Caller, req *session.Request, emit func(*session.Event)) *session.Error {
	if req.Type == session.TypePlayStart {
		return m.start(ctx, who, req, emit)
	}
	g := m.find(who.Client, req.Game)
	if g == nil && m.shared != nil && req.Type == session.TypePlayResume {
		// Taking a game over may wait for its holder (a renewal, or its
		// lease after it died): not on the connection's reader.
		r := *req
		go func() {
			if err := m.takeOver(ctx, who, &r, emit); err != nil {
				emit(session.ErrorEvent(req.ID, err))
			}
		}()
		return nil
	}
	if g == nil {
		if st, ok, _ := m.cfg.Store.Load(ctx, req.Game); ok && st.Owner == who.Client && req.Type == session.TypePlayResume {
			// Ended (or left by a process that went): its last state.
			emit(stateEvent(req.ID, st, time.Now()))
			return nil
		}
		return newError(CodeNotFound, "no game %q: unknown, forgotten, or started by another client", clipID(req.Game))
	}
	switch req.Type {
	case session.TypePlayResume:
		g.attach(ctx, req.ID, emit)
		return nil
	case session.TypePlayMove:
		return g.humanMove(ctx, req, emit)
	case session.TypePlayResign:
		return g.humanEnds(ctx, req, emit, false)
	case session.TypePlayDeclare:
		return g.humanEnds(ctx, req, emit, true)
	}
	return newError(session.CodeUnknownType, "unknown play request %q", req.Type)
}

// find returns owner's game id, or nil (another client's game is not
// found either, as for game analysis jobs).
func (m *Manager) find(owner, id string) *game {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.games[id]
	if g == nil || g.owner != owner {
		return nil
	}
	return g
}

// admit counts a new game for who, or refuses it.
func (m *Manager) admit(who session.Caller) *session.Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return newError(session.CodeShuttingDown, "the server is shutting down; reconnect to another instance")
	}
	return m.refusal(m.playing.Take(who.Client, who.Networks, m.bounds()))
}

func (m *Manager) bounds() session.Bounds {
	return session.Bounds{PerClient: m.cfg.MaxPerClient, PerNetwork: m.cfg.MaxPerNetwork, Total: m.cfg.MaxGames}
}

// refusal is the error of a game refused by bound f (nil: none).
func (m *Manager) refusal(f *session.Full) *session.Error {
	switch {
	case f == nil:
		return nil
	case f.What == "client":
		return errPerClient(f.Max)
	case f.What == "network":
		return errPerNetwork(f)
	}
	return errFull(f.Max)
}

// errFull refuses a game past the server's bound on games in progress:
// the server's capacity, not the client's quota, so queue_full (503), as
// games.max_jobs answers (issue 37: the docs said 503, the code 429).
func errFull(n int) *session.Error {
	return newError(session.CodeQueueFull, "the server plays %d games, as many as it may; retry later", n)
}

func errPerClient(n int) *session.Error {
	return newError(session.CodeTooManyRequests, "this client has %d games in progress, as many as one may; resign one or finish it", n)
}

func errPerNetwork(f *session.Full) *session.Error {
	return newError(session.CodeTooManyRequests, "the clients of network %s have %d games in progress, as many as one network may; retry later", f.Network[len("net:"):], f.Max)
}

func (m *Manager) register(g *game) {
	m.mu.Lock()
	m.games[g.st.ID] = g
	m.mu.Unlock()
}

// unadmit undoes admit for a game that did not start.
func (m *Manager) unadmit(who session.Caller) {
	m.playing.Give(who.Client, who.Networks)
}

// left forgets g, in progress, which another instance drives now.
func (m *Manager) left(g *game) {
	m.mu.Lock()
	if m.games[g.st.ID] == g {
		delete(m.games, g.st.ID)
		m.playing.Give(g.owner, g.st.Networks)
		m.handedBack++
	}
	m.mu.Unlock()
}

// ended moves g from the games in progress to the ended ones, kept for
// Keep and at most MaxKept of them.
func (m *Manager) ended(g *game) {
	m.mu.Lock()
	m.playing.Give(g.owner, g.st.Networks)
	m.done = append(m.done, g)
	var gone []*game
	for len(m.done) > m.cfg.MaxKept {
		gone = append(gone, m.done[0])
		m.done = slices.Delete(m.done, 0, 1)
	}
	for _, o := range gone {
		delete(m.games, o.st.ID)
	}
	m.mu.Unlock()
	for _, o := range gone {
		m.cfg.Store.Delete(context.Background(), o.st.ID)
	}
	time.AfterFunc(m.cfg.Keep, func() { m.forget(g) })
}

func (m *Manager) forget(g *game) {
	m.mu.Lock()
	i := slices.Index(m.done, g)
	if i >= 0 {
		m.done = slices.Delete(m.done, i, i+1)
		delete(m.games, g.st.ID)
	}
	m.mu.Unlock()
	if i >= 0 {
		m.cfg.Store.Delete(context.Background(), g.st.ID)
	}
}

// Counts reports the games in progress and the ended games kept.
func (m *Manager) Counts() (playing, kept int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, n := m.playing.Held("")
	return n, len(m.done)
}

// HandedBack is how many games this Manager gave to other instances.
func (m *Manager) HandedBack() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.handedBack
}

// Close ends every game in progress (aborted: the server shuts down), or
// with a Shared store hands each back at once for another instance to take
// over when its player resumes it there; then it waits until their engines
// have been given back. ctx bounds the wait.
func (m *Manager) Close(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	var live []*game
	for _, g := range m.games {
		live = append(live, g)
	}
	m.mu.Unlock()
	if m.stopRenew != nil {
		m.stopRenew()
		<-m.renewDone
	}
	handed := 0
	for _, g := range live {
		if m.shared != nil {
			if g.leave(true) {
				handed++
			}
		} else {
			g.abort(session.CodeShuttingDown, "the server is shutting down")
		}
	}
	if m.shared != nil {
		m.cfg.Logger.Info("games in progress handed back for other instances to take over", "games", handed)
	}
	done := make(chan struct{})
	go func() { m.sessions.Wait(); m.finishes.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func clipID(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
