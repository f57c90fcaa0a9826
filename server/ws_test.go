package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const (
	midgame  = "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3"
	mateIn5  = "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1"
	noMate   = "4k4/9/9/9/9/9/9/9/4K4 b - 1"
	outOfBok = "ln1g2snl/1r1s1kgb1/p1pppp1pp/1p4p2/9/2P1P4/PPBP1PPPP/2G3SR1/LN2KGSNL b - 15"
)

// TestAnalyzeMultiPV: three lines with rising depth, then a bestmove; stop
// ends an analysis without limits.
func TestAnalyzeMultiPV(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze", "id": "a1", "engine": "fairy", "multipv": 3, "notation": "kif",
		"position": map[string]any{"sfen": "startpos"}, "limits": map[string]any{"depth": 8}})
	evs := cl.terminal("a1", 30*time.Second)
	if ev := last(evs); ev["type"] != "bestmove" || ev["move"] == "" || ev["move_kif"] == "" {
		t.Fatalf("terminal event %v, want a bestmove with its KIF", ev)
	}
	depths := map[int][]int{}
	for _, ev := range evs {
		if ev["type"] == "engine" && ev["name"] != "fairy" {
			t.Errorf("engine event %v", ev)
		}
		if ev["type"] != "info" || ev["pv"] == nil {
			continue
		}
		if ev["id"] != "a1" {
			t.Errorf("info with id %v", ev["id"])
		}
		if len(ev["pv_kif"].([]any)) == 0 {
			t.Errorf("info without pv_kif: %v", ev)
		}
		k := num(ev["multipv"])
		depths[k] = append(depths[k], num(ev["depth"]))
	}
	for k := 1; k <= 3; k++ {
		d := depths[k]
		if len(d) < 2 || !slices.IsSorted(d) || d[len(d)-1] <= d[0] {
			t.Errorf("multipv %d depths %v, want several, rising", k, d)
		}
	}
	if len(depths) != 3 {
		t.Errorf("lines %v, want exactly multipv 1..3", depths)
	}

	cl.send(map[string]any{"type": "analyze", "id": "a2", "engine": "fairy", "position": map[string]any{"sfen": midgame}})
	cl.until(20*time.Second, func(ev map[string]any) bool { return ev["type"] == "info" && ev["id"] == "a2" })
	cl.send(map[string]any{"type": "stop", "id": "a2"})
	if ev := last(cl.terminal("a2", 10*time.Second)); ev["type"] != "bestmove" {
		t.Errorf("after stop: %v, want bestmove", ev)
	}
}

// TestQuickSwitches: 20 positions in quick succession. Every request ends in
// exactly one terminal event; after a request is superseded no info of it
// arrives; the last one is analysed.
func TestQuickSwitches(t *testing.T) {
	cl := dial(t, shared)
	moves := []string{"7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b", "2e2d", "2c2d"}
	for i := range 20 {
		cl.send(map[string]any{"type": "analyze", "id": fmt.Sprintf("s%d", i), "engine": "fairy",
			"position": map[string]any{"moves": moves[:i%len(moves)]}})
		time.Sleep(time.Duration(i%4) * 5 * time.Millisecond)
	}
	// Bounds for a busy machine (a stress run saw 20 s pass with s18 still
	// waiting): each switch stops a search and waits for its bestmove.
	evs := cl.until(time.Minute, func(ev map[string]any) bool { return ev["id"] == "s19" && ev["type"] == "info" })
	cl.send(map[string]any{"type": "stop", "id": "s19"})
	evs = append(evs, cl.terminal("s19", 30*time.Second)...)

	terminals := map[string]int{}
	superseded := map[string]bool{}
	for _, ev := range evs {
		id, _ := ev["id"].(string)
		switch ev["type"] {
		case "bestmove", "checkmate", "error":
			terminals[id]++
			superseded[id] = true
		case "info":
			if superseded[id] {
				t.Errorf("info for %s after its terminal event", id)
			}
		}
		// Once a later request has produced an event, an earlier one's info is stale.
		if n := idNum(id); ev["type"] != "error" {
			for j := range n {
				superseded[fmt.Sprintf("s%d", j)] = true
			}
		}
	}
	for i := range 20 {
		id := fmt.Sprintf("s%d", i)
		if terminals[id] != 1 {
			t.Errorf("%s got %d terminal events, want 1", id, terminals[id])
		}
	}
	if ev := last(evs); ev["type"] != "bestmove" {
		t.Errorf("the last request ended with %v", ev)
	}
}

