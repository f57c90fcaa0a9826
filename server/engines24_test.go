package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
