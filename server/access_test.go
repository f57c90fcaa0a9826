package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/session"
)

// withAccess serves the shared engines through a server with other access rules.
func withAccess(t *testing.T, a *Access) (*Server, *httptest.Server) {
	cfg := shared.srv.cfg
	cfg.Access, cfg.Registerer = a, nil
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
		hs.Close()
	})
	return srv, hs
}

func do(t *testing.T, method, url, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := checkedClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

func wsDial(t *testing.T, base, query string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws"+query, &websocket.DialOptions{HTTPHeader: hdr})
	if c != nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, resp, err
}

func TestAPIKeys(t *testing.T) {
	srv, hs := withAccess(t, &Access{Keys: map[string]string{"alice": "alice-secret", "bob": "bob-secret"}})
	for _, tt := range []struct {
		key    string
		header string
		status int
	}{
		{"", "", 401}, {"wrong", "", 401}, {"alice-secret", "", 200}, {"bob-secret", "X-API-Key", 200}, {"alice-secret-", "", 401},
	} {
		req, _ := http.NewRequest("GET", hs.URL+"/v1/engines", nil)
		if tt.header != "" {
			req.Header.Set(tt.header, tt.key)
		} else if tt.key != "" {
			req.Header.Set("Authorization", "Bearer "+tt.key)
		}
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.status == 401 && resp.Header.Get("WWW-Authenticate") == "") {
			t.Errorf("key %q: %d, want %d", tt.key, resp.StatusCode, tt.status)
		}
	}
	// Health, readiness and metrics stay open for probes and scrapers.
	if resp, _ := do(t, "GET", hs.URL+"/readyz", "", ""); resp.StatusCode != 200 {
		t.Errorf("/readyz without a key: %d", resp.StatusCode)
	}

	// Browsers: a ticket from the key, then the WebSocket with the ticket.
	if _, _, err := wsDial(t, hs.URL, "", nil); err == nil {
		t.Error("a WebSocket without key or ticket was accepted")
	}
	resp, body := do(t, "POST", hs.URL+"/v1/ws-ticket", "alice-secret", "")
	ticket := between(body, `"ticket":"`, `"`)
	if resp.StatusCode != 200 || ticket == "" {
		t.Fatalf("ticket: %d %s", resp.StatusCode, body)
	}
	if _, _, err := wsDial(t, hs.URL, "?ticket="+ticket, nil); err != nil {
		t.Errorf("WebSocket with a ticket: %v", err)
	}
	tampered := ticket[:len(ticket)-2] + "xx"
	if _, resp, err := wsDial(t, hs.URL, "?ticket="+tampered, nil); err == nil || resp.StatusCode != 401 {
		t.Errorf("tampered ticket accepted (%v)", err)
	}
	srv.gate.cfg.TicketTTL = -time.Minute
	old, _ := srv.gate.ticket("alice")
	if _, err := srv.gate.checkTicket(old); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired ticket: %v", err)
	}
	if _, _, err := wsDial(t, hs.URL, "", http.Header{"Authorization": {"Bearer bob-secret"}}); err != nil {
		t.Errorf("WebSocket with a key header: %v", err)
	}
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}