func idNum(id string) int {
	var n int
	fmt.Sscanf(id, "s%d", &n)
	return n
}

// TestSameLimitsOnBothEngines: depth, nodes and movetime work on fairy
// (natively) and gpsusi (enforced by usid), and gpsusi is never sent a go
// parameter it aborts on.
func TestSameLimitsOnBothEngines(t *testing.T) {
	cl := dial(t, shared)
	limits := []map[string]any{{"depth": 3}, {"nodes": 20000}, {"movetime_ms": 300}}
	for _, engine := range []string{"fairy", "gps"} {
		for i, l := range limits {
			id := fmt.Sprintf("%s-%d", engine, i)
			start := time.Now()
			cl.send(map[string]any{"type": "analyze", "id": id, "engine": engine, "position": map[string]any{"sfen": outOfBok}, "limits": l})
			evs := cl.terminal(id, 30*time.Second)
			took := time.Since(start)
			if ev := last(evs); ev["type"] != "bestmove" {
				t.Errorf("%s %v: ended with %v", engine, l, ev)
				continue
			}
			// The search must stop soon after an info line shows the limit
			// reached: at most the rest of that burst of output may follow
			// (gpsusi reports only every second or so, from depth 6).
			maxDepth, maxNodes, reached, after := 0, 0, false, 0
			for _, ev := range evs {
				if ev["type"] != "info" {
					continue
				}
				d, n := num(ev["depth"]), num(ev["nodes"])
				maxDepth, maxNodes = max(maxDepth, d), max(maxNodes, n)
				if reached {
					after++
				}
				if (l["depth"] != nil && d >= 3 && ev["pv"] != nil) || (l["nodes"] != nil && n >= 20000) {
					reached = true
				}
			}
			switch {
			case l["movetime_ms"] != nil:
				if took < 250*time.Millisecond || took > 3*time.Second {
					t.Errorf("%s movetime 300ms took %v", engine, took)
				}
			case !reached && engine == "gps":
				// gpsusi sometimes ends "go infinite" on its own (from its
				// book) before any limit is reached: nothing to enforce.
				t.Logf("gps %v: the engine ended the search itself", l)
			case !reached || after > 3:
				t.Errorf("%s %v: limit reached %v, then %d more info lines", engine, l, reached, after)
			case engine == "fairy" && (maxDepth > 3 && l["depth"] != nil || maxNodes > 21000 && l["nodes"] != nil):
				t.Errorf("fairy %v (native): went to depth %d, %d nodes", l, maxDepth, maxNodes)
			}
			t.Logf("%s %v: %v, depth %d, nodes %d", engine, l, took.Round(time.Millisecond), maxDepth, maxNodes)
		}
	}
	for _, line := range shared.sentTo("gps") {
		if strings.HasPrefix(line, "go") {
			for _, bad := range []string{"depth", "nodes", "movetime", "binc", "winc"} {
				if strings.Contains(line, bad) {
					t.Errorf("gpsusi was sent %q", line)
				}
			}
		}
	}
	for _, reason := range []string{"crash", "reset_failed", "unhealthy"} {
		if n := restarts(t, shared, "gps", reason); n != 0 {
			t.Errorf("gpsusi restarted %v times for %s", n, reason)
		}
	}
}

