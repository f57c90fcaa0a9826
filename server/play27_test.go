package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/play"
)

// TestPlayOverWebSocket: a game against fairy over the WebSocket, the
// connection dropped and the game resumed on a new one with its moves and
// clocks, then resigned.
func TestPlayOverWebSocket(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "play_start", "id": "p1", "engine": "fairy",
		"play": map[string]any{"side": "b", "clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"byoyomi_ms": 1000}}}})
	play := func(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }
	start := play(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p1" })))
	if start == nil || start["status"] != "playing" {
		t.Fatalf("play_start: %v", start)
	}
	game := start["game"].(string)
	cl.send(map[string]any{"type": "play_move", "id": "m1", "game": game, "move": "7g7f"})
	// The human's move, then the engine's: both to the subscriber (p1).
	st := play(last(cl.until(20*time.Second, func(ev map[string]any) bool {
		p := play(ev)
		return ev["id"] == "p1" && p != nil && len(p["moves"].([]any)) == 2
	})))
	if clock := st["clock"].(map[string]any); clock["running"] != "b" {
		t.Errorf("after the engine's move: clock %v", clock)
	}
	cl.c.Close(websocket.StatusNormalClosure, "page reloaded")
	<-cl.done

	cl2 := dial(t, shared)
	cl2.send(map[string]any{"type": "play_resume", "id": "r1", "game": game})
	st = play(last(cl2.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "r1" })))
	if st == nil || st["status"] != "playing" || len(st["moves"].([]any)) != 2 {
		t.Fatalf("resumed: %v", st)
	}
	cl2.send(map[string]any{"type": "play_resign", "id": "x", "game": game})
	st = play(last(cl2.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "r1" })))
	if r, _ := st["result"].(map[string]any); r["winner"] != "w" || r["reason"] != "resign" {
		t.Errorf("after resigning: %v", st)
	}
	cl2.send(map[string]any{"type": "play_move", "id": "late", "game": "nonesuch", "move": "7g7f"})
	if ev := last(cl2.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "late" })); ev["code"] != "not_found" {
		t.Errorf("a move in an unknown game: %v", ev)
	}
	shared.waitIdle(t)
}

// TestResignOnEnginesTurnExport (issue 27): the human resigns over the
// WebSocket while the engine thinks; the result names the engine the
// winner, and the record the page exports from it (end, comment, moves)
// is a KIF that does not say 投了 of the side to move: it ends 中断 and its
// comment says who resigned and who won.
func TestResignOnEnginesTurnExport(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "play_start", "id": "p1", "engine": "fairy",
		"play": map[string]any{"side": "b", "clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"main_ms": 600000, "byoyomi_ms": 10000}}}})
	play := func(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }
	start := play(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p1" })))
	if start == nil || start["status"] != "playing" {
		t.Fatalf("play_start: %v", start)
	}
	game := start["game"].(string)
	cl.send(map[string]any{"type": "play_move", "id": "m1", "game": game, "move": "7g7f"})
	cl.send(map[string]any{"type": "play_resign", "id": "r1", "game": game})
	st := play(last(cl.until(20*time.Second, func(ev map[string]any) bool {
		p := play(ev)
		return ev["id"] == "p1" && p != nil && p["status"] == "ended"
	})))
	moves := st["moves"].([]any)
	if len(moves) != 1 {
		t.Fatalf("the engine moved before the resignation arrived (moves %v): the test needs the engine's turn", moves)
	}
	r, _ := st["result"].(map[string]any)
	if r["winner"] != "w" || r["reason"] != "resign" || r["end"] != "abort" || r["comment"] != "先手の投了（後手の手番中）により後手の勝ち" {
		t.Fatalf("result %v", r)
	}
	// What the page exports (play.js toRecord, then gamepanel's export).
	code, _, v := call(t, shared, "POST", "/v1/records/export", map[string]any{
		"header": map[string]any{"black": "あなた", "white": "fairy"}, "comment": r["comment"], "end": r["end"],
		"plies": []map[string]any{{"move": "7g7f", "time_ms": st["times_ms"].([]any)[0]}},
	})
	if code != 200 {
		t.Fatalf("export: %d %v", code, v)
	}
	kif := v["kif"].(string)
	if !strings.Contains(kif, "*先手の投了（後手の手番中）により後手の勝ち\n") || !strings.Contains(kif, "   2 中断\n") || strings.Contains(kif, "投了\n") {
		t.Errorf("KIF:\n%s", kif)
	}
	shared.waitIdle(t)
}

// TestPlayGamesList (issue 44): GET /v1/play/games lists the caller's
// game in progress, also once its connection went (a closed tab holding a
// slot), as openapi.yaml says; resigned by its id from another
// connection, it is listed no more.
func TestPlayGamesList(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "play_start", "id": "p1", "engine": "fairy",
		"play": map[string]any{"side": "b", "clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"byoyomi_ms": 1000}}}})
	start, _ := last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p1" }))["play"].(map[string]any)
	if start == nil || start["status"] != "playing" {
		t.Fatalf("play_start: %v", start)
	}
	game := start["game"].(string)
	cl.c.Close(websocket.StatusNormalClosure, "tab closed")
	<-cl.done

	code, _, v := call(t, shared, "GET", "/v1/play/games", nil)
	games, _ := v["games"].([]any)
	if code != 200 || len(games) != 1 {
		t.Fatalf("GET /v1/play/games: %d %v", code, v)
	}
	if g := games[0].(map[string]any); g["game"] != game || g["rules"] != "shogi" || g["engine"] != "fairy" || g["human"] != "b" || num(g["plies"]) != 0 || g["turn"] != "b" {
		t.Errorf("listed %v, want game %s of shogi against fairy, Black to move", g, game)
	}

	cl2 := dial(t, shared)
	cl2.send(map[string]any{"type": "play_resign", "id": "x", "game": game})
	ev := last(cl2.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "x" }))
	if p, _ := ev["play"].(map[string]any); p == nil || p["status"] != "ended" {
		t.Fatalf("resign by id: %v", ev)
	}
	if code, _, v := call(t, shared, "GET", "/v1/play/games", nil); code != 200 || len(v["games"].([]any)) != 0 {
		t.Errorf("after the resignation: %d %v", code, v)
	}
	shared.waitIdle(t)
}

// TestPlayGamesStoreUnreachable: with games in a Redis that does not
// answer, GET /v1/play/games answers 503 as openapi.yaml says
// (conformance's notDriven names this test).
func TestPlayGamesStoreUnreachable(t *testing.T) {
	store, err := play.NewRedisStore(play.RedisConfig{URL: deadRedis(t), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	pm := play.New(play.Config{Service: shared.srv.cfg.Service, Store: store})
	defer pm.Close(context.Background())
	hs := ownServer(t, func(c *Config) { c.Play = pm })
	resp, err := checkedClient(t).Get(hs.URL + "/v1/play/games")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"engine_unavailable"`) {
		t.Errorf("with Redis unreachable: %d %s, want 503 engine_unavailable", resp.StatusCode, body)
	}
}
