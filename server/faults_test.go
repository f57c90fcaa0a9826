package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
)

// Faults of issue 16 item 10 that need a server of their own. (A stopped
// engine mid-search: session.TestStoppedEngineMidSearch; one instance
// crashing: pool.TestOneInstanceCrashing; gpsusi ignoring stop during a
// mate: TestStoppedMateIsTimeout.)

// TestIllegalBestMoveReplacesEngine: an engine that answers an illegal move
// gives the client engine_error and is replaced, not leased again.
func TestIllegalBestMoveReplacesEngine(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "illegal", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.IllegalBestMove}})
	code, _, p := call(t, e, "POST", "/v1/analyze", map[string]any{"limits": map[string]any{"depth": 1}})
	if code != 502 || p["code"] != "engine_error" || !strings.Contains(fmt.Sprint(p["detail"]), "illegal") {
		t.Fatalf("illegal best move: %d %v, want 502 engine_error", code, p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for restarts(t, e, "illegal", "killed") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the engine that answered an illegal move was not replaced")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDrainAnswersLongRESTSearch: a REST search longer than the drain's
// grace is stopped shortly before the grace ends and answered 503
// shutting_down, instead of losing its connection when the server closes.
func TestDrainAnswersLongRESTSearch(t *testing.T) {
	e, hs := fakeServer(t, pool.EngineConfig{Name: "slow", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.IgnoreMoveTime}})
	type answer struct {
		code int
		hdr  http.Header
		p    map[string]any
	}
	got := make(chan answer, 1)
	go func() {
		code, hdr, p := call(t, e, "POST", "/v1/analyze", map[string]any{"limits": map[string]any{"movetime_ms": 20000}})
		got <- answer{code, hdr, p}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for e.pool.Status()[0].Busy == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the search did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// As internal/app's Main.Close does: drain, then shut the HTTP server
	// down, both within the grace; then close what is left.
	grace := 2 * time.Second
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.srv.Drain(ctx)
		if err := hs.Config.Shutdown(ctx); err != nil {
			hs.CloseClientConnections()
		}
	}()
	select {
	case a := <-got:
		if a.code != 503 || a.p["code"] != "shutting_down" || a.hdr.Get("Retry-After") == "" {
			t.Errorf("search cut by the drain: %d %v, want 503 shutting_down with Retry-After", a.code, a.p)
		}
		if took := time.Since(start); took > grace {
			t.Errorf("answered %v after the drain began, past its grace %v", took, grace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the search in flight")
	}
	wg.Wait()
}

// TestHugeBodyGets413: a client that sends a whole 12 MB body before it
// reads can read the 413, instead of a reset connection.
func TestHugeBodyGets413(t *testing.T) {
	addr := strings.TrimPrefix(shared.http.URL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	const size = 12 << 20
	body := `{"position":{"moves":["` + strings.Repeat("x", size-30) + `"]}}`
	fmt.Fprintf(c, "POST /v1/validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	if _, err := io.WriteString(c, body); err != nil {
		t.Fatalf("sending the body: %v (the server closed before reading it)", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no readable answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), `"code":"body_too_large"`) {
		t.Errorf("12 MB body: %d %s, want 413 body_too_large", resp.StatusCode, b)
	}
	checkResponseAs(t, "PayloadTooLarge", "POST /v1/validate with 12 MB", resp, b)
}