// TestMateOverWebSocket: gpsusi finds the mate in 5, verified; fairy has no
// mate search and says so.
func TestMateOverWebSocket(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "mate", "id": "m1", "engine": "gps", "timeout_ms": 10000, "notation": "kif", "position": map[string]any{"sfen": mateIn5}})
	ev := last(cl.terminal("m1", 30*time.Second))
	moves, _ := ev["moves"].([]any)
	if ev["type"] != "checkmate" || ev["result"] != "mate" || len(moves) != 5 || len(ev["moves_kif"].([]any)) != 5 {
		t.Errorf("gps mate: %v, want a 5-move mate with KIF", ev)
	}
	cl.send(map[string]any{"type": "mate", "id": "m2", "engine": "fairy", "position": map[string]any{"sfen": mateIn5}})
	ev = last(cl.terminal("m2", 10*time.Second))
	if ev["type"] != "checkmate" || ev["result"] != "notimplemented" || ev["moves"] == nil {
		t.Errorf("fairy mate: %v, want notimplemented with empty moves", ev)
	}
	cl.send(map[string]any{"type": "mate", "id": "m3", "engine": "gps", "timeout_ms": 5000, "position": map[string]any{"sfen": noMate}})
	if ev = last(cl.terminal("m3", 30*time.Second)); ev["result"] != "nomate" {
		t.Errorf("no-mate position: %v, want nomate", ev)
	}
	// A fake engine that claims a mate with a doctored line: refused.
	cl.send(map[string]any{"type": "mate", "id": "m4", "engine": "liar", "position": map[string]any{"sfen": mateIn5}})
	if ev = last(cl.terminal("m4", 10*time.Second)); ev["type"] != "error" || ev["code"] != "engine_error" {
		t.Errorf("doctored mate line: %v, want an engine_error", ev)
	}
}

// TestPlayAndPonder: a go with byoyomi clocks answers a move in time; a ponder
// search turns into a normal one on ponderhit.
func TestPlayAndPonder(t *testing.T) {
	cl := dial(t, shared)
	start := time.Now()
	cl.send(map[string]any{"type": "go", "id": "g1", "engine": "gps", "position": map[string]any{"sfen": outOfBok}, "btime": 0, "wtime": 0, "byoyomi": 500})
	ev := last(cl.terminal("g1", 20*time.Second))
	if ev["type"] != "bestmove" || time.Since(start) > 10*time.Second {
		t.Errorf("gps byoyomi: %v after %v", ev, time.Since(start))
	}
	cl.send(map[string]any{"type": "go", "id": "g2", "engine": "fairy", "position": map[string]any{"sfen": outOfBok}, "btime": 60000, "wtime": 60000, "byoyomi": 1000, "ponder": true})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "g2" && ev["type"] == "info" })
	cl.send(map[string]any{"type": "ponderhit", "id": "g2"})
	ev = last(cl.terminal("g2", 20*time.Second))
	if ev["type"] != "bestmove" {
		t.Errorf("after ponderhit: %v, want bestmove", ev)
	}
	cl.send(map[string]any{"type": "ponderhit", "id": "g2"})
	if ev := last(cl.until(5*time.Second, func(ev map[string]any) bool { return ev["id"] == "g2" })); ev["code"] != "no_search" {
		t.Errorf("ponderhit after the end: %v, want no_search", ev)
	}
	cl.send(map[string]any{"type": "go", "id": "g3", "engine": "gps", "position": map[string]any{}, "btime": 1000, "wtime": 1000, "binc": 100, "winc": 100})
	if ev := last(cl.terminal("g3", 5*time.Second)); ev["code"] != "unsupported" {
		t.Errorf("binc on gpsusi: %v, want unsupported", ev)
	}
}

