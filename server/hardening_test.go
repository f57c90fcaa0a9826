package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/proc"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// allRestarts sums usid_pool_restarts_total over engines and reasons.
func allRestarts(t *testing.T, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "usid_pool_restarts_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestControlCharactersEverywhere puts CR, LF, NUL, ESC and DEL into every
// string field of every message: each is refused with a code, no engine is
// restarted, and no line sent to an engine holds a control character.
func TestControlCharactersEverywhere(t *testing.T) {
	cl := dial(t, shared)
	before := allRestarts(t, shared.reg)
	messages := []map[string]any{
		{"type": "analyze", "id": "a", "engine": "fairy", "notation": "kif", "position": map[string]any{"sfen": "startpos", "moves": []string{"7g7f"}}, "limits": map[string]any{"depth": 1}},
		{"type": "go", "id": "g", "engine": "fairy", "position": map[string]any{"sfen": "startpos"}, "btime": 100, "wtime": 100, "byoyomi": 100},
		{"type": "mate", "id": "m", "engine": "gps", "notation": "kif", "position": map[string]any{"sfen": mateIn5}, "timeout_ms": 1000},
		{"type": "setoption", "id": "o", "engine": "fairy", "name": "Skill Level", "value": "3"},
		{"type": "newgame", "id": "n", "engine": "fairy"},
		{"type": "gameover", "id": "e", "engine": "fairy", "result": "win"},
		{"type": "stop", "id": "s"},
		{"type": "ponderhit", "id": "p"},
	}
	bad := []string{"\r", "\n", "\x00", "\x1b", "\x7f", "\n" + "quit",
		// Unicode controls beyond ASCII: NEL, CSI, line and paragraph
		// separators, BOM, a bidi override, a zero-width space.
		"\u0085", "\u009b", "\u2028", "\u2029", "\ufeff", "\u202e", "\u200b"}
	n := 0
	for _, msg := range messages {
		for _, path := range stringFields(msg, "") {
			for _, b := range bad {
				m := cloneJSON(msg)
				setField(m, path, b)
				raw, _ := json.Marshal(m)
				cl.sendRaw(string(raw))
				ev := last(cl.until(10*time.Second, func(ev map[string]any) bool {
					return ev["type"] == "error" || ev["type"] == "bestmove" || ev["type"] == "checkmate" || ev["type"] == "option" || ev["type"] == "ready"
				}))
				if ev["type"] != "error" || ev["code"] == "" {
					t.Errorf("%s with %q in %s: %v, want an error event", m["type"], b, path, ev)
				}
				n++
			}
		}
	}
	t.Logf("%d poisoned messages refused", n)
	for _, engine := range []string{"fairy", "gps"} {
		for _, line := range shared.sentTo(engine) {
			if strings.ContainsFunc(line, session.IsControl) {
				t.Errorf("%s was sent %q", engine, line)
			}
		}
	}
	if after := allRestarts(t, shared.reg); after != before {
		t.Errorf("engines restarted %v times during the bad input", after-before)
	}
}

// stringFields lists the paths of the string fields of a message (the array
// of moves counts as one).
func stringFields(m map[string]any, prefix string) []string {
	var paths []string
	for k, v := range m {
		switch v := v.(type) {
		case string:
			if k != "type" {
				paths = append(paths, prefix+k)
			}
		case []string:
			paths = append(paths, prefix+k+".0")
		case map[string]any:
			paths = append(paths, stringFields(v, prefix+k+".")...)
		}
	}
	return paths
}

func cloneJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// setField appends s to the string at path (or replaces the first element
// of an array).
func setField(m map[string]any, path, s string) {
	parts := strings.Split(path, ".")
	cur := m
	for i, p := range parts {
		if i == len(parts)-1 {
			cur[p] = cur[p].(string) + s
			return
		}
		if arr, ok := cur[p].([]any); ok {
			arr[0] = arr[0].(string) + s
			return
		}
		cur = cur[p].(map[string]any)
	}
}

// TestBadNumbersAndShapes: out-of-range, non-integer and huge numbers, deep
// nesting and oversized messages are refused with codes.
func TestBadNumbersAndShapes(t *testing.T) {
	cl := dial(t, shared)
	tests := []struct{ msg, code string }{
		{`{"type":"analyze","id":"n1","limits":{"depth":1e300}}`, "bad_request"},
		{`{"type":"analyze","id":"n2","limits":{"nodes":-1}}`, "invalid_field"},
		{`{"type":"analyze","id":"n3","limits":{"movetime_ms":0.5}}`, "bad_request"},
		{`{"type":"analyze","id":"n4","limits":{"movetime_ms":99999999999}}`, "invalid_field"},
		{`{"type":"analyze","id":"n5","multipv":-2}`, "invalid_field"},
		{`{"type":"analyze","id":"n6","multipv":"2"}`, "bad_request"},
		{`{"type":"mate","id":"n7","timeout_ms":-1}`, "invalid_field"},
		{`{"type":"go","id":"n8","btime":-5,"wtime":0}`, "invalid_field"},
		{`{"type":"go","id":"n9","btime":1e19,"wtime":0}`, "bad_request"},
		{`{"type":"go","id":"n10"}`, "invalid_field"},
		{`{"type":"go","id":"n11","btime":1,"wtime":1,"byoyomi":1,"binc":1}`, "invalid_field"},
		{`{"type":"analyze","id":"n12","position":{"sfen":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`, "bad_request"},
		{`{"type":"analyze","id":"n13","position":{"moves":["` + strings.Repeat("7g7f\",\"", 1100) + `7g7f"]}}`, "invalid_field"},
		{`{"type":"analyze","id":"` + strings.Repeat("x", 65) + `"}`, "invalid_field"},
		{`[1,2,3]`, "bad_request"},
		{`{"type":"analyze","id":"n14"}{"type":"stop"}`, "bad_request"},
		{`{"type":"gameover","id":"n15","result":"resign"}`, "invalid_field"},
		{`{"type":"analyze","id":"n16","notation":"western"}`, "invalid_field"},
	}
	for _, tt := range tests {
		cl.sendRaw(tt.msg)
		ev := last(cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "error" }))
		if ev["code"] != tt.code {
			t.Errorf("%.70s: %v, want %s", tt.msg, ev, tt.code)
		}
	}
	// A message over the read limit closes the connection with 1009.
	cl.sendRaw(`{"type":"analyze","id":"big","engine":"` + strings.Repeat("x", 70<<10) + `"}`)
	for range cl.events {
	}
	<-cl.done
	if websocket.CloseStatus(cl.err) != websocket.StatusMessageTooBig {
		t.Errorf("oversized message: connection ended with %v, want 1009 (message too big)", cl.err)
	}
}

