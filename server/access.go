package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// Access configures who may use the server and how much.
type Access struct {
	// Keys maps API key names (for logs and quotas) to secrets. With no keys
	// every client is anonymous.
	Keys map[string]string
	// Anonymous allows clients without a key, with the Anonymous quota.
	// With Anonymous false the service is closed: only key holders are
	// served, and with no keys nobody is (Check refuses that configuration,
	// so that a missing key file cannot leave a closed service open).
	Anonymous bool
	// Quotas per client: Keyed for API keys, Anonymous for everyone else
	// (counted per client IP).
	Keyed, AnonymousQuota Quota
	// MaxSessions caps WebSocket sessions over all clients (0: 10000).
	MaxSessions int
	// MaxSessionsPerAddress caps WebSocket sessions from one client address
	// (an IPv4 address or an IPv6 /64), keyed or not, so that no address can
	// take the whole MaxSessions (0: MaxSessions/20, at least 16).
	MaxSessionsPerAddress int
	// MaxSessionsPerNetwork caps them from one network, keyed or not: an
	// IPv4 /24 or IPv6 /64, a /56 twice that, a /48 four times
	// (session.Places) (0: MaxSessionsPerAddress).
	MaxSessionsPerNetwork int
	// MaxClients bounds the identities tracked at once (0: 50000). Past
	// it, a new identity takes the place of the least recently active one
	// that holds no session or lease, so forged addresses cost no memory
	// and lock nobody out (see table).
	MaxClients int
	// TrustedProxies are the networks whose X-Forwarded-For is believed; a
	// client's IP is otherwise the connection's address.
	TrustedProxies []netip.Prefix
	// TicketSecret signs WebSocket tickets; random per process when empty
	// (set it when several pods serve the same clients). At least
	// MinTicketSecret bytes: a short secret can be recovered from a ticket.
	TicketSecret []byte
	// TicketTTL is how long a WebSocket ticket is good for (60s).
	TicketTTL time.Duration
	// Budgets keeps each client's engine-time balance (Quota.EngineTime):
	// in this process (nil: a quota.Memory), or in Redis so that every pod
	// enforces one budget (quota.Redis).
	Budgets quota.Store
}

// Quota bounds one client. The scarce thing is engine time: EngineTime is
// the budget; Rate and Burst only guard against floods of requests (a
// client that waits for each answer never meets them).
type Quota struct {
	// EngineTime is the engine-seconds a client's searches may hold per
	// period (a token bucket charged with each search's real time, from go
	// to bestmove). Zero fields take the defaults; seconds: -1 is no limit.
	EngineTime quota.Budget `yaml:"engine_time"`
	Rate       float64      `yaml:"rate"` // search requests (REST analyze/mate, WebSocket analyze/go/mate, game analyses) per second
	Burst      int          `yaml:"burst"`
	Sessions   int          `yaml:"sessions"` // open WebSocket sessions
	Leases     int          `yaml:"leases"`   // engine leases at once: REST searches in flight plus WebSocket sessions
	// Messages is a flood guard over every WebSocket message (control
	// messages such as newgame, gameover, setoption and stop included, and
	// malformed ones), per second, with a burst of twice that.
	Messages float64 `yaml:"messages"`
	// Reads is a flood guard over the GET routes of /v1 (a game analysis,
	// engines, limits), per second, with a burst of twice that: answering
	// a read costs CPU too (issue 35: a 280 KB job took 10 ms per GET).
	Reads float64 `yaml:"reads"`
}

