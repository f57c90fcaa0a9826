package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid"
	"github.com/usid/usid/games"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// TestGameStoreUnreachable (issue 30): with game jobs in a Redis that does
// not answer, POST, GET and DELETE of /v1/games/analysis answer 503
// queue_full with Retry-After, as openapi.yaml says (conformance's
// notDriven names this test), and nothing reaches an engine.
func TestGameStoreUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "redis://" + l.Addr().String() + "/0"
	l.Close() // nothing listens there now
	svc := session.NewService(session.Config{Pool: shared.pool, AcquireTimeout: time.Second})
	gm, err := games.Open(games.Config{Service: svc, Redis: &games.RedisConfig{URL: dead, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := New(Config{Service: svc, Pool: shared.pool, Gatherer: reg, Registerer: reg, OpenAPI: usid.OpenAPI, Games: gm,
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}})
	gm.SetCallers(srv.CallerFor)
	hs := httptest.NewServer(srv)
	defer func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		gm.Close(ctx)
	}()
	c := checkedClient(t)
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/games/analysis", `{"position":{"moves":["7g7f"]},"limits":{"depth":1}}`},
		{"GET", "/v1/games/analysis/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b", ""},
		{"DELETE", "/v1/games/analysis/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b", ""},
	} {
		req, _ := http.NewRequest(r.method, hs.URL+r.path, strings.NewReader(r.body))
		if r.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with Redis unreachable: %d (Retry-After %q), want 503 with Retry-After", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}
