package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/broadcast"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/quota"
)

// TestBroadcastRoutes (issue 38): the broadcast routes answer as
// openapi.yaml says (every answer checked against it), with fairy-stockfish
// searching; a viewer's WebSocket gets the position, the lines and the end;
// a viewer that never reads does not hold the other up.
func TestBroadcastRoutes(t *testing.T) {
	bm, err := broadcast.New(broadcast.Config{Service: shared.srv.cfg.Service})
	if err != nil {
		t.Fatal(err)
	}
	defer bm.Close(context.Background())
	hs := ownServer(t, func(c *Config) { c.Broadcasts = bm })
	do := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		var req *http.Request
		if rd != nil {
			req, _ = http.NewRequestWithContext(t.Context(), method, hs.URL+path, rd)
			req.Header.Set("Content-Type", "application/json")
		} else {
			req, _ = http.NewRequestWithContext(t.Context(), method, hs.URL+path, nil)
		}
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	// An option the engine's allow-list refuses is refused at creation
	// with setoption's code (issue 43: created, then only logged).
	if code, v := do("POST", "/v1/broadcasts", map[string]any{"engine": "fairy", "options": map[string]string{"Threads": "64"}}); code != http.StatusUnprocessableEntity || v["code"] != "option_not_allowed" {
		t.Errorf("a broadcast with an option not allowed: %d %v, want 422 option_not_allowed", code, v)
	}
	code, v := do("POST", "/v1/broadcasts", map[string]any{"engine": "fairy", "multipv": 2, "position": map[string]any{"sfen": "startpos", "moves": []string{"7g7f"}}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, v)
	}
	id := v["id"].(string)
	if code, _ := do("GET", "/v1/broadcasts/0123", nil); code != http.StatusNotFound {
		t.Errorf("GET of an unknown broadcast: %d", code)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/v1/broadcasts/"+id+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// A viewer that reads nothing, on a socket with a small receive buffer.
	slow := dialStalled(t, hs.URL, "/v1/broadcasts/"+id+"/ws")
	defer slow.Close()
	events := make(chan map[string]any, 10000)
	go func() {
		defer close(events)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var ev map[string]any
			json.Unmarshal(b, &ev)
			events <- ev
		}
	}()
	next := func(what string, match func(map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("connection closed waiting for %s", what)
				}
				if match(ev) {
					return ev
				}
			case <-deadline:
				t.Fatalf("no %s", what)
			}
		}
	}
	pos := next("the position", func(ev map[string]any) bool { return ev["type"] == "position" })
	if num(pos["search"]) != 1 || num(pos["ply"]) != 1 || pos["id"] != id {
		t.Errorf("position event %v", pos)
	}
	next("a line of multipv 2", func(ev map[string]any) bool { return ev["type"] == "info" && num(ev["multipv"]) == 2 && ev["id"] == id })

	if code, v := do("POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"3c3d"}, "ply": 1}); code != http.StatusOK || num(v["search"]) < 1 {
		t.Errorf("moves: %d %v", code, v)
	}
	if code, v := do("POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"3c3d"}, "ply": 1}); code != http.StatusConflict || v["code"] != "conflict" {
		t.Errorf("moves for a stale ply: %d %v", code, v)
	}
	if code, v := do("POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"2g2f", "2g2f"}}); code != http.StatusUnprocessableEntity || num(v["move_index"]) != 3 {
		t.Errorf("an illegal move: %d %v", code, v)
	}
	next("the first search's bestmove", func(ev map[string]any) bool { return ev["type"] == "bestmove" && num(ev["search"]) == 1 })
	if code, v := do("PUT", "/v1/broadcasts/"+id+"/position", map[string]any{"position": map[string]any{"sfen": "startpos", "moves": []string{"2g2f"}}}); code != http.StatusOK || num(v["ply"]) != 1 {
		t.Errorf("a new position: %d %v", code, v)
	}
	next("the third search's line", func(ev map[string]any) bool { return ev["type"] == "info" && num(ev["search"]) == 3 })
	testwait.For(t, "GET's lines", 10*time.Second, func() bool {
		code, v := do("GET", "/v1/broadcasts/"+id, nil)
		lines, _ := v["lines"].([]any)
		return code == http.StatusOK && len(lines) == 2
	})
	if code, v := do("DELETE", "/v1/broadcasts/"+id, nil); code != http.StatusOK || v["status"] != "ended" {
		t.Errorf("DELETE: %d %v", code, v)
	}
	next("ended", func(ev map[string]any) bool { return ev["type"] == "ended" })
	if code, _ := do("POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"8c8d"}}); code != http.StatusConflict {
		t.Errorf("moves after the end: %d", code)
	}
}

// dialStalled opens a viewer's WebSocket by hand and never reads from it.
func dialStalled(t *testing.T, base, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: nil}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetReadBuffer(4096)
	_, err = c.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBroadcastAnswersBeyondConformance: the broadcast answers openapi.yaml