// WithDefaults returns a copy of a with the defaults the server applies
// filled in: those documented on its fields; quotas keyed rate 20, burst 40,
// 64 sessions, 64 leases, anonymous 5, 20, 4, 4, messages 50 for both; a
// random TicketSecret when none is set; reads keyed 100, anonymous 50.
func (a *Access) WithDefaults() *Access {
	c := *a
	def := func(q *Quota, engine quota.Budget, r float64, b, s, l int, reads float64) {
		if q.Reads <= 0 {
			q.Reads = reads
		}
		switch {
		case q.EngineTime.Seconds < 0:
			q.EngineTime = quota.Budget{} // no limit
		case q.EngineTime.Seconds == 0:
			q.EngineTime.Seconds = engine.Seconds
		}
		if q.EngineTime.Seconds > 0 && q.EngineTime.Period <= 0 {
			q.EngineTime.Period = engine.Period
		}
		if q.EngineTime.Seconds > 0 && q.EngineTime.Burst <= 0 {
			q.EngineTime.Burst = engine.Burst * q.EngineTime.Seconds / engine.Seconds
		}
		if q.EngineTime.Seconds > 0 && q.EngineTime.InteractiveShare == 0 {
			q.EngineTime.InteractiveShare = quota.DefaultInteractiveShare
		}
		if q.Messages <= 0 {
			q.Messages = 50
		}
		if q.Rate <= 0 {
			q.Rate = r
		}
		if q.Burst <= 0 {
			q.Burst = b
		}
		if q.Sessions <= 0 {
			q.Sessions = s
		}
		if q.Leases <= 0 {
			q.Leases = l
		}
	}
	// Anonymous: an engine's whole time, on average, and two minutes saved
	// up; a client searching one position after another never runs out.
	// Keyed: four engines' time. The rates are flood guards only.
	def(&c.Keyed, quota.Budget{Seconds: 240, Period: time.Minute, Burst: 600}, 100, 200, 64, 64, 100)
	def(&c.AnonymousQuota, quota.Budget{Seconds: 60, Period: time.Minute, Burst: 120}, 50, 100, 4, 4, 50)
	if c.MaxSessions <= 0 {
		c.MaxSessions = 10000
	}
	if c.MaxSessionsPerAddress <= 0 {
		c.MaxSessionsPerAddress = max(c.MaxSessions/20, 16)
	}
	if c.MaxSessionsPerNetwork <= 0 {
		c.MaxSessionsPerNetwork = c.MaxSessionsPerAddress
	}
	if c.MaxClients <= 0 {
		c.MaxClients = 50000
	}
	if c.TicketTTL <= 0 {
		c.TicketTTL = time.Minute
	}
	if len(c.TicketSecret) == 0 {
		c.TicketSecret = make([]byte, 32)
		rand.Read(c.TicketSecret)
	}
	if c.Budgets == nil {
		c.Budgets = quota.NewMemory(quota.MemoryConfig{MaxClients: c.MaxClients})
	}
	return &c
}

// Check refuses an access configuration that would not do what it says: a
// closed service (Anonymous false) without a single key, which would refuse
// everyone, or open to everyone if the check were skipped.
func (a *Access) Check() error {
	if !a.Anonymous && len(a.Keys) == 0 {
		return errors.New("access.anonymous is false but no API key is configured (access.keys_file is empty or missing, USID_API_KEYS is empty): a closed service needs at least one key")
	}
	if err := a.Keyed.EngineTime.CheckShare(); err != nil {
		return fmt.Errorf("access.keyed.engine_time: %w", err)
	}
	if err := a.AnonymousQuota.EngineTime.CheckShare(); err != nil {
		return fmt.Errorf("access.anonymous_quota.engine_time: %w", err)
	}
	if n := len(a.TicketSecret); n > 0 && n < MinTicketSecret {
		return fmt.Errorf("the ticket secret has %d bytes; at least %d are required (a short secret can be guessed from one ticket)", n, MinTicketSecret)
	}
	return nil
}

// MinTicketSecret is the shortest ticket secret accepted, in bytes: as long
// as the HMAC-SHA-256 key it becomes.
const MinTicketSecret = 32

// gate keeps the per-client state. Entries of idle clients are dropped.
type gate struct {
	cfg *Access
	// misconfigured is Access.Check's verdict: when set, every request is
	// refused (callers are expected to Check first; this keeps a server
	// built without it closed rather than open).
	misconfigured error
	// keyHashes holds SHA-256 of each key, compared in constant time.
	keyHashes map[string][32]byte

	clients table
	// overflow stands in for a new identity while every tracked entry is
	// busy (table.get).
	overflow *client
	// sessions counts WebSocket sessions per address, per network and
	// in all.
	sessions session.Places

	tickets usedTickets
}

// usedTickets remembers the tickets already presented until they expire, so
// that each is good for one connection. Memory is bounded: entries leave at
// their expiry (at most TicketTTL after issue), and past maxUsedTickets
// live entries new tickets are refused rather than remembered.
type usedTickets struct {
	mu    sync.Mutex
	used  map[string]int64 // MAC -> expiry (Unix seconds)
	sweep int64
}

