package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestTimeouts: a stalled REST body gets 408 after the body timeout and
// holds none of its client's lease slots meanwhile; an idle keep-alive
// connection is closed; a quiet WebSocket outlives both timeouts. Before,
// stalled bodies and idle connections stayed open for as long as clients
// liked, and a stalled body held a lease slot.
func TestTimeouts(t *testing.T) {
	shared.waitIdle(t)
	cfg := shared.srv.cfg
	cfg.Registerer = nil
	cfg.Access = &Access{Anonymous: true, AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 2, Leases: 1}}
	cfg.BodyTimeout, cfg.IdleTimeout, cfg.HeaderTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	srv := New(cfg)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config = srv.HTTPServer()
	hs.Start()
	defer hs.Close()
	defer srv.Drain(context.Background())
	addr := strings.TrimPrefix(hs.URL, "http://")

	// A body that stalls after 10 of 100 bytes.
	stalled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.Write([]byte("POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"engine\":"))
	time.Sleep(50 * time.Millisecond)
	// Meanwhile the same client's complete request gets the only lease slot.
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", "", `{"engine":"fairy","limits":{"depth":1}}`); resp.StatusCode != 200 {
		t.Errorf("a complete request while a body stalls: %d %s (the stalled body holds the lease slot)", resp.StatusCode, b)
	}
	stalled.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(stalled), nil)
	if err != nil {
		t.Fatalf("stalled body: no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 408 {
		t.Errorf("stalled body: %d, want 408", resp.StatusCode)
	}
	checkResponseAs(t, "RequestTimeout", "stalled POST /v1/analyze", resp, body)
	t.Logf("stalled body answered 408 after %v more", time.Since(start).Round(time.Millisecond))

	// An idle keep-alive connection is closed.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
	br := bufio.NewReader(idle)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle keep-alive connection: %v, want closed by the server", err)
	}

	// A WebSocket quiet for longer than every HTTP timeout still works.
	c, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"w","engine":"fairy","limits":{"depth":1}}`))
	for _, ev := range readEvents(t, c, 1) {
		if ev["type"] != "bestmove" {
			t.Errorf("WebSocket after a quiet second: %v", ev)
		}
	}
}