// TestRefusals: bad input never reaches an engine and gets a stable code.
func TestRefusals(t *testing.T) {
	cl := dial(t, shared)
	before := len(shared.sentTo("fairy"))
	tests := []struct {
		msg  string
		code string
	}{
		{`{"type":"analyze","id":"r1","position":{"sfen":"lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b P 1","moves":[]}}`, "too_many_pieces"},
		{`{"type":"analyze","id":"r2","position":{"moves":["7g7f","7g7f"]}}`, "empty_source"},
		{`{"type":"analyze","id":"r3","position":{"sfen":"startpos\nquit"}}`, "invalid_field"},
		{`{"type":"analyze","id":"r4","multipv":99}`, "invalid_field"},
		{`{"type":"analyze","id":"r5","limits":{"depth":-1}}`, "invalid_field"},
		{`{"type":"analyze","id":"r6","limits":{"depth":1.5}}`, "bad_request"},
		{`{"type":"analyze","id":"r7","engine":"nope","limits":{"depth":1}}`, "unknown_engine"},
		{`{"type":"analyze","id":"r8","bogus":1}`, "bad_request"},
		{`{"type":"frobnicate","id":"r9"}`, "unknown_type"},
		{`{"type":"analyze","id":"bad\u0000id"}`, "invalid_field"},
		{`not json`, "bad_request"},
		{`{"type":"setoption","id":"o1","engine":"fairy","name":"USI_Hash","value":"4096"}`, "option_not_allowed"},
		{`{"type":"setoption","id":"o2","engine":"fairy","name":"Debug Log File","value":"/tmp/pwned"}`, "option_not_allowed"},
		{`{"type":"setoption","id":"o3","engine":"fairy","name":"Skill Level","value":"99"}`, "option_not_allowed"},
		{`{"type":"setoption","id":"o4","engine":"fairy","name":"Skill Level\nquit","value":"1"}`, "invalid_field"},
		{`{"type":"stop","id":"nothing"}`, "no_search"},
	}
	for _, tt := range tests {
		cl.sendRaw(tt.msg)
		ev := last(cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "error" }))
		if ev["code"] != tt.code || ev["message"] == "" {
			t.Errorf("%s: got %v, want code %s", tt.msg, ev, tt.code)
		}
	}
	cl.send(map[string]any{"type": "setoption", "id": "o5", "engine": "fairy", "name": "Skill Level", "value": "5"})
	if ev := last(cl.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "o5" && ev["type"] != "engine" })); ev["type"] != "option" {
		t.Errorf("allowed option: %v", ev)
	}
	for _, line := range shared.sentTo("fairy")[before:] {
		if strings.Contains(line, "Debug Log File") || strings.Contains(line, "USI_Hash") || strings.Contains(line, "pwned") || strings.Contains(line, "Skill Level value 99") {
			t.Errorf("a refused request reached the engine: %q", line)
		}
	}
}

// TestSlowReader: a client that reads nothing during a search later gets the
// latest lines (coalesced) and the bestmove.
func TestSlowReader(t *testing.T) {
	c := dialNoRead(t, shared)
	defer c.CloseNow()
	msg := `{"type":"analyze","id":"slow","engine":"fairy","multipv":2,"position":{"sfen":"` + outOfBok + `"},"limits":{"movetime_ms":1500}}`
	if err := c.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the search ends while nobody reads
	var infos, bestmoves int
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for bestmoves == 0 {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v after %d infos", err, infos)
		}
		switch {
		case strings.Contains(string(b), `"type":"info"`):
			infos++
		case strings.Contains(string(b), `"type":"bestmove"`):
			bestmoves++
		}
	}
	t.Logf("a client that read nothing for 3s got %d infos, then the bestmove", infos)
	if infos == 0 {
		t.Error("no info at all")
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// TestDisconnectMidSearch: the engine goes back to the pool, ready for the next.
func TestDisconnectMidSearch(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze", "id": "d1", "engine": "fairy", "position": map[string]any{"sfen": outOfBok}})
	ev := cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "info" })
	_ = ev
	cl.c.Close(websocket.StatusNormalClosure, "bye")
	shared.waitIdle(t)
	// Both fairy engines serve a fresh search at once.
	a, b := dial(t, shared), dial(t, shared)
	for i, c := range []*wsClient{a, b} {
		id := fmt.Sprintf("after%d", i)
		c.send(map[string]any{"type": "analyze", "id": id, "engine": "fairy", "limits": map[string]any{"depth": 2}})
		if ev := last(c.terminal(id, 10*time.Second)); ev["type"] != "bestmove" {
			t.Errorf("search after a disconnect: %v", ev)
		}
	}
}

// restarts reads usid_pool_restarts_total for an engine and reason.
func restarts(t *testing.T, e *env, engine, reason string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "usid_pool_restarts_total" {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if (l.GetName() == "engine" && l.GetValue() != engine) || (l.GetName() == "reason" && l.GetValue() != reason) {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