// fakeServer serves a pool of fake engines only, for faults the real
// engines do not produce on demand.
func fakeServer(t *testing.T, cfgs ...pool.EngineConfig) (*env, *httptest.Server) {
	return fakeServerWith(t, nil, cfgs...)
}

func fakeServerWith(t *testing.T, tweak func(*session.Config), cfgs ...pool.EngineConfig) (*env, *httptest.Server) {
	reg := prometheus.NewRegistry()
	p, err := pool.New(cfgs, pool.Options{Registerer: reg, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	sc := session.Config{Pool: p, QueueTimeout: 20 * time.Second, Logger: testLog(t)}
	if tweak != nil {
		tweak(&sc)
	}
	svc := session.NewService(sc)
	srv := New(Config{Service: svc, Pool: p, Gatherer: reg, Registerer: reg, Logger: testLog(t),
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1e6, Burst: 1e6, Sessions: 1000, Leases: 1000, Messages: 1e6}}})
	hs := httptest.NewServer(srv)
	e := &env{pool: p, srv: srv, http: hs, reg: reg}
	t.Cleanup(e.close)
	return e, hs
}

// TestHungEngine: an engine that ignores stop is killed after the stop
// timeout; the client gets an error and the next search gets a fresh engine.
func TestHungEngine(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "hang", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.IgnoreStop},
		Timeouts: pool.Timeouts{Stop: 300 * time.Millisecond}})
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "h1"})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "info" })
	cl.send(map[string]any{"type": "stop", "id": "h1"})
	if ev := last(cl.terminal("h1", 10*time.Second)); ev["type"] != "error" || ev["code"] != "engine_error" {
		t.Errorf("hung engine: %v, want engine_error", ev)
	}
	cl.send(map[string]any{"type": "go", "id": "h2", "btime": 0, "wtime": 0, "byoyomi": 100})
	if ev := last(cl.terminal("h2", 20*time.Second)); ev["type"] != "bestmove" {
		t.Errorf("after the hung engine was replaced: %v", ev)
	}
}