const maxUsedTickets = 100000

// use records ticket mac as used; it refuses one used before, and any when
// the table is full.
func (u *usedTickets) use(mac string, exp, now int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.used == nil {
		u.used = map[string]int64{}
	}
	if now != u.sweep && (len(u.used) >= maxUsedTickets || now-u.sweep >= 10) {
		u.sweep = now
		for k, e := range u.used {
			if e < now {
				delete(u.used, k)
			}
		}
	}
	if _, ok := u.used[mac]; ok {
		return errors.New("already used (a ticket opens one connection)")
	}
	if len(u.used) >= maxUsedTickets {
		return errors.New("too many tickets in flight; retry shortly")
	}
	u.used[mac] = exp
	return nil
}

func newGate(a *Access) *gate {
	g := &gate{cfg: a.WithDefaults(), keyHashes: map[string][32]byte{}, misconfigured: a.Check()}
	g.clients.max, g.clients.seed = int64(g.cfg.MaxClients), maphash.MakeSeed()
	g.overflow = newClient("ip:overflow", g.cfg.AnonymousQuota)
	for name, k := range g.cfg.Keys {
		g.keyHashes[name] = sha256.Sum256([]byte(k))
	}
	return g
}

type ctxKey struct{}

// identify finds who is asking: an API key (Authorization: Bearer, or
// X-API-Key), a WebSocket ticket, or an anonymous IP. It refuses a wrong key
// and, when anonymous use is off, a missing one.
func (g *gate) identify(r *http.Request) (*client, *session.Error) {
	if g.misconfigured != nil {
		return nil, &session.Error{Code: codeUnauthorized, Message: "access is misconfigured; nobody is served", MoveIndex: -1}
	}
	key := r.Header.Get("X-API-Key")
	if h := r.Header.Get("Authorization"); h != "" {
		// RFC 9110 11.1: the scheme is case-insensitive ("bearer" is Bearer).
		scheme, cred, _ := strings.Cut(strings.TrimSpace(h), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, &session.Error{Code: codeUnauthorized, Message: "the Authorization scheme must be Bearer", MoveIndex: -1}
		}
		key = strings.TrimSpace(cred)
		if key == "" {
			return nil, &session.Error{Code: codeUnauthorized, Message: "Authorization: Bearer without a key", MoveIndex: -1}
		}
	}
	var name string
	switch {
	case key != "":
		name = g.checkKey(key)
		if name == "" {
			return nil, &session.Error{Code: codeUnauthorized, Message: "unknown API key", MoveIndex: -1}
		}
	case r.URL.Query().Get("ticket") != "" && r.URL.Path == "/v1/ws":
		var err error
		if name, err = g.checkTicket(r.URL.Query().Get("ticket")); err != nil {
			return nil, &session.Error{Code: codeUnauthorized, Message: "WebSocket ticket: " + err.Error(), MoveIndex: -1}
		}
	case !g.cfg.Anonymous:
		return nil, &session.Error{Code: codeUnauthorized, Message: "an API key is required (Authorization: Bearer <key>)", MoveIndex: -1}
	}
	id, quota := "key:"+name, g.cfg.Keyed
	if name == "" {
		id, quota = "ip:"+g.clientIP(r), g.cfg.AnonymousQuota
	}
	return g.clients.get(id, func() *client { return newClient(id, quota) }, g.overflow), nil
}

func newClient(id string, quota Quota) *client {
	return &client{id: id, quota: quota, limiter: rate.NewLimiter(rate.Limit(quota.Rate), quota.Burst),
		messages: rate.NewLimiter(rate.Limit(quota.Messages), int(2*quota.Messages)+1),
		reads:    rate.NewLimiter(rate.Limit(quota.Reads), int(2*quota.Reads)+1)}
}

// checkKey returns the name of the key, or "". Every configured key is
// compared, in constant time, so timing tells nothing about which is close.
func (g *gate) checkKey(key string) string {
	h := sha256.Sum256([]byte(key))
	found := ""
	for name, kh := range g.keyHashes {
		if subtle.ConstantTimeCompare(h[:], kh[:]) == 1 {
			found = name
		}
	}
	return found
}

