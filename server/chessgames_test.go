package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// pollGameOn is pollGame on another environment.
func pollGameOn(t *testing.T, e *env, id string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st, _, v := call(t, e, http.MethodGet, "/v1/games/analysis/"+id, nil)
		if st != http.StatusOK {
			t.Fatalf("GET job: %d %v", st, v)
		}
		if v["finished_at"] != nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job not ended after %v: %v", d, v["progress"])
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// A short chess game with a planted blunder: 3.Qxe5+?? gives White's queen
// for a pawn to the knight on c6.
var chessGame = strings.Fields("e2e4 e7e5 d1h5 b8c6 h5e5 c6e5 d2d4 e5c6")

// checkChessGame checks a done chess job of moves from the start: every
// position with its FEN, an evaluation from White's side, SAN; every move
// judged.
func checkChessGame(t *testing.T, v map[string]any, moves []string) []map[string]any {
	t.Helper()
	if v["status"] != "done" || v["engine"] != "stockfish" {
		t.Fatalf("status %v engine %v (%v), want done on stockfish", v["status"], v["engine"], v["error"])
	}
	ps, _ := v["positions"].([]any)
	if len(ps) != len(moves)+1 {
		t.Fatalf("%d positions for %d moves", len(ps), len(moves))
	}
	out := make([]map[string]any, len(ps))
	for i, x := range ps {
		p, _ := x.(map[string]any)
		out[i] = p
		if p == nil || p["fen"] == nil || p["sfen"] != nil || p["eval"] == nil || p["bestmove_san"] == nil {
			t.Errorf("ply %d: %v", i, p)
			continue
		}
		if want := map[bool]string{true: "w", false: "b"}[i%2 == 0]; p["side_to_move"] != want {
			t.Errorf("ply %d: side to move %v, want %s", i, p["side_to_move"], want)
		}
		if i < len(moves) && (p["move"] != moves[i] || p["move_san"] == nil || p["judgement"] == nil) {
			t.Errorf("ply %d: move %v (%v) judgement %v", i, p["move"], p["move_san"], p["judgement"])
		}
	}
	return out
}

// TestChessGameAnalysis: POST /v1/games/analysis and analyze_game take a
// chess game (a position or a PGN record) for a chess engine: the first
// chess engine when none is named; a chess game for a shogi engine is a
// game_mismatch. REST answers are checked against openapi.yaml.
func TestChessGameAnalysis(t *testing.T) {
	e := chessEnv(t)
	limits := map[string]any{"nodes": 100_000}
	st, hdr, v := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{
		"position": map[string]any{"fen": "startpos", "moves": chessGame}, "limits": limits, "notation": "san"})
	if st != http.StatusAccepted || hdr.Get("Location") == "" {
		t.Fatalf("POST: %d %v", st, v)
	}
	ps := checkChessGame(t, pollGameOn(t, e, v["id"].(string), 3*time.Minute), chessGame)
	if ps[4]["move_san"] != "Qxe5+" || ps[4]["judgement"] != "blunder" {
		t.Errorf("3.Qxe5+??: %v", ps[4])
	}
	if ps[0]["judgement"] == "blunder" || ps[1]["judgement"] == "blunder" {
		t.Errorf("1.e4 e5 judged %v %v", ps[0]["judgement"], ps[1]["judgement"])
	}

	// The same game from a PGN record, over the WebSocket.
	pgnText := "[Event \"x\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Qxe5 Nxe5 4. d4 Nc6 *\n"
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze_game", "id": "g", "record": pgnText, "limits": limits, "notation": "san"})
	evs := cl.until(3*time.Minute, func(ev map[string]any) bool {
		return ev["id"] == "g" && (ev["type"] == "game_analysis" || ev["type"] == "error")
	})
	end := last(evs)
	if end["type"] != "game_analysis" || end["status"] != "done" || end["summary"] == nil {
		t.Fatalf("terminal event %v", end)
	}
	seen := 0
	for _, ev := range evs[:len(evs)-1] {
		if ev["type"] != "progress" {
			continue
		}
		for _, p := range ev["positions"].([]any) {
			if p.(map[string]any)["fen"] == nil {
				t.Errorf("progress position without a fen: %v", p)
			}
			seen++
		}
	}
	if seen < len(chessGame)+1 {
		t.Errorf("progress events carried %d positions", seen)
	}
	checkChessGame(t, pollGameOn(t, e, end["job"].(string), time.Second), chessGame)

	for _, tc := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"a shogi engine", map[string]any{"engine": "shogifake", "position": map[string]any{"fen": "startpos"}, "limits": limits}, "game_mismatch"},
		{"kif notation", map[string]any{"position": map[string]any{"fen": "startpos"}, "limits": limits, "notation": "kif"}, "invalid_field"},
		{"an illegal move", map[string]any{"position": map[string]any{"fen": "startpos", "moves": []string{"e2e4", "e7e4"}}, "limits": limits}, "unreachable"},
		{"a Chess960 record", map[string]any{"record": "[Variant \"Chess960\"]\n[FEN \"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\"]\n\n9. g3 *\n", "limits": limits}, "unsupported"},
	} {
		st, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", tc.body)
		if st != http.StatusUnprocessableEntity || v["code"] != tc.code {
			t.Errorf("%s: %d %v, want 422 %s", tc.name, st, v, tc.code)
		}
	}
}
