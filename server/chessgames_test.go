package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/chess/pgn"
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
		{"a Chess960 record for an engine without UCI_Chess960", map[string]any{"engine": "no960", "record": "[Variant \"Chess960\"]\n[FEN \"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\"]\n\n9. g3 *\n", "limits": limits}, "unsupported"},
	} {
		st, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", tc.body)
		if st != http.StatusUnprocessableEntity || v["code"] != tc.code {
			t.Errorf("%s: %d %v, want 422 %s", tc.name, st, v, tc.code)
		}
	}
}

// TestChessExport: /v1/records/export writes a chess game as PGN, with a
// game analysis' evaluations (White's side) as [%eval] comments; the text
// reads back with chess/pgn's parser to the same moves, comments,
// variations, tags and result.
func TestChessExport(t *testing.T) {
	e := chessEnv(t)
	st, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{
		"position": map[string]any{"fen": "startpos", "moves": chessGame}, "limits": map[string]any{"nodes": 50_000}, "notation": "san"})
	if st != http.StatusAccepted {
		t.Fatalf("POST: %d %v", st, v)
	}
	ps := checkChessGame(t, pollGameOn(t, e, v["id"].(string), 3*time.Minute), chessGame)
	var plies []map[string]any
	for i, mv := range chessGame {
		p := map[string]any{"move": mv, "eval": ps[i+1]["eval"]}
		if i == 4 {
			p["comment"] = "the queen for a pawn"
			p["variations"] = [][]map[string]any{{{"move": "f1c4", "eval": map[string]any{"cp": 20, "depth": 12}}, {"move": "g7g6"}}}
		}
		if i == 0 {
			p["time_ms"] = 61_500
		}
		plies = append(plies, p)
	}
	st, _, out := call(t, e, http.MethodPost, "/v1/records/export", map[string]any{"fen": "startpos",
		"header": map[string]any{"white": "A", "black": "B", "event": "Test"}, "end": "0-1", "plies": plies})
	text, _ := out["pgn"].(string)
	if st != 200 || text == "" {
		t.Fatalf("export: %d %v", st, out)
	}
	gs, err := pgn.Parse(text)
	if err != nil {
		t.Fatalf("the export does not read back: %v\n%s", err, text)
	}
	g := gs[0]
	if g.Tag("White") != "A" || g.Tag("Black") != "B" || g.Tag("Event") != "Test" || g.Result != "0-1" || len(g.Moves) != len(chessGame) {
		t.Fatalf("read back: tags %v result %s, %d moves\n%s", g.Tags, g.Result, len(g.Moves), text)
	}
	// The evaluations and times are [%eval] and [%emt] commands, read back
	// into the plies' fields.
	for i, p := range g.Moves {
		if p.Move.String() != chessGame[i] || p.Eval == nil {
			t.Errorf("ply %d: %s %+v", i, p.Move, p)
		}
	}
	ev := ps[5]["eval"].(map[string]any) // after 3.Qxe5+: White lost
	if cp, ok := ev["cp"].(float64); ok && (g.Moves[4].Eval.CP == nil || *g.Moves[4].Eval.CP != int(cp)) {
		t.Errorf("3.Qxe5+ eval %+v, want White's eval %v", g.Moves[4].Eval, cp)
	}
	if e := g.Moves[0].Elapsed; e == nil || *e != 61500*time.Millisecond || g.Moves[4].Comment != "the queen for a pawn" {
		t.Errorf("time %v, comment %q", e, g.Moves[4].Comment)
	}
	if vs := g.Moves[4].Variations; len(vs) != 1 || len(vs[0]) != 2 || vs[0][0].SAN != "Bc4" || vs[0][0].Eval == nil || *vs[0][0].Eval.CP != 20 || vs[0][0].Eval.Depth != 12 {
		t.Errorf("variation %+v", vs)
	}
	if !strings.Contains(text, "3. Qxe5+ { [%eval ") || !strings.Contains(text, "1. e4 { [%eval ") || !strings.Contains(text, "[%emt 0:01:01.5] }") {
		t.Errorf("not written as lichess writes it:\n%s", text)
	}

	// A start other than the standard one is written with SetUp and FEN.
	fen := "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"
	st, _, out = call(t, e, http.MethodPost, "/v1/records/export", map[string]any{"fen": fen, "plies": []any{map[string]any{"move": "f1f8", "eval": map[string]any{"mate": 0}}}, "end": "1-0"})
	gs, err = pgn.Parse(fmt.Sprint(out["pgn"]))
	if st != 200 || err != nil || gs[0].Tag("FEN") != fen || gs[0].Moves[0].SAN != "Qf8#" || gs[0].Moves[0].Eval == nil || *gs[0].Moves[0].Eval.Mate != 0 {
		t.Errorf("from a FEN: %d %v %v", st, out, err)
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		code string
		at   any
	}{
		{"an illegal move", map[string]any{"format": "pgn", "plies": []any{map[string]any{"move": "e2e4"}, map[string]any{"move": "e2e4"}}}, "empty_source", 1.0},
		{"a shogi end", map[string]any{"fen": "startpos", "end": "resign"}, "invalid_field", nil},
		{"sfen and fen", map[string]any{"fen": "startpos", "sfen": "startpos"}, "invalid_field", nil},
		{"kif for chess", map[string]any{"fen": "startpos", "format": "kif"}, "invalid_field", nil},
	} {
		st, _, m := call(t, e, http.MethodPost, "/v1/records/export", tc.body)
		if st != 422 || m["code"] != tc.code || m["move_index"] != tc.at {
			t.Errorf("%s: %d %v, want 422 %s at %v", tc.name, st, m, tc.code, tc.at)
		}
	}
	// Shogi is KIF as before.
	if st, _, m := call(t, e, http.MethodPost, "/v1/records/export", map[string]any{"plies": []any{map[string]any{"move": "7g7f"}}}); st != 200 || m["kif"] == nil {
		t.Errorf("shogi export: %d %v", st, m)
	}
}