// clientIP is the connection's address, or, when the connection comes from
// a trusted proxy, the rightmost address of X-Forwarded-For that is not a
// trusted proxy's. Every X-Forwarded-For line counts, in order (a proxy may
// add its own line rather than extend the first). IPv6 addresses are
// aggregated to their /64, the block one subscriber typically holds.
func (g *gate) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0 && g.trusted(addr); i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = a
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

func (g *gate) trusted(a netip.Addr) bool {
	for _, p := range g.cfg.TrustedProxies {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// allow takes one search request from the client's rate, and lets it
// search only while its engine-time budget is not spent.
func (g *gate) allow(ctx context.Context, c *client) *session.Error {
	if !c.limiter.Allow() {
		return &session.Error{Code: session.CodeTooManyRequests, Message: "search requests arrive faster than this client's rate allows", MoveIndex: -1}
	}
	b := c.quota.EngineTime
	if b.Unlimited() {
		return nil
	}
	if wait := g.cfg.Budgets.Allow(ctx, c.id, b); wait > 0 {
		wait = wait.Truncate(time.Second) + time.Second // whole seconds, never early: as Retry-After says it
		return &session.Error{Code: session.CodeTooManyRequests, MoveIndex: -1, Retry: wait,
			Message: fmt.Sprintf("this client's engine time is spent (%g engine-seconds per %v, %g saved up at most); retry in %ds", b.Seconds, b.Period, b.Burst, int(wait.Seconds()))}
	}
	return nil
}

// caller is whom c's searches are for: its identity, and its budget to
// charge their engine time to (REST, WebSocket and game analysis alike).
func (g *gate) caller(c *client) session.Caller {
	who := session.Caller{Client: c.id, Networks: networksOf(c.id)}
	if b := c.quota.EngineTime; !b.Unlimited() {
		who.Budget = budget{g.cfg.Budgets, c.id, b}
	}
	return who
}

// networksOf is the networks of an anonymous client ("ip:ADDR", or an
// IPv6 "ip:PREFIX/64"), for the bounds its neighbours share
// (session.Caller.Networks). A key's clients have none: the key is
// bounded as one client.
func networksOf(id string) []string {
	s, ok := strings.CutPrefix(id, "ip:")
	if !ok {
		return nil
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return session.NetworksOf(p.Addr())
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return nil // not an address (an odd RemoteAddr): counted as itself
	}
	return session.NetworksOf(a)
}

// CallerFor is whom the searches of client id (as identified: "key:NAME"
// or "ip:ADDR") are for, with the budget its quota gives it: a game job
// that an instance takes over from another (review.Manager.SetCallers).
func (s *Server) CallerFor(id string) session.Caller {
	q := s.gate.cfg.AnonymousQuota
	if strings.HasPrefix(id, "key:") {
		q = s.gate.cfg.Keyed
	}
	return s.gate.caller(&client{id: id, quota: q})
}

// budget is one client's engine-time balance, as a search takes and
// settles it (session.Budget).
type budget struct {
	store quota.Store
	id    string
	b     quota.Budget
}

func (x budget) Take(ctx context.Context, d time.Duration) time.Duration {
	return x.store.Take(ctx, x.id, x.b, d)
}

func (x budget) TakeBackground(ctx context.Context, d time.Duration) time.Duration {
	return x.store.TakeBackground(ctx, x.id, x.b, d)
}

func (x budget) TakeUpTo(ctx context.Context, d time.Duration, background bool) (time.Duration, time.Duration) {
	return x.store.TakeUpTo(ctx, x.id, x.b, d, background)
}

func (x budget) Charge(ctx context.Context, d time.Duration) { x.store.Charge(ctx, x.id, x.b, d) }

// allowMessage takes one WebSocket message from the client's flood guard.
func (g *gate) allowMessage(c *client) *session.Error {
	if c.messages.Allow() {
		return nil
	}
	return &session.Error{Code: session.CodeTooManyRequests, Message: "messages arrive faster than this client's flood guard allows", MoveIndex: -1}
}

// takeLease counts a REST search in flight; the returned func gives it back.
func (g *gate) takeLease(c *client) (func(), *session.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leases+c.sessions >= c.quota.Leases {
		return nil, &session.Error{Code: session.CodeTooManyRequests, Message: "this client holds as many engines as its quota allows", MoveIndex: -1}
	}
	c.leases++
	return func() {
		c.mu.Lock()
		c.leases--
		c.mu.Unlock()
	}, nil
}

// takeSession counts a WebSocket session (it may hold an engine) for
// client c and for the address of r and its networks; the returned func
// gives it back.
func (g *gate) takeSession(c *client, r *http.Request) (func(), *session.Error) {
	ip := g.clientIP(r)
	addr, nets := "addr:"+ip, networksOf("ip:"+ip)
	bounds := session.Bounds{PerClient: g.cfg.MaxSessionsPerAddress, PerNetwork: g.cfg.MaxSessionsPerNetwork, Total: g.cfg.MaxSessions}
	if f := g.sessions.Take(addr, nets, bounds); f != nil {
		msg := "the server has as many sessions as it takes"
		switch f.What {
		case "client":
			msg = "this address has as many sessions as one address may"
		case "network":
			msg = fmt.Sprintf("the addresses of network %s have %d sessions, as many as one network may", strings.TrimPrefix(f.Network, "net:"), f.Max)
		}
		return nil, &session.Error{Code: session.CodeTooManyRequests, Message: msg, MoveIndex: -1}
	}
	c.mu.Lock()
	if c.sessions >= c.quota.Sessions || c.leases+c.sessions >= c.quota.Leases {
		c.mu.Unlock()
		g.sessions.Give(addr, nets)
		return nil, &session.Error{Code: session.CodeTooManyRequests, Message: "this client has as many sessions as its quota allows", MoveIndex: -1}
	}
	c.sessions++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.sessions--
		c.mu.Unlock()
		g.sessions.Give(addr, nets)
	}, nil
}

// ticket returns a WebSocket ticket for key name: "<name>.<expiry>.<mac>",
// so that a browser, which cannot set headers on a WebSocket, can present
// the identity in the URL for a short while.
func (g *gate) ticket(name string) (string, time.Time) {
	exp := time.Now().Add(g.cfg.TicketTTL).Truncate(time.Second)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(exp.Unix()))
	payload := base64.RawURLEncoding.EncodeToString([]byte(name)) + "." + base64.RawURLEncoding.EncodeToString(b[:])
	return payload + "." + g.mac(payload), exp
}

