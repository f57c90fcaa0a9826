package server

import (
	"strings"
	"testing"
	"time"
)

// The engine's own dialect, learned by probing (minimal entries only).

// TestProfilesShown: /v1/engines shows what usid learned of each engine
// and where each fact came from.
func TestProfilesShown(t *testing.T) {
	_, _, body := call(t, shared, "GET", "/v1/engines", nil)
	byName := map[string]map[string]any{}
	for _, e := range body["engines"].([]any) {
		m := e.(map[string]any)
		byName[m["name"].(string)] = m
	}
	fairy, _ := byName["fairy"]["profile"].(map[string]any)
	gps, _ := byName["gps"]["profile"].(map[string]any)
	if fairy == nil || gps == nil {
		t.Fatalf("profiles missing: fairy %v, gps %v", byName["fairy"]["profile"], byName["gps"]["profile"])
	}
	fgo, ggo := fairy["go"].(map[string]any), gps["go"].(map[string]any)
	if fgo["depth"] != "native" || fgo["nodes"] != "native" || fgo["movetime"] != "native" || fairy["checkmate"] != false {
		t.Errorf("fairy profile: %v", fairy)
	}
	if ggo["depth"] != "emulated" || ggo["nodes"] != "emulated" || ggo["movetime"] != "emulated" || ggo["binc"] != "unsupported" || gps["checkmate"] != true {
		t.Errorf("gps profile: %v", gps)
	}
	if src := gps["sources"].(map[string]any); src["depth"] != "probed" || src["checkmate"] != "probed" {
		t.Errorf("gps sources: %v", src)
	}
	if src := byName["liar"]["profile"].(map[string]any)["sources"].(map[string]any); src["checkmate"] != "configured" {
		t.Errorf("liar sources: %v, want checkmate configured", src)
	}
	if caps := byName["gps"]["capabilities"].(map[string]any); caps["checkmate"] != true {
		t.Errorf("gps capabilities: %v", caps)
	}
}

// TestNativeLimits: fairy-stockfish, with a minimal entry, gets go depth and
// go nodes, and stops where they say.
func TestNativeLimits(t *testing.T) {
	before := len(shared.sentTo("fairy")) // what other tests sent (a broadcast's go infinite)
	for _, tt := range []struct {
		limits map[string]any
		ok     func(depth, nodes int) bool
	}{
		{map[string]any{"depth": 6}, func(d, _ int) bool { return d <= 6 }},
		{map[string]any{"nodes": 20000}, func(_, n int) bool { return n <= 30000 }},
	} {
		code, _, r := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "fairy", "position": map[string]any{"sfen": outOfBok}, "limits": tt.limits})
		if code != 200 || r["emulated"] != nil {
			t.Fatalf("%v: %d %v", tt.limits, code, r)
		}
		l := r["lines"].([]any)[0].(map[string]any)
		if !tt.ok(num(l["depth"]), num(l["nodes"])) {
			t.Errorf("%v: depth %v, nodes %v", tt.limits, l["depth"], l["nodes"])
		}
	}
	for _, line := range shared.sentTo("fairy")[before:] {
		if strings.HasPrefix(line, "go infinite") {
			t.Errorf("fairy got %q: a limit was emulated", line)
		}
	}
	// gpsusi's limits are emulated, and the answer says so.
	code, _, r := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "position": map[string]any{"sfen": outOfBok}, "limits": map[string]any{"depth": 3}})
	if em, _ := r["emulated"].([]any); code != 200 || len(em) != 1 || em[0] != "depth" {
		t.Errorf("gps depth 3: %d %v, want emulated [depth]", code, r)
	}
}

// TestMateThenAnalysis: three rounds of mate, then analysis, on gpsusi in
// one session: each is answered in time.
func TestMateThenAnalysis(t *testing.T) {
	cl := dial(t, shared)
	for i := range 3 {
		id := "m" + string(rune('0'+i))
		cl.send(map[string]any{"type": "mate", "id": id, "engine": "gps", "timeout_ms": 5000, "position": map[string]any{"sfen": mateIn5}})
		if ev := last(cl.terminal(id, 20*time.Second)); ev["result"] != "mate" {
			t.Fatalf("round %d mate: %v", i, ev)
		}
		id = "a" + string(rune('0'+i))
		cl.send(map[string]any{"type": "analyze", "id": id, "engine": "gps", "limits": map[string]any{"movetime_ms": 300}, "position": map[string]any{"sfen": outOfBok}})
		ev := last(cl.terminal(id, 10*time.Second))
		if ev["type"] != "bestmove" {
			t.Fatalf("round %d analysis after mate: %v", i, ev)
		}
		if em, _ := ev["emulated"].([]any); len(em) != 1 || em[0] != "movetime" {
			t.Errorf("round %d: emulated %v, want [movetime]", i, ev["emulated"])
		}
	}
}

// TestLateStop: a stop for a search that has already ended causes no second
// terminal event.
func TestLateStop(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze", "id": "x1", "engine": "instant", "limits": map[string]any{"depth": 1}})
	if ev := last(cl.terminal("x1", 10*time.Second)); ev["type"] != "bestmove" {
		t.Fatalf("x1: %v", ev)
	}
	cl.send(map[string]any{"type": "stop", "id": "x1"})
	cl.send(map[string]any{"type": "analyze", "id": "x2", "engine": "instant", "limits": map[string]any{"depth": 1}})
	for _, ev := range cl.terminal("x2", 10*time.Second) {
		if ev["id"] == "x1" {
			t.Errorf("a second event for x1 after its bestmove: %v", ev)
		}
	}
	// A stop for an id that never was still says so.
	cl.send(map[string]any{"type": "stop", "id": "never"})
	if ev := last(cl.terminal("never", 5*time.Second)); ev["code"] != "no_search" {
		t.Errorf("stop for an unknown id: %v", ev)
	}
}

// TestMateOnlyEngine: a mate-only engine solves mates and refuses analysis
// at once instead of hanging a request.
func TestMateOnlyEngine(t *testing.T) {
	start := time.Now()
	code, _, p := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "mateonly", "limits": map[string]any{"depth": 3}})
	if code < 400 || p["code"] != "unsupported" {
		t.Errorf("analysis on a mate-only engine: %d %v, want unsupported", code, p)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	code, _, r := call(t, shared, "POST", "/v1/mate", map[string]any{"engine": "mateonly", "position": map[string]any{"sfen": "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1"}})
	if code != 200 || r["result"] != "mate" {
		t.Errorf("mate on a mate-only engine: %d %v", code, r)
	}
}

// TestStoppedMateIsTimeout: when usid's timer stops a mate search, the
// engine's "nomate" proves nothing: the answer is timeout.
func TestStoppedMateIsTimeout(t *testing.T) {
	code, _, r := call(t, shared, "POST", "/v1/mate", map[string]any{"engine": "slowmate", "timeout_ms": 200, "position": map[string]any{"sfen": mateIn5}})
	if code != 200 || r["result"] != "timeout" {
		t.Errorf("%d %v, want timeout", code, r)
	}
}