// TestChessPlayWebSocket: play_start with a chess position over the
// WebSocket plays stockfish with chess clocks; the human's fool's mate
// ends the game checkmate, 0-1, with the moves in SAN.
func TestChessPlayWebSocket(t *testing.T) {
	e := chessEnv(t)
	cl := dial(t, e)
	play := func(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }
	cl.send(map[string]any{"type": "play_start", "id": "p", "engine": "stockfish", "position": map[string]any{"fen": "startpos"},
		"play": map[string]any{"side": "w", "clock": map[string]any{"w": map[string]any{"main_ms": 60000, "inc_ms": 100}, "b": map[string]any{"main_ms": 5000, "inc_ms": 100, "moves": 40}}}})
	start := play(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p" })))
	if start == nil || start["status"] != "playing" || start["fen"] == nil || start["sfen"] != nil {
		t.Fatalf("play_start: %v", start)
	}
	game := start["game"].(string)
	var end map[string]any
	for i, mv := range []string{"f2f3", "g2g4"} {
		cl.send(map[string]any{"type": "play_move", "id": "m", "game": game, "move": mv})
		end = play(last(cl.until(20*time.Second, func(ev map[string]any) bool {
			p := play(ev)
			return ev["id"] == "p" && p != nil && (len(p["moves"].([]any)) == 2*(i+1) || p["status"] == "ended")
		})))
	}
	r, _ := end["result"].(map[string]any)
	if r["winner"] != "b" || r["reason"] != "checkmate" || r["end"] != "0-1" || len(end["moves_san"].([]any)) != 4 {
		t.Errorf("end: %v", end)
	}
	if sent := strings.Join(e.sentTo("stockfish"), "\n"); !strings.Contains(sent, "winc 100 movestogo 40") {
		t.Errorf("no chess clock with movestogo sent; sent:\n%s", sent)
	}
}

// TestFairyChess: fairy-stockfish told to speak UCI serves the same as
// stockfish's minimal entry: a chess game's analysis, a game with chess
// clocks (the human walks into the fool's mate; fairy-stockfish may not
// take it, and then the human resigns), a Chess960 analysis.
func TestFairyChess(t *testing.T) {
	e := chessEnv(t)
	st, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{"engine": "fairychess",
		"position": map[string]any{"fen": "startpos", "moves": chessGame}, "limits": map[string]any{"nodes": 50_000}, "notation": "san"})
	if st != http.StatusAccepted {
		t.Fatalf("POST: %d %v", st, v)
	}
	job := pollGameOn(t, e, v["id"].(string), 3*time.Minute)
	ps, _ := job["positions"].([]any)
	if job["status"] != "done" || len(ps) != len(chessGame)+1 || ps[4].(map[string]any)["judgement"] != "blunder" {
		t.Errorf("fairychess game analysis: %v", job)
	}
	cl := dial(t, e)
	play := func(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }
	cl.send(map[string]any{"type": "play_start", "id": "p", "engine": "fairychess", "position": map[string]any{"fen": "startpos"},
		"play": map[string]any{"side": "w", "clock": map[string]any{"w": map[string]any{"main_ms": 60000}, "b": map[string]any{"main_ms": 3000, "inc_ms": 100}}}})
	start := play(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p" })))
	var end map[string]any
	for i, mv := range []string{"f2f3", "g2g4"} {
		cl.send(map[string]any{"type": "play_move", "id": "m", "game": start["game"], "move": mv})
		end = play(last(cl.until(20*time.Second, func(ev map[string]any) bool {
			p := play(ev)
			return ev["id"] == "p" && p != nil && (len(p["moves"].([]any)) == 2*(i+1) || p["status"] == "ended")
		})))
	}
	if end["status"] == "playing" {
		if len(end["moves_san"].([]any)) != 4 {
			t.Errorf("fairychess play: %v", end)
		}
		cl.send(map[string]any{"type": "play_resign", "id": "r", "game": start["game"]})
		end = play(last(cl.until(20*time.Second, func(ev map[string]any) bool { p := play(ev); return p != nil && p["status"] == "ended" })))
	}
	if r, _ := end["result"].(map[string]any); r["winner"] != "b" || r["end"] != "0-1" {
		t.Errorf("fairychess play: %v", end)
	}
	st, _, a := call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": "fairychess",
		"position": map[string]any{"fen": fen960, "variant": "chess960", "moves": []string{"e1h1"}}, "limits": map[string]any{"depth": 8}})
	if st != 200 || a["bestmove"] == nil {
		t.Errorf("fairychess Chess960: %d %v", st, a)
	}
}
