// Package broadcast runs broadcasts: the live analysis of a game that any
// number of viewers watch (issue 38). A client creates a broadcast for a
// position of any game usid serves and sends the moves as they are played;
// one engine analyses the current position until the next one comes (an
// analysis until stop, through a session of package session, charged to
// the creator's Caller), and its lines go to every viewer.
//
// The pieces:
//
//   - Manager: the broadcasts this instance knows, their bounds (per client
//     and in all; viewers per client and per instance), and the calls the
//     server's routes make (Create, Moves, SetPosition, Get, End, Watch).
//   - backend: where a broadcast's state lives and how its lines travel:
//     in this process (memory.go), or in Redis (redis.go), shared by every
//     instance: the state in a hash, the lines over pub/sub, and a lease
//     held by the instance that runs the search, taken over by another
//     when it stops renewing it.
//   - runner (runner.go): the one search of a broadcast, on the instance
//     holding its lease: a headless session, one analyze per position; it
//     encodes each batch of events once.
//   - hub (hub.go): on every instance with viewers of a broadcast, the
//     fan-out: each batch is framed once and the same bytes are written to
//     every viewer (Viewer.Send: never blocking; a viewer that cannot take
//     them is dropped). A late joiner gets the current position and lines
//     at once.
//
// Every search ends in exactly one terminal event (bestmove or error): the
// runner and an instance taking a search over claim the search's end in
// the backend, and only the one that claims it sends it.
//
// A Manager is safe for concurrent use; Close it to stop its searches and
// close its viewers.
package broadcast

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/usid/usid/session"
)

// Codes of this package's refusals (besides session's).
const (
	CodeNotFound = "not_found" // no broadcast with that id (or it has been forgotten)
	CodeNotOwner = "forbidden" // only the creator changes or ends a broadcast
	CodeConflict = "conflict"  // moves sent for another ply than the game's
	CodeEnded    = "ended"     // the broadcast has ended
	// CodeInvalid: the broadcast's stored state is over the bounds usid
	// writes within, or unreadable; it is ended by the first instance
	// that finds it (answered as 404: there is no broadcast to show).
	CodeInvalid = "stored_state_invalid"
)

// bounds are what a broadcast keeps in its store at most, derived from
// the session's caps: usid writes nothing larger, and reads nothing
// larger back (redis.go measures every value in Redis first).
type bounds struct {
	state int // a State's JSON: a start of 256 bytes, MaxMoves moves, 16 options
	event int // a line or terminal event published (a position event: state + 1 KiB)
	snap  int // the snapshot: a position, a line per multipv, a terminal event
	eval  int // one evaluation (its pv is left out beyond it)
	evals int // evaluations: one per ply
}

func boundsOf(c session.Caps) bounds {
	state := 32<<10 + 16*c.MaxMoves
	const event = 32 << 10 // an engine line of a few hundred moves in two notations
	return bounds{state: state, event: event, snap: state + 1<<10 + (c.MaxMultiPV+1)*(event+10) + 10,
		eval: 4 << 10, evals: c.MaxMoves + 1}
}

// invalid is the answer for a broadcast whose stored what is over bound
// or unreadable.
func invalid(id, what string, bound int) *session.Error {
	return errorf(CodeInvalid, "broadcast %s: its stored %s is over its bound (%d) or unreadable; it is ended", clip(id), what, bound)
}

func tooLarge(n, bound int) *session.Error {
	return errorf(session.CodeInvalidField, "the broadcast would take %d bytes; at most %d (fewer options or moves)", n, bound)
}