func (g *gate) mac(payload string) string {
	m := hmac.New(sha256.New, g.cfg.TicketSecret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (g *gate) checkTicket(t string) (string, error) {
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return "", errors.New("malformed")
	}
	payload := parts[0] + "." + parts[1]
	if !hmac.Equal([]byte(parts[2]), []byte(g.mac(payload))) {
		return "", errors.New("bad signature")
	}
	nameB, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	expB, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err1 != nil || err2 != nil || len(expB) != 8 {
		return "", errors.New("malformed")
	}
	now, exp := time.Now().Unix(), int64(binary.BigEndian.Uint64(expB))
	if now > exp {
		return "", errors.New("expired")
	}
	// No ticket outlives its TTL, even one signed with a leaked secret.
	if exp > now+int64(g.cfg.TicketTTL/time.Second)+1 {
		return "", errors.New("expiry beyond the ticket lifetime")
	}
	if _, ok := g.keyHashes[string(nameB)]; !ok {
		return "", errors.New("its key is no longer configured")
	}
	if err := g.tickets.use(parts[2], exp, now); err != nil {
		return "", err
	}
	return string(nameB), nil
}

// authenticate is middleware: it identifies the client of every /v1 request
// and puts it in the request's context.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.gate.identify(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="usid"`)
			s.problem(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, c)))
	})
}

func clientOf(r *http.Request) *client { return r.Context().Value(ctxKey{}).(*client) }

// wsTicket answers POST /v1/ws-ticket for a client with an API key.
func (s *Server) wsTicket(w http.ResponseWriter, r *http.Request) {
	c := clientOf(r)
	name, ok := strings.CutPrefix(c.id, "key:")
	if !ok {
		s.problem(w, r, &session.Error{Code: codeUnauthorized, Message: "tickets are for API key holders", MoveIndex: -1})
		return
	}
	t, exp := s.gate.ticket(name)
	writeJSON(w, http.StatusOK, map[string]any{"ticket": t, "expires_at": exp.UTC().Format(time.RFC3339)})
}