// TestEngineDiesInHandshake: an engine that never finishes its handshake
// makes requests fail fast with engine_unavailable, not hang.
func TestEngineDiesInHandshake(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "broken", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.ExitNow},
		MaxFailures: 3, Cooldown: time.Minute})
	cl := dial(t, e)
	start := time.Now()
	cl.send(map[string]any{"type": "analyze", "id": "b1"})
	ev := last(cl.terminal("b1", 15*time.Second))
	if ev["code"] != "engine_unavailable" {
		t.Errorf("%v, want engine_unavailable", ev)
	}
	t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
	code, hdr, p := call(t, e, "POST", "/v1/analyze", map[string]any{"limits": map[string]any{"depth": 1}})
	if code != 503 || p["code"] != "engine_unavailable" || hdr.Get("Retry-After") == "" {
		t.Errorf("REST: %d %v", code, p)
	}
	if c, _, _ := call(t, e, "GET", "/readyz", nil); c != 503 {
		t.Errorf("/readyz = %d with no engine able to start", c)
	}
}

// TestKillMidSearchOverWebSocket: kill -9 of the engine a session searches
// with: the client gets an error at once and the pool heals.
func TestKillMidSearchOverWebSocket(t *testing.T) {
	shared.waitIdle(t)
	// Hold one fairy engine ourselves, so the session gets the other.
	held, err := shared.pool.Acquire(t.Context(), "fairy", nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze", "id": "k1", "engine": "fairy", "position": map[string]any{"sfen": outOfBok}})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "info" })
	victim := 0
	for _, pid := range proc.Children(os.Getpid()) {
		if proc.Comm(pid) == "fairy-stockfish" && pid != held.Engine().PID() {
			victim = pid
		}
	}
	if victim == 0 {
		t.Fatal("no fairy engine to kill")
	}
	killed := time.Now()
	syscall.Kill(victim, syscall.SIGKILL)
	ev := last(cl.terminal("k1", 5*time.Second))
	t.Logf("the client heard of kill -9 after %v", time.Since(killed).Round(time.Millisecond))
	if ev["type"] != "error" || ev["code"] != "engine_error" {
		t.Errorf("after kill -9: %v, want engine_error", ev)
	}
	held.Release()
	shared.waitIdle(t)
	cl.send(map[string]any{"type": "analyze", "id": "k2", "engine": "fairy", "limits": map[string]any{"depth": 3}})
	if ev := last(cl.terminal("k2", 10*time.Second)); ev["type"] != "bestmove" {
		t.Errorf("after recovery: %v", ev)
	}
}

// TestDrainStopsUnboundedAnalysis: on drain a session's until-stop analysis
// is stopped, its bestmove delivered, then a going-away close.
func TestDrainStopsUnboundedAnalysis(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "fake", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.Normal}})
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "u1"})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "info" })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go e.srv.Drain(ctx)
	evs := cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "bestmove" })
	sawClosing := false
	for _, ev := range evs {
		sawClosing = sawClosing || ev["type"] == "closing"
	}
	if !sawClosing {
		t.Error("no closing event before the bestmove")
	}
	for range cl.events {
	}
	<-cl.done
	if websocket.CloseStatus(cl.err) != websocket.StatusGoingAway {
		t.Errorf("close: %v, want going away", cl.err)
	}
	if c, _, _ := call(t, e, "GET", "/readyz", nil); c != 503 {
		t.Errorf("/readyz while draining: %d", c)
	}
}