// validID reports whether id can be a broadcast's (32 hex digits, as
// randomID makes): others are not found without asking the store.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Config sets a Manager up. Zero fields take the defaults shown.
type Config struct {
	Service *session.Service
	// Callers is whom a broadcast's searches are for, by its owner's id
	// (server.CallerFor): the owner's budget, also on an instance that
	// takes the search over, and the networks its places are counted in
	// (owners' and viewers'). Nil: an unbudgeted caller of no network.
	Callers func(client string) session.Caller

	MaxPerClient  int // live broadcasts per client (2)
	MaxPerNetwork int // live broadcasts per network (2: an IPv4 /24, an IPv6 /64; a /56 twice that, a /48 four times: session.Places)
	MaxBroadcasts int // live broadcasts in all (16)
	// Viewers on this instance: per client (16), per network (64, wider
	// ones as for broadcasts), in all (20000).
	MaxViewersPerClient, MaxViewersPerNetwork, MaxViewers int
	Keep                                                  time.Duration // an ended broadcast stays readable (10m)
	// Idle ends a broadcast sent no move or position for this long (6h):
	// a forgotten one would hold a place of MaxBroadcasts for ever.
	Idle time.Duration
	// Lease and Check: how long a search stays with an instance that
	// stopped renewing its lease (1.5s), and how often leases are renewed
	// and free ones taken over (250ms). Redis only.
	Lease, Check time.Duration
	// Redis, if set, shares broadcasts between instances (redis.go).
	Redis *RedisConfig
	// Workers write a batch to a hub's viewers in parallel (GOMAXPROCS).
	Workers int
	Logger  *slog.Logger

	noSearch bool // tests: no runner starts (they feed batches themselves)
}

// RedisPrefix is the default prefix of the broadcasts' Redis keys.
const RedisPrefix = "usid:bc:"

// WithDefaults returns c with its zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}

func (c *Config) defaults() {
	if c.MaxPerClient <= 0 {
		c.MaxPerClient = 2
	}
	if c.MaxPerNetwork <= 0 {
		c.MaxPerNetwork = 2
	}
	if c.MaxBroadcasts <= 0 {
		c.MaxBroadcasts = 16
	}
	if c.MaxViewersPerNetwork <= 0 {
		c.MaxViewersPerNetwork = 64
	}
	if c.MaxViewersPerClient <= 0 {
		c.MaxViewersPerClient = 16
	}
	if c.MaxViewers <= 0 {
		c.MaxViewers = 20000
	}
	if c.Keep <= 0 {
		c.Keep = 10 * time.Minute
	}
	if c.Idle <= 0 {
		c.Idle = 6 * time.Hour
	}
	if c.Lease <= 0 {
		c.Lease = 1500 * time.Millisecond
	}
	if c.Check <= 0 {
		c.Check = 250 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Callers == nil {
		c.Callers = func(id string) session.Caller { return session.Caller{Client: id} }
	}
}

// Request is POST /v1/broadcasts's body.
type Request struct {
	Position *session.Position `json:"position"`
	Engine   string            `json:"engine"`
	MultiPV  int               `json:"multipv"`
	Options  map[string]string `json:"options"`
	Notation string            `json:"notation"`
}

// State is a broadcast as the backend keeps it.
type State struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Networks are the owner's (session.Caller.Networks), counted by the
	// bound per network.
	Networks []string          `json:"networks,omitempty"`
	Engine   string            `json:"engine"`
	MultiPV  int               `json:"multipv"`
	Options  map[string]string `json:"options,omitempty"`
	Notation string            `json:"notation,omitempty"`
	Position session.Position  `json:"position"`
	// Version counts the positions sent: a runner searches again when it
	// sees a newer one.
	Version int       `json:"version"`
	Ended   bool      `json:"ended,omitempty"`
	Created time.Time `json:"created_at"`
	// Changed is when the owner last sent a position (Created at first).
	Changed time.Time `json:"changed_at"`
}

// idle reports whether st was sent nothing for longer than d.
func (st *State) idle(d time.Duration, now time.Time) bool {
	last := st.Changed
	if last.IsZero() {
		last = st.Created
	}
	return now.Sub(last) > d
}

