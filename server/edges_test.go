package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/web"
)

// TestInvalidUTF8Frame: a text frame that is not UTF-8 fails the
// connection with 1007 (RFC 6455 8.1); it used to be answered as a message.
func TestInvalidUTF8Frame(t *testing.T) {
	cl := dial(t, shared)
	cl.sendRaw("{\"type\":\"stop\",\"id\":\"\xff\xfe\"}")
	timeout := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-cl.events:
		case <-timeout:
			t.Fatal("the connection stayed open after an invalid UTF-8 text frame")
		}
	}
	<-cl.done
	if websocket.CloseStatus(cl.err) != websocket.StatusInvalidFramePayloadData {
		t.Errorf("invalid UTF-8: connection ended with %v, want 1007", cl.err)
	}
}

// TestMethodsAndFraming: /metrics is GET and HEAD only, HEAD works on the
// probes, the pages (the board application for each game, the tsume
// solver) are served, /static/ misses are problem+json, and a request framed by
// Transfer-Encoding (with or without Content-Length) is refused.
func TestMethodsAndFraming(t *testing.T) {
	cfg := shared.srv.cfg
	cfg.Registerer, cfg.Web = nil, web.Handler()
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Drain(context.Background())
	for _, tt := range []struct {
		method, path string
		status       int
		problem      bool
	}{
		{"GET", "/metrics", 200, false}, {"HEAD", "/metrics", 200, false},
		{"PUT", "/metrics", 405, true}, {"DELETE", "/metrics", 405, true}, {"TRACE", "/metrics", 405, true}, {"POST", "/metrics", 405, true},
		{"HEAD", "/healthz", 200, false}, {"HEAD", "/readyz", 200, false},
		{"GET", "/static/nope.js", 404, true}, {"GET", "/static/", 404, true},
		{"GET", "/", 200, false}, {"GET", "/tsume", 200, false}, {"GET", "/chess", 200, false}, {"GET", "/othello", 200, false},
		{"GET", "/watch/0f1e2d3c4b5a69788796a5b4c3d2e1f0", 200, false}, {"GET", "/watch/nope", 404, true}, {"GET", "/watch/", 404, true},
	} {
		req, _ := http.NewRequest(tt.method, hs.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != tt.status || (tt.problem && ct != "application/problem+json") {
			t.Errorf("%s %s: %d %s, want %d (problem+json: %v)", tt.method, tt.path, resp.StatusCode, ct, tt.status, tt.problem)
		}
	}
	for name, head := range map[string]string{
		"both":    "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
		"chunked": "Transfer-Encoding: chunked\r\n",
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		conn.Write([]byte("POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + head + "\r\n2\r\n{}\r\n0\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want 400 problem+json", name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// TestOptionEchoNormalized: the option event carries the value as the
// engine got it.
func TestOptionEchoNormalized(t *testing.T) {
	cl := dial(t, shared)
	for in, want := range map[string]string{"+5": "5", "020": "20", "7": "7"} {
		cl.send(map[string]any{"type": "setoption", "id": "o", "engine": "fairy", "name": "Skill Level", "value": in})
		ev := last(cl.until(10*time.Second, func(ev map[string]any) bool {
			return ev["id"] == "o" && (ev["type"] == "option" || ev["type"] == "error")
		}))
		if ev["type"] != "option" || ev["value"] != want {
			t.Errorf("Skill Level %q: %v, want value %q", in, ev, want)
		}
	}
}