// TestRateLimits: a client over its rate gets 429 with Retry-After over REST
// and an error event over the WebSocket; other clients are not affected.
func TestRateLimits(t *testing.T) {
	_, hs := withAccess(t, &Access{Keys: map[string]string{"k": "key-k"}, Anonymous: true,
		AnonymousQuota: Quota{Rate: 0.01, Burst: 2, Sessions: 5, Leases: 5}})
	body := `{"engine":"fairy","limits":{"depth":1}}`
	for i, want := range []int{200, 200, 429} {
		resp, b := do(t, "POST", hs.URL+"/v1/analyze", "", body)
		if resp.StatusCode != want {
			t.Errorf("anonymous request %d: %d %s, want %d", i+1, resp.StatusCode, b, want)
		}
		if want == 429 && (resp.Header.Get("Retry-After") == "" || !strings.Contains(b, `"too_many_requests"`)) {
			t.Errorf("429 without Retry-After or code: %v %s", resp.Header, b)
		}
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", "key-k", body); resp.StatusCode != 200 {
		t.Errorf("a keyed client is limited by the anonymous one: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, "POST", hs.URL+"/v1/validate", "", `{}`); resp.StatusCode != 200 {
		t.Errorf("validate is not a search and is not rate limited: %d", resp.StatusCode)
	}
	c, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"x","engine":"fairy","limits":{"depth":1}}`))
	_, msg, err := c.Read(t.Context())
	if err != nil || !strings.Contains(string(msg), `"too_many_requests"`) || !strings.Contains(string(msg), `"id":"x"`) {
		t.Errorf("WebSocket over the rate: %s %v", msg, err)
	}
}

// TestQuotas: sessions per client, engines per client, sessions overall.
func TestQuotas(t *testing.T) {
	_, hs := withAccess(t, &Access{Keys: map[string]string{"a": "key-a", "b": "key-b"}, Anonymous: true, MaxSessions: 2,
		AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 1, Leases: 1}})
	if _, _, err := wsDial(t, hs.URL, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := wsDial(t, hs.URL, "", nil); err == nil || resp.StatusCode != 429 {
		t.Errorf("second anonymous session: %v", err)
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", "", `{"engine":"fairy","limits":{"depth":1}}`); resp.StatusCode != 429 {
		t.Errorf("REST search while the session holds the client's only engine: %d %s", resp.StatusCode, b)
	}
	if _, _, err := wsDial(t, hs.URL, "", http.Header{"X-API-Key": {"key-a"}}); err != nil {
		t.Errorf("keyed session: %v", err)
	}
	if _, resp, err := wsDial(t, hs.URL, "", http.Header{"X-API-Key": {"key-b"}}); err == nil || resp.StatusCode != 429 {
		t.Errorf("a third session with max_sessions 2: %v", err)
	}
}

func TestClientIP(t *testing.T) {
	g := newGate(&Access{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	tests := []struct{ remote, xff, want string }{
		{"203.0.113.5:1234", "", "203.0.113.5"},
		{"203.0.113.5:1234", "1.2.3.4", "203.0.113.5"}, // untrusted peers cannot pick their IP
		{"10.1.2.3:1234", "198.51.100.7", "198.51.100.7"},
		{"10.1.2.3:1234", "1.1.1.1, 198.51.100.7, 10.9.9.9", "198.51.100.7"},
		{"10.1.2.3:1234", "garbage", "10.1.2.3"},
		{"[::ffff:10.1.2.3]:80", "198.51.100.8", "198.51.100.8"},
		{"10.1.2.3:1234", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"}, // IPv6: one /64 is one client
		{"[2001:db8:9:9::1]:80", "", "2001:db8:9:9::/64"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		if got := g.clientIP(r); got != tt.want {
			t.Errorf("clientIP(%s, XFF %q) = %s, want %s", tt.remote, tt.xff, got, tt.want)
		}
	}
}

// TestOrigins: browsers may open the WebSocket from usid's own origin and the
// configured patterns only; clients without an Origin (not browsers) may.
func TestOrigins(t *testing.T) {
	hs := ownServer(t, func(c *Config) { c.OriginPatterns = []string{"board.example.com"} })
	host := strings.TrimPrefix(hs.URL, "http://")
	for origin, ok := range map[string]bool{"": true, "http://" + host: true, "https://board.example.com": true, "https://evil.example": false} {
		hdr := http.Header{}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		c, resp, err := wsDial(t, hs.URL, "", hdr)
		if ok != (err == nil) {
			t.Errorf("Origin %q: err %v, want allowed %v", origin, err, ok)
		}
		if !ok && resp != nil && resp.StatusCode != 403 {
			t.Errorf("Origin %q: status %d, want 403", origin, resp.StatusCode)
		}
		if c != nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}
}

// TestKeepalive: an idle connection whose peer answers pings stays open; one
// whose peer does not (it never reads) is closed after a ping interval.
func TestKeepalive(t *testing.T) {
	cfg := shared.srv.cfg
	cfg.Registerer, cfg.PingInterval = nil, 100*time.Millisecond
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Drain(context.Background())
	open := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.sessions)
	}
	live, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	go live.Read(context.Background())                       // reading answers pings
	if _, _, err := wsDial(t, hs.URL, "", nil); err != nil { // never reads
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for open() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open, want only the one that answers pings", open())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if open() != 1 {
		t.Errorf("the live connection was closed")
	}
}

// TestTickets: short secrets are refused; a ticket signed with the secret
// but an expiry past issue time + TTL is refused; a ticket opens one
// connection only.
func TestTickets(t *testing.T) {
	if err := (&Access{Anonymous: true, TicketSecret: []byte("x")}).Check(); err == nil {
		t.Error("a 1-byte ticket secret was accepted")
	}
	secret := []byte(strings.Repeat("s", MinTicketSecret))
	if err := (&Access{Anonymous: true, TicketSecret: secret}).Check(); err != nil {
		t.Errorf("a %d-byte secret: %v", MinTicketSecret, err)
	}
	srv, hs := withAccess(t, &Access{Keys: map[string]string{"alice": "alice-secret"}, TicketSecret: secret})
	// Forged with the secret (as an attacker who recovered it would): an
	// hour of validity instead of the minute a ticket gets.
	srv.gate.cfg.TicketTTL = time.Hour
	forged, _ := srv.gate.ticket("alice")
	srv.gate.cfg.TicketTTL = time.Minute
	if _, resp, err := wsDial(t, hs.URL, "?ticket="+forged, nil); err == nil || resp.StatusCode != 401 {
		t.Errorf("a ticket valid for an hour was accepted (%v)", err)
	}
	_, body := do(t, "POST", hs.URL+"/v1/ws-ticket", "alice-secret", "")
	ticket := between(body, `"ticket":"`, `"`)
	c, _, err := wsDial(t, hs.URL, "?ticket="+ticket, nil)
	if err != nil {
		t.Fatalf("fresh ticket: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if _, resp, err := wsDial(t, hs.URL, "?ticket="+ticket, nil); err == nil || resp.StatusCode != 401 {
		t.Errorf("a replayed ticket was accepted (%v)", err)
	}
	// A server built with a short secret without calling Check serves nobody.
	_, bad := withAccess(t, &Access{Anonymous: true, TicketSecret: []byte("x")})
	if resp, _ := do(t, "GET", bad.URL+"/v1/engines", "", ""); resp.StatusCode != 401 {
		t.Errorf("misconfigured server answered %d", resp.StatusCode)
	}
}

// TestUsedTicketsBounded: used tickets are forgotten at their expiry.
func TestUsedTicketsBounded(t *testing.T) {
	var u usedTickets
	for i := range 1000 {
		if err := u.use(strconv.Itoa(i), 100, 50); err != nil {
			t.Fatal(err)
		}
	}
	if u.use("7", 100, 60) == nil {
		t.Error("replay accepted")
	}
	u.use("new", 300, 200)
	if len(u.used) != 1 {
		t.Errorf("%d used tickets remembered after their expiry, want 1", len(u.used))
	}
}

// TestBearerSchemeCase: the Authorization scheme is case-insensitive (RFC
// 9110 11.1); other schemes are refused.
func TestBearerSchemeCase(t *testing.T) {
	_, hs := withAccess(t, &Access{Keys: map[string]string{"alice": "alice-secret"}})
	for h, want := range map[string]int{
		"Bearer alice-secret": 200, "bearer alice-secret": 200, "BEARER alice-secret": 200, "Bearer  alice-secret": 200,
		"Basic alice-secret": 401, "bearer": 401, "alice-secret": 401, "Bearer wrong": 401,
	} {
		req, _ := http.NewRequest("GET", hs.URL+"/v1/engines", nil)
		req.Header.Set("Authorization", h)
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization: %s: %d, want %d", h, resp.StatusCode, want)
		}
	}
}

// TestForwardedForLines: every X-Forwarded-For line counts; a client cannot
// hide behind a second line that the proxy appended.
func TestForwardedForLines(t *testing.T) {
	g := newGate(&Access{Anonymous: true, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:1234"
	r.Header.Add("X-Forwarded-For", "1.1.1.1")                // forged by the client
	r.Header.Add("X-Forwarded-For", "198.51.100.7, 10.9.9.9") // the proxies' own
	if got := g.clientIP(r); got != "198.51.100.7" {
		t.Errorf("clientIP = %s, want 198.51.100.7 (rightmost untrusted over all lines)", got)
	}
}

// TestClientTableBounded: forged identities beyond MaxClients cost no
// memory (800k forged addresses took 393 MB before the table was bounded),
// and a new address past the cap still gets its own identity, in the place
// of the least recently active one (issue 25).
func TestClientTableBounded(t *testing.T) {
	g := newGate(&Access{Anonymous: true, MaxClients: 1000, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		AnonymousQuota: Quota{Rate: 1, Burst: 1}})
	for i := range 100000 {
		r := httptest.NewRequest("GET", "/v1/engines", nil)
		r.RemoteAddr = "10.0.0.1:1"
		r.Header.Set("X-Forwarded-For", netip.AddrFrom4([4]byte{198, byte(i >> 16), byte(i >> 8), byte(i)}).String())
		if _, err := g.identify(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.clients.n.Load(); n > 1000 {
		t.Errorf("%d identities tracked, want at most 1000", n)
	}
	r := httptest.NewRequest("GET", "/v1/engines", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("X-Forwarded-For", "203.0.113.200")
	if c, _ := g.identify(r); c.id != "ip:203.0.113.200" {
		t.Errorf("a new address past the cap got identity %s, want its own", c.id)
	}
}

// TestSessionsPerAddress: one address, even with a key of a large quota,
// cannot take every session of the server.
func TestSessionsPerAddress(t *testing.T) {
	_, hs := withAccess(t, &Access{Keys: map[string]string{"big": "big-key-big-key"}, MaxSessions: 10, MaxSessionsPerAddress: 2,
		Keyed: Quota{Rate: 100, Burst: 100, Sessions: 100, Leases: 100}})
	hdr := http.Header{"X-API-Key": {"big-key-big-key"}}
	for i := range 2 {
		if _, _, err := wsDial(t, hs.URL, "", hdr); err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
	}
	if _, resp, err := wsDial(t, hs.URL, "", hdr); err == nil || resp.StatusCode != 429 {
		t.Errorf("a third session from one address with max_sessions_per_address 2: %v", err)
	}
}

// BenchmarkForgedIdentities: 800k requests, each with a new forged
// X-Forwarded-For address, through the default identity table (50,000
// identities at most): the time per request and the heap the table holds
// afterwards (issue 16 item 5: 393 MB of RSS before the table was bounded).
//
//	go test -run '^$' -bench ForgedIdentities -benchtime 1x ./server/
func BenchmarkForgedIdentities(b *testing.B) {
	const forged = 800_000
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g := newGate((&Access{Anonymous: true, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}).WithDefaults())
		r := httptest.NewRequest("GET", "/v1/engines", nil)
		r.RemoteAddr = "10.0.0.1:1"
		start := time.Now()
		for i := range forged {
			r.Header.Set("X-Forwarded-For", netip.AddrFrom4([4]byte{198, byte(i >> 16), byte(i >> 8), byte(i)}).String())
			if _, err := g.identify(r); err != nil {
				b.Fatal(err)
			}
		}
		took := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(took.Nanoseconds())/forged, "ns/identify")
		b.ReportMetric(float64(after.HeapInuse-min(before.HeapInuse, after.HeapInuse))/1e6, "MB-heap")
		b.ReportMetric(float64(g.clients.n.Load()), "identities")
		b.ReportMetric(float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc))/1e6, "MB-alloc")
		runtime.KeepAlive(g)
	}
}

// forgedRequest is a request from addr through a trusted proxy (10.0.0.1).
func forgedRequest(addr string) *http.Request {
	r := httptest.NewRequest("GET", "/v1/ws", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("X-Forwarded-For", addr)
	return r
}

// TestOverflowNewcomersNotLockedOut (issue 25): past max_clients, new
// addresses are not all one client. The table was filled with idle
// identities, then an attacker from two new addresses opened two sessions:
// every first-time visitor was refused (429), because all new addresses
// shared one overflow identity whose address entry was the same object
// (each session counted twice against a quota of 4).
func TestOverflowNewcomersNotLockedOut(t *testing.T) {
	const maxClients = 256
	g := newGate(&Access{Anonymous: true, MaxClients: maxClients, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 4, Leases: 4}})
	for i := range maxClients {
		if _, err := g.identify(forgedRequest(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}).String())); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []string{"192.0.2.1", "192.0.2.2"} {
		r := forgedRequest(a)
		c, _ := g.identify(r)
		if _, err := g.takeSession(c, r); err != nil {
			t.Fatalf("attacker session from %s: %v", a, err)
		}
	}
	refused := 0
	for i := range 20 {
		addr := netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String()
		r := forgedRequest(addr)
		c, _ := g.identify(r)
		if c.id != "ip:"+addr {
			t.Errorf("newcomer %s got identity %s, want its own", addr, c.id)
		}
		release, err := g.takeSession(c, r)
		if err != nil {
			refused++
			continue
		}
		defer release()
	}
	if refused > 0 {
		t.Errorf("%d of 20 first-time visitors refused a session after two attacker sessions past max_clients", refused)
	}
	if n := g.clients.n.Load(); n > maxClients {
		t.Errorf("%d entries tracked, want at most %d", n, maxClients)
	}
}

// TestSessionsPerNetwork (issue 43): WebSocket sessions were bounded per
// address (an IPv4 address, an IPv6 /64) and in all only, so the
// addresses of one /24, or the /64s of one /56, could take every session
// of the server. Now one network holds max_sessions_per_network, a /56
// twice that, a /48 four times; keyed or not; another network still
// gets one.
func TestSessionsPerNetwork(t *testing.T) {
	g := newGate(&Access{Anonymous: true, MaxSessions: 100, MaxSessionsPerAddress: 2, MaxSessionsPerNetwork: 3,
		Keys: map[string]string{"k": "key-k"}, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 4, Leases: 4}, Keyed: Quota{Rate: 100, Burst: 100, Sessions: 64, Leases: 64}})
	open := func(key string, addrs ...string) (n int, refused *session.Error) {
		for _, a := range addrs {
			for range 2 {
				r := forgedRequest(a)
				if key != "" {
					r.Header.Set("X-API-Key", key)
				}
				c, err := g.identify(r)
				if err != nil {
					t.Fatal(err)
				}
				release, err := g.takeSession(c, r)
				if err != nil {
					return n, err
				}
				t.Cleanup(release)
				n++
			}
		}
		return n, nil
	}
	for _, tc := range []struct {
		name, key string
		addrs     []string
		want      int
	}{
		{"one /24", "", []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}, 3},
		{"one /56", "", []string{"2001:db8:0:100::1", "2001:db8:0:101::1", "2001:db8:0:102::1", "2001:db8:0:103::1"}, 6},
		{"one /24 with a key", "key-k", []string{"198.51.100.1", "198.51.100.2", "198.51.100.3"}, 3},
	} {
		n, err := open(tc.key, tc.addrs...)
		t.Logf("%s: %d sessions, then %v", tc.name, n, err)
		if n != tc.want || err == nil || err.Code != session.CodeTooManyRequests {
			t.Errorf("%s: %d sessions, then %v; want %d, then too_many_requests", tc.name, n, err, tc.want)
		}
	}
	if n, err := open("", "192.0.2.9"); n != 2 {
		t.Errorf("another network's address: %d sessions, %v", n, err)
	}
}

// TestOverflowCountsSessionOnce: when the table cannot make room (every
// entry holds a session), a session on the overflow identity counts once
// on it (addresses and networks are counted apart, session.Places).
func TestOverflowCountsSessionOnce(t *testing.T) {
	const maxClients = 64
	g := newGate(&Access{Anonymous: true, MaxClients: maxClients, MaxSessionsPerAddress: 100, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 4, Leases: 4}})
	// Every entry is an identity holding a session: all busy.
	for i := range maxClients {
		r := forgedRequest(netip.AddrFrom4([4]byte{198, 18, 0, byte(i)}).String())
		c, _ := g.identify(r)
		release, err := g.takeSession(c, r)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	r := forgedRequest("192.0.2.1")
	c, _ := g.identify(r)
	release, err := g.takeSession(c, r)
	if err != nil {
		t.Fatalf("a session on the overflow identity: %v", err)
	}
	defer release()
	c.mu.Lock()
	n := c.sessions
	c.mu.Unlock()
	if n != 1 {
		t.Errorf("one session counted %d times on the overflow identity %s", n, c.id)
	}
}
