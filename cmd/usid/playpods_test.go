package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/shogi"
)

// playClient is one WebSocket connection to a usid, reading play events.
type playClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialPlay(t *testing.T, addr string) *playClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &playClient{t: t, c: c}
}

func (p *playClient) send(msg map[string]any) {
	b, _ := json.Marshal(msg)
	if err := p.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		p.t.Fatal(err)
	}
}

// playState is a play event's payload, as far as this test reads it.
type playState struct {
	Game   string   `json:"game"`
	Moves  []string `json:"moves"`
	Status string   `json:"status"`
	SFEN   string   `json:"sfen"`
	Clock  struct {
		B       sideClock `json:"b"`
		W       sideClock `json:"w"`
		Running string    `json:"running"`
	} `json:"clock"`
	Result *struct{ Winner, Reason, End string } `json:"result"`
}

type sideClock struct {
	MainMS    int64 `json:"main_ms"`
	ByoyomiMS int64 `json:"byoyomi_ms"`
}

// next reads events until a play event (an error event fails the test),
// and says when it came.
func (p *playClient) next() (*playState, time.Time) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		_, b, err := p.c.Read(ctx)
		if err != nil {
			p.t.Fatalf("reading play events: %v", err)
		}
		var ev struct {
			Type, Code, Message string
			Play                json.RawMessage
		}
		json.Unmarshal(b, &ev)
		switch ev.Type {
		case "play":
			var s playState
			if err := json.Unmarshal(ev.Play, &s); err != nil {
				p.t.Fatal(err)
			}
			return &s, time.Now()
		case "error":
			p.t.Fatalf("error event: %s %s", ev.Code, ev.Message)
		}
	}
}

// until reads play events until ok holds.
func (p *playClient) until(ok func(*playState) bool) (*playState, time.Time) {
	p.t.Helper()
	for {
		if s, at := p.next(); ok(s) {
			return s, at
		}
	}
}

// searches reads an engine wrapper's log (what usid wrote to the engine)
// and counts the searches (go, not go ponder) of each position of the
// game (position lines starting with the game's start).
func searches(t *testing.T, file, start string) map[string]int {
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]int{}
	pos := ""
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "position "):
			pos = l
		case strings.HasPrefix(l, "go") && !strings.HasPrefix(l, "go ponder") && strings.Contains(pos, start):
			out[pos]++
		}
	}
	return out
}