// declares that the conformance check (conformance/check.mjs) cannot bring
// about through its proxy, each checked against openapi.yaml here: 503 from
// every route while the broadcasts' Redis does not answer, 408 for a
// creation whose body stalls, 429 for a read (a viewer's upgrade too)
// once the client's reads are spent.
func TestBroadcastAnswersBeyondConformance(t *testing.T) {
	dead := deadRedis(t)
	// One read in the burst, none more for the test's length: each of the
	// two servers answers one read.
	start := func() string {
		bm, err := broadcast.New(broadcast.Config{Service: shared.srv.cfg.Service,
			Redis: &broadcast.RedisConfig{URL: dead, Timeout: 200 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bm.Close(context.Background()) })
		cfg := shared.srv.cfg
		cfg.Registerer, cfg.Broadcasts, cfg.BodyTimeout = nil, bm, 200*time.Millisecond
		cfg.Access = &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Reads: 0.001}}
		srv := New(cfg)
		hs := httptest.NewServer(srv)
		t.Cleanup(func() {
			srv.Drain(context.Background())
			hs.Close()
		})
		return hs.URL
	}
	url, url2 := start(), start()
	const id = "/v1/broadcasts/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b"
	c := checkedClient(t)
	send := func(method, path, body string, hdr http.Header) int {
		t.Helper()
		base := url
		if strings.HasPrefix(path, "2:") {
			base, path = url2, path[2:]
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", method, path)
		}
		return resp.StatusCode
	}
	handshake := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	for _, r := range []struct {
		method, path, body string
		hdr                http.Header
	}{
		{"POST", "/v1/broadcasts", `{"engine":"fairy","position":{"sfen":"startpos"}}`, nil},
		{"GET", id, "", nil},
		{"DELETE", id, "", nil},
		{"POST", id + "/moves", `{"moves":["7g7f"]}`, nil},
		{"PUT", id + "/position", `{"position":{"sfen":"startpos"}}`, nil},
		{"GET", "2:" + id + "/ws", "", handshake}, // the other server's one read
	} {
		if code := send(r.method, r.path, r.body, r.hdr); code != http.StatusServiceUnavailable {
			t.Errorf("%s %s with Redis unreachable: %d, want 503", r.method, r.path, code)
		}
	}
	// The one read of the burst went above: the next is refused.
	if code := send("GET", id, "", nil); code != http.StatusTooManyRequests {
		t.Errorf("GET %s with the reads spent: %d, want 429", id, code)
	}
	if code := send("GET", id+"/ws", "", handshake); code != http.StatusTooManyRequests {
		t.Errorf("GET %s/ws with the reads spent: %d, want 429", id, code)
	}

	resp, body := stalledPOST(t, url, "/v1/broadcasts", `{"engine":`)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled POST /v1/broadcasts: %d %s, want 408", resp.StatusCode, body)
	}
	checkResponseAs(t, "RequestTimeout", "stalled POST /v1/broadcasts", resp, body)
}

// TestBroadcastPlaceNoRetryAfter (issue 43): when every broadcast place is
// taken the refusal said Retry-After: 5 though a place is held for up to
// broadcast.idle (6 h); it now names no wait (none can be promised).
func TestBroadcastPlaceNoRetryAfter(t *testing.T) {
	bm, err := broadcast.New(broadcast.Config{Service: shared.srv.cfg.Service, MaxBroadcasts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer bm.Close(context.Background())
	hs := ownServer(t, func(c *Config) { c.Broadcasts = bm })
	post := func() *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", hs.URL+"/v1/broadcasts", strings.NewReader(`{"engine":"fairy","position":{"sfen":"startpos"}}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := post()
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("the first broadcast: %d", first.StatusCode)
	}
	defer func() {
		req, _ := http.NewRequestWithContext(context.Background(), "DELETE", hs.URL+first.Header.Get("Location"), nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	resp := post()
	t.Logf("a broadcast past max_broadcasts: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "" {
		t.Errorf("a broadcast past max_broadcasts: %d with Retry-After %q, want 503 without one", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestBroadcastUpgradesAreReads (issue 43): a viewer's upgrade is a read
// of the broadcast, charged to the client's flood guard of reads before
// the store is asked: 1,200 upgrades in a row from one client are
// answered (here 404, an unknown broadcast: each a read of the store) no
// more often than the guard's burst and its rate over the time they
// really took; the rest are 429. Before, all 1,200 reached the store.
func TestBroadcastUpgradesAreReads(t *testing.T) {
	bm, err := broadcast.New(broadcast.Config{Service: shared.srv.cfg.Service})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bm.Close(context.Background()) })
	const reads = 20.0
	cfg := shared.srv.cfg
	cfg.Registerer, cfg.Broadcasts = nil, bm
	cfg.Access = &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Reads: reads}}
	srv := New(cfg)
	t.Cleanup(func() { srv.Drain(context.Background()) })
	handshake := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	codes := map[int]int{}
	start := time.Now()
	for range 1200 {
		codes[serve(srv, "GET", "/v1/broadcasts/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b/ws", "", handshake).Code]++
	}
	took := time.Since(start)
	// What the guard lets through: its burst (2×reads+1) and its rate over
	// the time the 1,200 took.
	allowed := int(2*reads) + 1 + int(reads*took.Seconds()) + 1
	t.Logf("1,200 upgrades in %v: %v (at most %d answered)", took.Round(time.Millisecond), codes, allowed)
	if codes[http.StatusNotFound] > allowed || codes[http.StatusTooManyRequests] < 1200-allowed || codes[http.StatusNotFound]+codes[http.StatusTooManyRequests] != 1200 {
		t.Errorf("1,200 upgrades in %v: %v; want at most %d answered 404, the rest 429", took, codes, allowed)
	}
}
