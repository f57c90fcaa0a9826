package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// TestGPSMateThenAnalysis: on the real gpsusi, a mate search (an SFEN
// position) then a 500 ms analysis from the start position, three rounds
// over REST and three over WebSocket: each is answered, and no engine is
// killed. gpsusi plays "position startpos moves ..." on its previous board
// and loops for ever, so before usid wrote the start position as SFEN to
// it, every REST round ended "engine ignored stop; killing it", 502.
func TestGPSMateThenAnalysis(t *testing.T) {
	shared.waitIdle(t)
	warned := len(shared.warnings())
	killed := engineRestarts(t, shared, "gps")
	// From the start, out of gpsusi's book: it searches.
	startpos := map[string]any{"moves": []string{"1g1f", "1c1d", "9g9f", "9c9d", "5i5h", "5a5b"}}
	for i := range 3 {
		code, _, m := call(t, shared, "POST", "/v1/mate", map[string]any{"engine": "gps", "position": map[string]any{"sfen": mateIn5}, "timeout_ms": 5000})
		if code != 200 || m["result"] != "mate" {
			t.Fatalf("REST round %d: mate: %d %v", i, code, m)
		}
		began := time.Now()
		code, _, a := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "position": startpos, "limits": map[string]any{"movetime_ms": 500}})
		if lines, _ := a["lines"].([]any); code != 200 || a["bestmove"] == nil || len(lines) == 0 {
			t.Fatalf("REST round %d: analysis after mate: %d %v", i, code, a)
		}
		t.Logf("REST round %d: analysis answered in %v", i, time.Since(began).Round(time.Millisecond))
	}
	cl := dial(t, shared)
	for i := range 3 {
		id := fmt.Sprintf("m%d", i)
		cl.send(map[string]any{"type": "mate", "id": id, "engine": "gps", "timeout_ms": 5000, "position": map[string]any{"sfen": mateIn5}})
		if ev := last(cl.terminal(id, 30*time.Second)); ev["result"] != "mate" {
			t.Fatalf("WebSocket round %d: mate: %v", i, ev)
		}
		id = fmt.Sprintf("a%d", i)
		began := time.Now()
		cl.send(map[string]any{"type": "analyze", "id": id, "engine": "gps", "limits": map[string]any{"movetime_ms": 500}, "position": startpos})
		evs := cl.terminal(id, 30*time.Second)
		if ev := last(evs); ev["type"] != "bestmove" || evs[0]["type"] == "bestmove" {
			t.Fatalf("WebSocket round %d: analysis after mate: %v", i, evs)
		}
		t.Logf("WebSocket round %d: analysis answered in %v", i, time.Since(began).Round(time.Millisecond))
	}
	for _, w := range shared.warnings()[warned:] {
		if strings.HasPrefix(w, "gps") && !strings.HasSuffix(w, "engine stderr") { // gpsusi chats on stderr
			t.Errorf("logged: %s", w)
		}
	}
	if n := engineRestarts(t, shared, "gps"); n != killed {
		t.Errorf("usid_pool_restarts_total{engine=\"gps\"} went from %v to %v", killed, n)
	}
	for _, line := range shared.sentTo("gps") {
		if strings.HasPrefix(line, "position startpos") {
			t.Errorf("gpsusi was sent %q", line)
		}
	}
}

// engineRestarts sums usid_pool_restarts_total of one engine over reasons.
func engineRestarts(t *testing.T, e *env, engine string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "usid_pool_restarts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "engine" && l.GetValue() == engine {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestColdStartMate: a new instance with an empty profile directory (as in
// every container start) answers no mate request from an unfinished probe.
// /readyz answers 200 only once every engine is known, so 20 /v1/mate
// requests naming no engine, sent from the moment it first does, all
// answer mate via gpsusi (the one mate solver; fairy-stockfish is first in
// the configuration and would answer notimplemented). Requests sent before
// that wait for the probes or are refused with a retry, never answered
// notimplemented.
func TestColdStartMate(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	p, err := pool.New([]pool.EngineConfig{{Name: "fairy", Path: fairyPath}, {Name: "gps", Path: gpsPath}},
		pool.Options{Logger: log, Registerer: reg, ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	svc := session.NewService(session.Config{Pool: p, Logger: log, AcquireTimeout: 2 * time.Second, QueueTimeout: 2 * time.Minute})
	srv := New(Config{Service: svc, Pool: p, Gatherer: reg, Registerer: reg, OpenAPI: usid.OpenAPI, Logger: log,
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}})
	e := &env{pool: p, srv: srv, http: httptest.NewServer(srv), reg: reg, sent: &lineLog{store: &lineStore{lines: map[string][]string{}}}}
	defer e.close()
	body := map[string]any{"position": map[string]any{"sfen": mateIn5}, "timeout_ms": 10000}

	// Before readiness: a REST request waits (here at most 2 s) and is
	// refused while the probes go on; a WebSocket one waits, queued.
	if code, _, r := call(t, e, "POST", "/v1/mate", body); r["result"] == "notimplemented" || (code != 200 && r["code"] != "no_engine") {
		t.Errorf("a mate before readiness: %d %v", code, r)
	} else {
		t.Logf("a mate before readiness: %d %v", code, r)
	}
	cl := dial(t, e)
	cl.send(map[string]any{"type": "mate", "id": "early", "position": body["position"], "timeout_ms": 10000})

	testwait.For(t, "/readyz 200", 5*time.Minute, func() bool {
		code, _, _ := call(t, e, "GET", "/readyz", nil)
		return code == 200
	})
	results := make(chan string, 20)
	for range 20 {
		go func() {
			code, _, r := callQuiet(e, "/v1/mate", body)
			results <- fmt.Sprintf("%d %v %v", code, r["engine"], r["result"])
		}()
	}
	for range 20 {
		if got := <-results; got != "200 gps mate" {
			t.Errorf("a mate after readiness: %s, want 200 gps mate", got)
		}
	}
	evs := cl.terminal("early", 5*time.Minute)
	if ev := last(evs); ev["result"] != "mate" {
		t.Errorf("a WebSocket mate sent before readiness: %v", evs)
	}
	if evs[0]["type"] != "queued" || evs[0]["probing"] == nil {
		t.Logf("the early WebSocket mate was not told it waits for probes (they may have ended first): %v", evs[0])
	}
}

// callQuiet is call for a goroutine other than the test's: no t.
func callQuiet(e *env, path string, body any) (int, http.Header, map[string]any) {
	j, _ := json.Marshal(body)
	resp, err := http.Post(e.http.URL+path, "application/json", bytes.NewReader(j))
	if err != nil {
		return 0, nil, map[string]any{"error": err.Error()}
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}

// TestBookMoveSaysSo: gpsusi answers the start position from its book, at
// once and with no evaluation; the answer says book rather than look like
// a search that found nothing. (gpsusi has no USI_OwnBook; its own
// BookDepth 0 turns the book off: docs/engines.md, "Evaluations, not book moves".)
func TestBookMoveSaysSo(t *testing.T) {
	code, _, r := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "limits": map[string]any{"movetime_ms": 500}})
	if lines, _ := r["lines"].([]any); code != 200 || r["book"] != true || len(lines) != 0 {
		t.Errorf("gps from the start: %d %v; want book true, no lines", code, r)
	}
	code, _, r = call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "position": map[string]any{"sfen": outOfBok}, "limits": map[string]any{"movetime_ms": 500}})
	if lines, _ := r["lines"].([]any); code != 200 || r["book"] != nil || len(lines) == 0 {
		t.Errorf("gps out of its book: %d %v; want lines, no book", code, r)
	}
}