// TestPlayAcrossPods (issue 30): usid processes on one redis-server,
// no affinity. A game against the engine started over the WebSocket on
// pod A is resumed on pod B: A hands it back at its next renewal and
// stops driving it, B goes on with the clocks (what A's last event said
// less the time since, for the side to move) and its own engine. After a
// SIGKILL of B, a resume on A takes the game over once B's lease ran out.
// On SIGTERM, A hands the game back at once and a resume on a third pod C
// takes it over without waiting for the lease. Each of the engine's turns
// is searched exactly once, over all pods (the engines' stdin logged by a
// wrapper).
func TestPlayAcrossPods(t *testing.T) {
	if _, err := os.Stat("/usr/games/fairy-stockfish"); err != nil {
		t.Fatalf("fairy-stockfish is missing (%v): apt-get install fairy-stockfish", err)
	}
	rs := redistest.Start(t)
	dir := t.TempDir()
	const lease = 1500 * time.Millisecond
	type pod struct {
		name, addr, log string
		logs            func() string
		kill            func()
		cmd             *exec.Cmd
	}
	start := func(name string) *pod {
		p := &pod{name: name, log: filepath.Join(dir, name+".stdin")}
		wrapper := filepath.Join(dir, name+".sh")
		os.WriteFile(wrapper, fmt.Appendf(nil, "#!/bin/sh\ntee -a %s | /usr/games/fairy-stockfish\n", p.log), 0o755)
		config := filepath.Join(dir, name+".yaml")
		os.WriteFile(config, fmt.Appendf(nil, `engines:
  - {name: fairy, path: %s, instances: 1, options: {USI_Hash: 16, Threads: 1}}
  - {name: gps, disabled: true}
cache: {enabled: false}
play: {redis: %q, lease: %s}
`, wrapper, rs.URL, lease), 0o600)
		cmd, addr, logs := startUsid(t, "--addr", "127.0.0.1:0", "--config", config)
		p.addr, p.logs, p.kill, p.cmd = addr, logs, func() { cmd.Process.Kill(); cmd.Wait() }, cmd
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("pod %s's log:\n%s", name, logs())
			}
		})
		return p
	}
	a, b, c := start("a"), start("b"), start("c")
	for _, p := range []*pod{a, b, c} {
		testwait.For(t, "pod "+p.name+"'s engine idle", 3*time.Minute, func() bool {
			if resp, err := http.Get("http://" + p.addr + "/readyz"); err == nil {
				resp.Body.Close()
				return resp.StatusCode == 200 && enginesIn("http://"+p.addr, "fairy", "idle") == 1
			}
			return false
		})
	}

	// The engine (上手, White) moves first in a handicap game: a start no
	// probe of the engine uses, so that the logs' positions are the game's.
	const handicapSFEN = "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
	ca := dialPlay(t, a.addr)
	ca.send(map[string]any{"type": "play_start", "id": "p", "engine": "fairy", "play": map[string]any{
		"side": "b", "handicap": "香落ち", "level": map[string]any{"movetime_ms": 300},
		"clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"main_ms": 600000}}}})
	s, _ := ca.until(func(s *playState) bool { return len(s.Moves) == 1 })
	game := s.Game
	humanMove := func(c *playClient, s *playState) *playState {
		t.Helper()
		pos, err := shogi.Load(s.SFEN, s.Moves)
		if err != nil {
			t.Fatal(err)
		}
		legal := pos.LegalMoves()
		c.send(map[string]any{"type": "play_move", "id": "m", "game": game, "move": legal[len(s.Moves)%len(legal)].String()})
		n := len(s.Moves) + 2
		got, _ := c.until(func(x *playState) bool { return len(x.Moves) >= n || x.Status != "playing" })
		if got.Status != "playing" || got.Clock.Running != "b" {
			t.Fatalf("after the human's move and the engine's: %+v", got)
		}
		return got
	}
	humanMove(ca, s)
	// The state as A's last event said it: re-read it with a resume on A
	// itself (the same pod: no take-over), and note when it came.
	ca.send(map[string]any{"type": "play_resume", "id": "p", "game": game})
	lastA, seenA := ca.next()
	if len(lastA.Moves) != 3 || lastA.Clock.Running != "b" {
		t.Fatalf("A's state: %+v", lastA)
	}
	onA := searches(t, a.log, handicapSFEN)
	ca.c.Close(websocket.StatusNormalClosure, "the page moves to another pod")
	// The player is away a while (no wait for a condition: the time that
	// passes is what is checked below, so that a clock that stood still
	// while the game moved would fail).
	time.Sleep(time.Second)

	// The player comes back through pod B.
	cb := dialPlay(t, b.addr)
	asked := time.Now()
	cb.send(map[string]any{"type": "play_resume", "id": "r", "game": game})
	onB, atB := cb.next()
	elapsed := atB.Sub(seenA)
	if onB.Status != "playing" || len(onB.Moves) != 3 || onB.Clock.Running != "b" {
		t.Fatalf("resumed on B: %+v", onB)
	}
	// The running side's clock: A's last word less the time since; the
	// other's as it was.
	wantB := lastA.Clock.B.MainMS - elapsed.Milliseconds()
	if d := onB.Clock.B.MainMS - wantB; d < -200 || d > 200 || onB.Clock.W != lastA.Clock.W {
		t.Errorf("clocks on B: %+v; A said %+v %v earlier (Black %d ms expected)", onB.Clock, lastA.Clock, elapsed, wantB)
	}
	t.Logf("take-over by B (asked, handed back at A's renewal): %v from the resume to its answer; Black's clock %d ms on A, %d ms on B %v later",
		atB.Sub(asked).Round(time.Millisecond), lastA.Clock.B.MainMS, onB.Clock.B.MainMS, elapsed.Round(time.Millisecond))
	testwait.For(t, "A's log: the game handed back", 10*time.Second, func() bool { return strings.Contains(a.logs(), "game handed back") })
	humanMove(cb, onB)
	if got := searches(t, a.log, handicapSFEN); fmt.Sprint(got) != fmt.Sprint(onA) {
		t.Errorf("A searched after handing the game back: %v, was %v", got, onA)
	}

	// B dies: a resume on A waits for B's lease to run out, then takes over.
	b.kill()
	killed := time.Now()
	ca2 := dialPlay(t, a.addr)
	ca2.send(map[string]any{"type": "play_resume", "id": "k", "game": game})
	onA2, atA2 := ca2.next()
	took := atA2.Sub(killed)
	if onA2.Status != "playing" || len(onA2.Moves) != 5 || onA2.Clock.Running != "b" {
		t.Fatalf("resumed on A after B died: %+v", onA2)
	}
	if took < lease/2 {
		t.Errorf("A took the game over %v after B's SIGKILL, before B's %v lease could run out", took, lease)
	}
	t.Logf("take-over after SIGKILL of the holder: %v (lease %v)", took.Round(time.Millisecond), lease)
	humanMove(ca2, onA2)

	// A drains (SIGTERM): it hands the game back at once, and a resume on C
	// takes it over without waiting for a lease.
	a.cmd.Process.Signal(syscall.SIGTERM)
	termed := time.Now()
	testwait.For(t, "A's log: the game handed back on SIGTERM", 30*time.Second, func() bool {
		return strings.Contains(a.logs(), `games in progress handed back for other instances to take over" component=play games=1`)
	})
	cc := dialPlay(t, c.addr)
	cc.send(map[string]any{"type": "play_resume", "id": "c", "game": game})
	onC, atC := cc.next()
	if onC.Status != "playing" || len(onC.Moves) != 7 || onC.Clock.Running != "b" {
		t.Fatalf("resumed on C after A's SIGTERM: %+v", onC)
	}
	drained := atC.Sub(termed)
	if drained >= lease {
		t.Errorf("C took the game over %v after A's SIGTERM: not handed back at once (lease %v)", drained, lease)
	}
	t.Logf("take-over after SIGTERM of the holder: %v from the signal to the resumed state on C (lease %v)", drained.Round(time.Millisecond), lease)
	humanMove(cc, onC)
	cc.send(map[string]any{"type": "play_resign", "id": "x", "game": game})
	end, _ := cc.until(func(x *playState) bool { return x.Status == "ended" })
	if end.Result == nil || end.Result.Winner != "w" || end.Result.Reason != "resign" || end.Result.End != "resign" || len(end.Moves) != 9 {
		t.Errorf("the end: %+v %+v", end, end.Result)
	}

	// Each engine turn (positions after 0, 2, 4, 6, 8 moves) searched once,
	// in all.
	all := searches(t, a.log, handicapSFEN)
	for _, p := range []*pod{b, c} {
		for pos, n := range searches(t, p.log, handicapSFEN) {
			all[pos] += n
		}
	}
	for i := 0; i <= 8; i += 2 {
		key := "position sfen " + handicapSFEN
		if i > 0 {
			key += " moves " + strings.Join(end.Moves[:i], " ")
		}
		if all[key] != 1 {
			t.Errorf("the engine's turn after %d moves was searched %d times, want once", i, all[key])
		}
	}
	if len(all) != 5 {
		t.Errorf("positions searched: %v, want the 5 engine turns", all)
	}
}
