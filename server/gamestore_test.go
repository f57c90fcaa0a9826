package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"github.com/usid/usid/session"
)

// deadRedis is a Redis URL where nothing listens.
func deadRedis(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "redis://" + l.Addr().String() + "/0"
}

// stalledPOST sends a request to srv whose body stops after its first
// bytes (start, of the 100 Content-Length says) and reads the answer.
func stalledPOST(t *testing.T, srv, path, start string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n%s", path, start)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// TestGameStoreUnreachable (issue 30): with game jobs in a Redis that does
// not answer, POST, GET and DELETE of /v1/games/analysis answer 503
// queue_full with Retry-After, as openapi.yaml says (conformance's
// notDriven names this test), and nothing reaches an engine.
func TestGameStoreUnreachable(t *testing.T) {
	dead := deadRedis(t)
	svc := session.NewService(session.Config{Pool: shared.pool, AcquireTimeout: time.Second})
	gm, err := review.Open(review.Config{Service: svc, Redis: &review.RedisConfig{URL: dead, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := New(Config{Service: svc, Pool: shared.pool, Gatherer: reg, Registerer: reg, OpenAPI: usid.OpenAPI, Review: gm,
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}})
	gm.SetCallers(srv.CallerFor)
	hs := httptest.NewServer(srv)
	defer func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		gm.Close(ctx)
	}()
	unreachableAnswers(t, hs.URL, "", []route{
		{"POST", "/v1/games/analysis", `{"position":{"moves":["7g7f"]},"limits":{"depth":1}}`},
		{"GET", "/v1/games/analysis/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b", ""},
		{"DELETE", "/v1/games/analysis/6f1c0e5b8d2a4f3e9b7c1d0a2e4f6a8b", ""},
	})
}

// route is one request of a table: its method, path and JSON body.
type route struct{ method, path, body string }

// unreachableAnswers sends each request to base and wants 503 with a
// Retry-After (and the problem's code, where code is not empty): what a
// route answers while the Redis behind it does not.
func unreachableAnswers(t *testing.T, base, code string, routes []route) {
	t.Helper()
	c := checkedClient(t)
	for _, r := range routes {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		if r.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || (code != "" && p["code"] != code) {
			t.Errorf("%s %s with Redis unreachable: %d (Retry-After %q) %v, want 503 %s with Retry-After", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), p, code)
		}
	}
}
