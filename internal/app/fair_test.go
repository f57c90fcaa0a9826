package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid"
)

// runMain runs usid with the built-in configuration's shogi engines under
// layers, on a free loopback port, and returns once /readyz says 200; the
// caller closes it (startMain: when the test ends). These tests are about
// shogi engines: the chess and othello ones are left out, so that their
// start costs the tests nothing.
func runMain(t *testing.T, layers ...string) (*Main, string) {
	t.Helper()
	return runLayers(t, append([]string{"engines:\n  - {name: stockfish, disabled: true}\n  - {name: othello, disabled: true}\n"}, layers...)...)
}

// runLayers is runMain with every built-in engine but what layers change.
func runLayers(t *testing.T, layers ...string) (*Main, string) {
	t.Helper()
	if _, err := os.Stat("/usr/games/fairy-stockfish"); err != nil {
		t.Fatalf("fairy-stockfish is missing (%v): apt-get install fairy-stockfish", err)
	}
	bs := [][]byte{usid.DefaultConfig}
	for _, l := range layers {
		bs = append(bs, []byte(l))
	}
	c, err := ParseConfig(bs...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m := &Main{Config: c, Addr: addr, Logger: slog.New(slog.DiscardHandler)}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, addr
			}
		}
		if time.Now().After(deadline) {
			m.Close(context.Background())
			t.Fatal("not ready within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startMain is runMain, closed when the test ends; it returns the base URL.
func startMain(t *testing.T, layers ...string) string {
	t.Helper()
	m, addr := runMain(t, layers...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return "http://" + addr
}

func analyze(t *testing.T, base, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/analyze", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSequentialClientNeverThrottled: on the built-in configuration (only
// the engines cut to fairy-stockfish), a script analysing 100 positions one
// after another, 50 ms each, gets 100 answers (issue 17: it used to get
// 59 429s from a rate of 5 requests a second).
func TestSequentialClientNeverThrottled(t *testing.T) {
	base := startMain(t, "engines:\n  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 2, options: {USI_Hash: 16, Threads: 1}}\n  - {name: gps, disabled: true}\n")
	moves := []string{}
	legal := []string{"7g7f", "3c3d", "2g2f", "4c4d", "2f2e", "2b3c", "3i4h", "8b4b", "5i6h", "5a6b"}
	for i := range 100 {
		// Different positions, so that the evaluation cache answers none.
		moves = append(moves[:0], legal[:i%len(legal)]...)
		body, _ := json.Marshal(map[string]any{"position": map[string]any{"moves": moves}, "limits": map[string]any{"movetime_ms": 50 + i}})
		if st, b := analyze(t, base, "", string(body)); st != 200 {
			t.Fatalf("analysis %d of 100: %d %s", i+1, st, b)
		}
	}
}

// TestIdleLeaseYields: with one engine, a WebSocket client that finished
// its search and sits idle gives the engine at once to a second client
// (not after idle_release, 30 s by default), and its own next analysis runs
// with the option it set restored (issue 17).
func TestIdleLeaseYields(t *testing.T) {
	base := startMain(t, "engines:\n  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 1, options: {USI_Hash: 16, Threads: 1},\n     client_options: {Skill Level: {min: -20, max: 20}}}\n  - {name: gps, disabled: true}\ncache: {enabled: false}\n")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	// until reads events until one of type want for id (an error fails).
	until := func(c *websocket.Conn, id, want string) (evs []map[string]any) {
		t.Helper()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s %s: %v", want, id, err)
			}
			var ev map[string]any
			json.Unmarshal(b, &ev)
			evs = append(evs, ev)
			if ev["id"] == id && ev["type"] == "error" {
				t.Fatalf("%s: %v", id, ev)
			}
			if ev["id"] == id && ev["type"] == want {
				return evs
			}
		}
	}
	send := func(c *websocket.Conn, msg string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	first, second := dial(), dial()
	send(first, `{"type":"setoption","id":"o","name":"Skill Level","value":"3"}`)
	until(first, "o", "option")
	send(first, `{"type":"analyze","id":"a1","limits":{"depth":2}}`)
	until(first, "a1", "bestmove")
	// The first client is idle and holds the only engine.
	start := time.Now()
	send(second, `{"type":"analyze","id":"b1","limits":{"depth":2}}`)
	evs := until(second, "b1", "engine")
	took := time.Since(start)
	t.Logf("the second client got the engine %v after asking (queued events: %d)", took.Round(100*time.Microsecond), count(evs, "queued"))
	if took > 10*time.Second {
		t.Fatalf("the second client waited %v: the idle lease did not yield", took)
	}
	until(second, "b1", "bestmove")
	// The first client asks again: the second, idle now, yields to it, and
	// its option is set again on the engine.
	send(first, `{"type":"analyze","id":"a2","limits":{"depth":2}}`)
	evs = until(first, "a2", "engine")
	eng := evs[len(evs)-1]
	if r, _ := eng["restored"].([]any); len(r) != 1 || r[0] != "Skill Level" {
		t.Errorf("the first client's new lease: %v, want restored [Skill Level]", eng)
	}
	until(first, "a2", "bestmove")
}

func count(evs []map[string]any, typ string) int {
	n := 0
	for _, e := range evs {
		if e["type"] == typ {
			n++
		}
	}
	return n
}