// View is a broadcast as GET answers it.
type View struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Engine   string            `json:"engine"`
	MultiPV  int               `json:"multipv"`
	Position session.Position  `json:"position"`
	Ply      int               `json:"ply"`
	Search   int               `json:"search"`
	Viewers  int               `json:"viewers"`
	Lines    []json.RawMessage `json:"lines"`
	Evals    []json.RawMessage `json:"evals"`
	Created  time.Time         `json:"created_at"`
}

// Manager runs this instance's part of every broadcast.
type Manager struct {
	cfg    Config
	bounds bounds
	be     backend
	log    *slog.Logger
	pod    string
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	runners map[string]*runner
	hubs    map[string]*hub
	viewers session.Places // per client and network, on this instance
	closed  bool

	delivered atomic.Int64 // batches written to viewers (Delivered)
}

// Delivered counts the batches this instance wrote to its viewers (one per
// viewer per batch).
func (m *Manager) Delivered() int64 { return m.delivered.Load() }

// New starts a Manager (and, with Redis, its subscription and the loop
// that renews and takes over leases).
func New(cfg Config) (*Manager, error) {
	cfg.defaults()
	ctx, stop := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, bounds: boundsOf(cfg.Service.Caps), log: cfg.Logger, ctx: ctx, stop: stop, pod: randomID()[:12],
		runners: map[string]*runner{}, hubs: map[string]*hub{}}
	if cfg.Redis != nil {
		be, err := openRedis(m, *cfg.Redis)
		if err != nil {
			stop()
			return nil, err
		}
		m.be = be
	} else {
		m.be = newMemory(m)
	}
	m.wg.Add(1)
	go m.loop()
	return m, nil
}

// Close ends this instance's part: its searches stop (their terminal
// events go out; with Redis another instance takes them over at once, as
// the leases are given back), its viewers are closed.
func (m *Manager) Close(ctx context.Context) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	runners := make([]*runner, 0, len(m.runners))
	for _, r := range m.runners {
		runners = append(runners, r)
	}
	hubs := make([]*hub, 0, len(m.hubs))
	for _, h := range m.hubs {
		hubs = append(hubs, h)
	}
	m.mu.Unlock()
	for _, r := range runners {
		r.halt(true)
	}
	for _, r := range runners {
		r.wait(ctx)
	}
	m.stop()
	m.wg.Wait()
	for _, h := range hubs {
		h.closeAll(GoingAway)
	}
	m.be.close()
}

