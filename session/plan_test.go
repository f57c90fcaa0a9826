package session

import (
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/probe"
)

// TestPlan: the go command each kind of engine gets, and what usid enforces
// itself. gpsusi-like engines must never see depth, nodes, movetime or binc.
func TestPlan(t *testing.T) {
	svc := NewService(Config{Caps: Caps{MaxAnalysis: time.Minute, WatchdogMargin: 5 * time.Second}})
	full := &probe.Profile{Go: map[string]string{"depth": probe.Native, "nodes": probe.Native, "movetime": probe.Native, "binc": probe.Native}, ReportsDepth: true, ReportsNodes: true}
	gps := &probe.Profile{Go: map[string]string{"depth": probe.Emulated, "nodes": probe.Emulated, "movetime": probe.Emulated, "binc": probe.Unsupported},
		Checkmate: true, ReportsDepth: true, ReportsNodes: true}
	tests := []struct {
		name    string
		req     string
		caps    *probe.Profile
		goLine  string
		stop    time.Duration
		depth   int
		nodes   int64
		errCode string
	}{
		{"native depth", `{"type":"analyze","id":"x","limits":{"depth":5}}`, full, "go depth 5", time.Minute, 0, 0, ""},
		{"emulated depth", `{"type":"analyze","id":"x","limits":{"depth":5}}`, gps, "go infinite", time.Minute, 5, 0, ""},
		{"native nodes", `{"type":"analyze","id":"x","limits":{"nodes":1000}}`, full, "go nodes 1000", time.Minute, 0, 0, ""},
		{"emulated nodes", `{"type":"analyze","id":"x","limits":{"nodes":1000}}`, gps, "go infinite", time.Minute, 0, 1000, ""},
		{"native movetime", `{"type":"analyze","id":"x","limits":{"movetime_ms":250}}`, full, "go movetime 250", 0, 0, 0, ""},
		{"emulated movetime", `{"type":"analyze","id":"x","limits":{"movetime_ms":250}}`, gps, "go infinite", 250 * time.Millisecond, 0, 0, ""},
		{"until stop", `{"type":"analyze","id":"x"}`, gps, "go infinite", time.Minute, 0, 0, ""},
		{"byoyomi", `{"type":"go","id":"x","btime":1000,"wtime":2000,"byoyomi":3000}`, gps, "go btime 1000 wtime 2000 byoyomi 3000", 0, 0, 0, ""},
		{"increments native", `{"type":"go","id":"x","btime":1000,"wtime":2000,"binc":10,"winc":10}`, full, "go btime 1000 wtime 2000 binc 10 winc 10", 0, 0, 0, ""},
		{"increments refused", `{"type":"go","id":"x","btime":1000,"wtime":2000,"binc":10,"winc":10}`, gps, "", 0, 0, 0, CodeUnsupported},
		{"ponder", `{"type":"go","id":"x","btime":1000,"wtime":2000,"byoyomi":100,"ponder":true}`, gps, "go ponder btime 1000 wtime 2000 byoyomi 100", 0, 0, 0, ""},
		{"mate", `{"type":"mate","id":"x","timeout_ms":3000}`, gps, "go mate 3000", 5500 * time.Millisecond, 0, 0, ""},
	}
	for _, tt := range tests {
		r, perr := ParseRequest([]byte(tt.req))
		if perr != nil {
			t.Fatalf("%s: %v", tt.name, perr)
		}
		j, perr := svc.newJob(r)
		if perr != nil {
			t.Fatalf("%s: %v", tt.name, perr)
		}
		p, perr := svc.plan(j, tt.caps)
		if tt.errCode != "" {
			if perr == nil || perr.Code != tt.errCode {
				t.Errorf("%s: got %v, want %s", tt.name, perr, tt.errCode)
			}
			continue
		}
		line, err := p.cmd.Line()
		if err != nil || line != tt.goLine || p.stopAfter != tt.stop || p.stopDepth != tt.depth || p.stopNodes != tt.nodes {
			t.Errorf("%s: %q (err %v) stop after %v, depth %d, nodes %d; want %q, %v, %d, %d",
				tt.name, line, err, p.stopAfter, p.stopDepth, p.stopNodes, tt.goLine, tt.stop, tt.depth, tt.nodes)
		}
		if tt.caps.Checkmate {
			for _, bad := range []string{"depth", "nodes", "movetime", "binc"} {
				if strings.Contains(line, bad) {
					t.Errorf("%s: a gpsusi-like engine gets %q", tt.name, line)
				}
			}
		}
		if p.watchdog <= 0 {
			t.Errorf("%s: no watchdog", tt.name)
		}
	}
}

func TestCheckPosition(t *testing.T) {
	c, err := CheckPosition(&Position{Moves: []string{"7g7f", "3c3d"}}, 10)
	if err != nil || c.USI.SFEN != "startpos" || strings.Join(c.USI.Moves, " ") != "7g7f 3c3d" {
		t.Fatalf("startpos: %+v %v", c, err)
	}
	if line, _ := c.USI.Line(); line != "position startpos moves 7g7f 3c3d" {
		t.Errorf("line %q", line)
	}
	// A client SFEN is sent in canonical form, not as the client wrote it.
	c, err = CheckPosition(&Position{Start: "  4k4/9/9/9/9/9/9/9/4K4  b  Pg "}, 10)
	if err != nil || c.USI.SFEN != "4k4/9/9/9/9/9/9/9/4K4 b Pg 1" {
		t.Errorf("canonical SFEN: %+v %v", c, err)
	}
	if _, err := CheckPosition(&Position{Moves: make([]string, 11)}, 10); err == nil || err.Code != CodeInvalidField {
		t.Errorf("11 moves with a cap of 10: %v", err)
	}
	_, err = CheckPosition(&Position{Moves: []string{"7g7f", "7g7f"}}, 10)
	if err == nil || err.Code != "empty_source" || err.MoveIndex != 1 {
		t.Errorf("bad second move: %+v", err)
	}
}
