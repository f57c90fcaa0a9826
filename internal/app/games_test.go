package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/usid/usid/internal/pooltest"
	"github.com/usid/usid/internal/proc"
)

func TestMain(m *testing.M) {
	// The built-in othello engine is "@self": this test binary, which
	// then serves as the engine, as usid's binary does.
	if code, served := pooltest.ServeOthello(); served {
		os.Exit(code)
	}
	remove := pooltest.PrivateCache()
	code := m.Run()
	remove()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestGameAnalysisDrain: SIGTERM's drain (Main.Close) with a game analysis
// running over a WebSocket: the client gets closing, then the job's one
// terminal event (cancelled, shutting_down) after the positions in flight,
// then the going-away close; no engine process is left.
func TestGameAnalysisDrain(t *testing.T) {
	m, addr := runMain(t, "engines:\n  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 1, options: {USI_Hash: 16, Threads: 1}}\n  - {name: gps, disabled: true}\n")
	closed := false
	defer func() {
		if !closed {
			m.Close(context.Background())
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	msg, _ := json.Marshal(map[string]any{"type": "analyze_game", "id": "g1",
		"position": map[string]any{"moves": []string{"7g7f", "3c3d", "2g2f", "4c4d", "2f2e", "2b3c", "3i4h", "8b4b"}},
		"limits":   map[string]any{"movetime_ms": 500}})
	if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]any {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var ev map[string]any
		json.Unmarshal(b, &ev)
		return ev
	}
	if ev := read(); ev["type"] != "progress" {
		t.Fatalf("first event %v", ev)
	}
	closeErr := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		closeErr <- m.Close(cctx)
	}()
	closed = true
	var types []string
	var end map[string]any
	for end == nil {
		ev := read()
		types = append(types, ev["type"].(string))
		if ev["type"] == "game_analysis" || ev["type"] == "error" {
			end = ev
		}
	}
	if types[0] != "closing" {
		t.Errorf("events during the drain: %v, want closing first", types)
	}
	if end["type"] != "game_analysis" || end["status"] != "cancelled" || end["code"] != "shutting_down" {
		t.Errorf("terminal event %v", end)
	}
	if p := end["progress"].(map[string]any); p["done"].(float64) < 2 {
		t.Errorf("the position in flight at the drain was not finished: %v", p)
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after the terminal event: %v, want a going-away close", err)
	}
	if err := <-closeErr; err != nil {
		t.Errorf("Close: %v", err)
	}
	if kids := proc.Children(os.Getpid()); len(kids) > 0 {
		t.Errorf("processes left after Close: %v", kids)
	}
}