func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func errorf(code, format string, args ...any) *session.Error {
	return &session.Error{Code: code, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

// full refuses a place (a broadcast, a viewer's seat) past bound f: 503
// queue_full when the server's are all taken, 429 otherwise. It announces
// no Retry-After (session.NoRetry): a broadcast holds its place until its
// owner ends it or it idles (Config.Idle, hours), a viewer until it
// leaves; no time can be promised.
func full(what string, f *session.Full) *session.Error {
	var e *session.Error
	switch f.What {
	case "client":
		e = errorf(session.CodeTooManyRequests, "this client holds %d %s, as many as one may; end one first", f.Max, what)
	case "network":
		e = errorf(session.CodeTooManyRequests, "the clients of network %s hold %d %s, as many as one network may; retry once one ends", strings.TrimPrefix(f.Network, "net:"), f.Max, what)
	case "total":
		code := session.CodeTooManyRequests // a viewer: this instance's bound
		if what == "broadcasts" {
			code = session.CodeQueueFull
		}
		e = errorf(code, "the server holds %d %s, as many as it takes; retry once one ends", f.Max, what)
	}
	e.Retry = session.NoRetry
	return e
}

func (m *Manager) unavailable(err error) *session.Error {
	m.log.Warn("broadcast store unavailable", "err", err)
	return errorf(session.CodeQueueFull, "broadcasts are unavailable for a moment (their store does not answer); retry")
}

// check checks a broadcast's position as its search will take it.
func (m *Manager) check(st *State, pos *session.Position) (*session.Checked, string, *session.Error) {
	return m.cfg.Service.CheckAnalysis(&session.Request{Position: pos, Engine: st.Engine, MultiPV: st.MultiPV, Notation: st.Notation})
}

// Create starts a broadcast owned by caller.
func (m *Manager) Create(owner string, req *Request) (*View, *session.Error) {
	if req.Position == nil {
		req.Position = &session.Position{}
	}
	st := &State{ID: randomID(), Owner: owner, Engine: req.Engine, MultiPV: max(req.MultiPV, 1), Options: req.Options,
		Notation: req.Notation, Position: *req.Position, Version: 1, Created: time.Now().UTC().Truncate(time.Millisecond)}
	st.Changed = st.Created
	if req.MultiPV < 0 {
		return nil, errorf(session.CodeInvalidField, "multipv %d: want 1 or more", req.MultiPV)
	}
	if len(req.Options) > 16 {
		return nil, errorf(session.CodeInvalidField, "options: at most 16")
	}
	_, engine, err := m.check(st, &st.Position)
	if err != nil {
		return nil, err
	}
	if p := m.cfg.Service.Pool; p != nil && !slices.Contains(p.Engines(), engine) {
		return nil, errorf(session.CodeUnknownEngine, "no engine named %q", engine)
	}
	st.Engine = engine
	for name, value := range req.Options {
		// Refused now with the code a session's setoption gets, not
		// created for its runner to be refused later (issue 43).
		if err := m.cfg.Service.CheckOption(engine, name, value); err != nil {
			return nil, err
		}
	}
	st.Networks = m.cfg.Callers(owner).Networks
	if err := m.be.create(m.ctx, st, session.Bounds{PerClient: m.cfg.MaxPerClient, PerNetwork: m.cfg.MaxPerNetwork, Total: m.cfg.MaxBroadcasts}); err != nil {
		return nil, err
	}
	m.take(st.ID) // this instance runs it, unless another got there first
	return m.view(st)
}

// Moves appends moves to owner's broadcast id; ply, if not nil, is the
// game's length the sender expects before them.
func (m *Manager) Moves(owner, id string, moves []string, ply *int) (*View, *session.Error) {
	if len(moves) == 0 {
		return nil, errorf(session.CodeInvalidField, "moves: at least one")
	}
	return m.change(owner, id, func(st *State) *session.Error {
		if ply != nil && *ply != len(st.Position.Moves) {
			return errorf(CodeConflict, "the game has %d moves, not %d", len(st.Position.Moves), *ply)
		}
		p := st.Position
		p.Moves = append(slices.Clone(p.Moves), moves...)
		if _, _, err := m.check(st, &p); err != nil {
			return err
		}
		st.Position = p
		return nil
	})
}

// SetPosition replaces the position of owner's broadcast id.
func (m *Manager) SetPosition(owner, id string, pos *session.Position) (*View, *session.Error) {
	if pos == nil {
		return nil, errorf(session.CodeInvalidField, "position is required")
	}
	return m.change(owner, id, func(st *State) *session.Error {
		if _, _, err := m.check(st, pos); err != nil {
			return err
		}
		st.Position = *pos
		return nil
	})
}

func (m *Manager) change(owner, id string, f func(*State) *session.Error) (*View, *session.Error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	st, err := m.be.update(m.ctx, id, func(st *State) *session.Error {
		if st.Owner != owner {
			return errorf(CodeNotOwner, "only the client that created broadcast %s changes it", id)
		}
		if st.Ended {
			return errorf(CodeEnded, "broadcast %s has ended", id)
		}
		if err := f(st); err != nil {
			return err
		}
		st.Version++
		st.Changed = time.Now().UTC().Truncate(time.Millisecond)
		return nil
	})
	if err != nil {
		return nil, m.refused(id, err)
	}
	m.be.poke(m.ctx, id)
	return m.view(st)
}

// End ends owner's broadcast id. One whose stored state is gone or
// invalid is given back to its owner (answered not_found or invalid).
func (m *Manager) End(owner, id string) (*View, *session.Error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	st, err := m.be.update(m.ctx, id, func(st *State) *session.Error {
		if st.Owner != owner {
			return errorf(CodeNotOwner, "only the client that created broadcast %s ends it", id)
		}
		st.Ended = true
		return nil
	})
	if err != nil && (err.Code == CodeNotFound || err.Code == CodeInvalid) && m.be.owns(m.ctx, id, owner) {
		m.giveBack(id, owner, err)
		err.Message += "; its place is given back"
		return nil, err
	}
	if err != nil {
		return nil, m.refused(id, err)
	}
	return m.ended(st)
}

// refused passes err on; a broadcast found invalid is ended at once.
func (m *Manager) refused(id string, err *session.Error) *session.Error {
	if err.Code == CodeInvalid {
		m.giveBack(id, "", err)
	}
	return err
}

// giveBack gives back the place of broadcast id, which cannot go on (why:
// its state is gone or invalid, its keys are removed; nil: it has ended
// but is still counted), and has the viewers told once, as ended does:
// only the call that finds the place held goes on, and the search's
// runner, if one runs, sends the end.
func (m *Manager) giveBack(id, owner string, why *session.Error) {
	if !m.be.drop(m.ctx, id, owner, why != nil) {
		return
	}
	if why != nil {
		m.log.Warn("broadcast given back", "broadcast", id, "code", why.Code, "why", why.Message)
	}
	m.be.poke(m.ctx, id)
	if !m.be.held(m.ctx, id) {
		m.finish(id)
	}
}

// expire ends broadcast id if it is still idle (Config.Idle), as its owner
// would; it reports whether the broadcast has ended.
func (m *Manager) expire(id string) bool {
	st, err := m.be.update(m.ctx, id, func(st *State) *session.Error {
		if !st.idle(m.cfg.Idle, time.Now()) {
			return errorf(CodeConflict, "broadcast %s was sent a position meanwhile", id)
		}
		st.Ended = true
		return nil
	})
	if err != nil {
		return false
	}
	m.log.Info("broadcast ended: idle", "broadcast", id, "idle", m.cfg.Idle)
	m.ended(st)
	return true
}

// ended tells every instance of st's end (stored already, with its place
// given back, by update).
func (m *Manager) ended(st *State) (*View, *session.Error) {
	id := st.ID
	m.be.poke(m.ctx, id)
	if !m.be.held(m.ctx, id) {
		// No instance runs its search (it died, and nobody took it over
		// yet): end it here.
		m.finish(id)
	}
	return m.view(st)
}

// finish sends the end of a broadcast whose search runs nowhere: the
// terminal event of a search cut short, then ended.
func (m *Manager) finish(id string) {
	var b batch
	if n, term := m.be.searches(m.ctx, id); n > term && m.be.claimTerm(m.ctx, id, n) {
		b.add(kindTerm, n, 0, cutEvent(id, n))
	}
	m.addEnded(&b, id)
	if len(b.bytes()) > 0 {
		m.be.publish(m.ctx, id, b.bytes())
	}
}

// addEnded adds broadcast id's ended event to b if this is the one call
// to send it (backend.claimEnd): whoever finds the end, the runner, an
// owner's DELETE or a loop giving a place back, viewers get it once.
func (m *Manager) addEnded(b *batch, id string) {
	if m.be.claimEnd(m.ctx, id) {
		b.add(kindEnded, 0, 0, fmt.Appendf(nil, `{"type":"ended","id":%q}`, id))
	}
}

// Get answers GET /v1/broadcasts/{id}.
func (m *Manager) Get(id string) (*View, *session.Error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	st, err := m.be.load(m.ctx, id)
	if err != nil {
		return nil, m.refused(id, err)
	}
	v, err := m.view(st)
	if err != nil {
		return nil, m.refused(id, err)
	}
	return v, nil
}

func (m *Manager) view(st *State) (*View, *session.Error) {
	v := &View{ID: st.ID, Status: "live", Engine: st.Engine, MultiPV: st.MultiPV, Position: st.Position, Ply: len(st.Position.Moves),
		Created: st.Created, Lines: []json.RawMessage{}, Evals: []json.RawMessage{}}
	if st.Ended {
		v.Status = "ended"
	}
	if v.Position.Moves == nil {
		v.Position.Moves = []string{}
	}
	v.Search, _ = m.be.searches(m.ctx, st.ID)
	m.mu.Lock()
	h := m.hubs[st.ID]
	m.mu.Unlock()
	var snap []item
	if h != nil {
		snap = h.snapshot()
		v.Viewers = h.count()
	} else {
		b, err := m.be.snapshot(m.ctx, st.ID)
		if err != nil && err.Code == CodeInvalid {
			return nil, err
		}
		snap = parseStored(b)
	}
	for _, it := range snap {
		if it.kind == kindInfo {
			if l := lineOf(it.json); l != nil {
				v.Lines = append(v.Lines, l)
			}
		}
	}
	evals, err := m.be.evals(m.ctx, st.ID)
	if err != nil && err.Code == CodeInvalid {
		return nil, err
	}
	v.Evals = append(v.Evals, evals...)
	return v, nil
}

// take runs broadcast id's search here if this instance gets its lease.
func (m *Manager) take(id string) {
	m.mu.Lock()
	if m.closed || m.runners[id] != nil || m.cfg.noSearch {
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	if !m.be.acquire(m.ctx, id) {
		return
	}
	st, err := m.be.load(m.ctx, id)
	if err != nil || st.Ended {
		// Listed as active, it cannot go on: its state is gone or invalid,
		// or it ended without its place given back. The place comes back
		// (once, whoever finds it: the viewers are told once).
		m.be.release(m.ctx, id)
		switch {
		case err == nil:
			m.giveBack(id, st.Owner, nil)
		case err.Code == CodeNotFound || err.Code == CodeInvalid:
			m.giveBack(id, "", err)
		}
		return
	}
	if p := m.cfg.Service.Pool; p != nil && !slices.Contains(p.Engines(), st.Engine) {
		m.be.release(m.ctx, id) // another instance may have it
		return
	}
	m.mu.Lock()
	if m.closed || m.runners[id] != nil {
		m.mu.Unlock()
		m.be.release(m.ctx, id)
		return
	}
	r := newRunner(m, st)
	m.runners[id] = r
	m.mu.Unlock()
	go r.run()
}

// loop renews this instance's leases and takes free ones over.
func (m *Manager) loop() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.Check)
	defer t.Stop()
	ticks := 0
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		mine := slices.Collect(maps.Values(m.runners))
		m.mu.Unlock()
		for _, r := range mine {
			if !m.be.renew(m.ctx, r.id) {
				m.log.Warn("broadcast lease lost; its search stops here", "broadcast", r.id)
				r.halt(false)
				continue
			}
			r.poke() // a change whose message was lost is seen within a Check
		}
		for _, id := range m.be.active(m.ctx) {
			m.take(id)
		}
		if ticks++; ticks%repairEvery == 0 && m.be.lossy() {
			m.repairAll()
		}
	}
}

// runnerDone forgets runner r.
func (m *Manager) runnerDone(r *runner) {
	m.mu.Lock()
	if m.runners[r.id] == r {
		delete(m.runners, r.id)
	}
	m.mu.Unlock()
}

// poked is a change of broadcast id, from any instance.
func (m *Manager) poked(id string) {
	m.mu.Lock()
	r := m.runners[id]
	m.mu.Unlock()
	if r != nil {
		r.poke()
	}
}
