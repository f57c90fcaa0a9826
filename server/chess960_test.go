package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// A Chess960 position with castling on both sides open to White (king
// e1 between rooks b1 and h1: Shredder-FEN rights HB, X-FEN KQ), as
// after a few opening moves of the start position "nbrqkbr..." family.
const fen960 = "1r2k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/1R2K2R w HBhb - 0 8"

// TestChess960: a Chess960 position (variant chess960, Shredder-FEN or
// X-FEN castling rights) validates, with castling as king-takes-rook
// among its legal moves; stockfish (which advertises UCI_Chess960)
// analyses it with UCI_Chess960 true, and its lines' castling moves, in
// the engine's form, are legal; a standard analysis afterwards has
// UCI_Chess960 false again (castling e1g1). An engine without
// UCI_Chess960 refuses the position with unsupported.
func TestChess960(t *testing.T) {
	e := chessEnv(t)
	for _, fen := range []string{fen960, strings.Replace(fen960, "HBhb", "KQkq", 1)} {
		st, _, v := call(t, e, http.MethodPost, "/v1/validate", map[string]any{"position": map[string]any{"fen": fen, "variant": "chess960", "moves": []string{"e1h1"}}, "notation": "san"})
		if st != 200 || v["valid"] != true || fmt.Sprint(v["moves_san"]) != "[O-O]" {
			t.Fatalf("validate %s: %d %v", fen, st, v)
		}
		if !strings.HasPrefix(v["fen"].(string), "1r2k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/1R3RK1 b") {
			t.Errorf("after O-O: %v", v["fen"])
		}
	}
	st, _, v := call(t, e, http.MethodPost, "/v1/validate", map[string]any{"position": map[string]any{"fen": fen960, "variant": "chess960"}})
	legal, _ := v["legal_moves"].([]any)
	if st != 200 || !slices.Contains(legal, any("e1h1")) || !slices.Contains(legal, any("e1b1")) || slices.Contains(legal, any("e1g1")) {
		t.Errorf("legal moves %v: want e1h1 and e1b1 (castling), no e1g1", legal)
	}
	// Without the variant the position is not standard chess.
	if st, _, v := call(t, e, http.MethodPost, "/v1/validate", map[string]any{"position": map[string]any{"fen": fen960}}); st != 200 || v["valid"] != false {
		t.Errorf("as standard chess: %d %v", st, v)
	}

	castles := func(m map[string]any) (kingTakesRook, twoSquares bool) {
		for _, l := range m["lines"].([]any) {
			for _, mv := range l.(map[string]any)["pv"].([]any) {
				switch mv {
				case "e1h1", "e1b1", "e8h8", "e8b8":
					kingTakesRook = true
				case "e1g1", "e1c1", "e8g8", "e8c8":
					twoSquares = true
				}
			}
		}
		return
	}
	st, _, a := call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": "stockfish", "multipv": 5,
		"position": map[string]any{"fen": fen960, "variant": "chess960"}, "limits": map[string]any{"depth": 12}, "notation": "san"})
	if st != 200 {
		t.Fatalf("analyze: %d %v", st, a)
	}
	if k, two := castles(a); !k || two {
		t.Errorf("Chess960 lines %v: want castling king-takes-rook, none by two squares", a["lines"])
	}
	if sent := strings.Join(e.sentTo("stockfish"), "\n"); !strings.Contains(sent, "setoption name UCI_Chess960 value true") {
		t.Errorf("UCI_Chess960 never set; sent:\n%s", sent)
	}
	// The same board as standard chess (standard castling rights): the
	// engine is told UCI_Chess960 false again and castles by two squares.
	std := "r3k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R w KQkq - 0 8"
	st, _, a = call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": "stockfish", "multipv": 5,
		"position": map[string]any{"fen": std}, "limits": map[string]any{"depth": 12}})
	if k, two := castles(a); st != 200 || k || !two {
		t.Errorf("standard lines %d %v: want castling by two squares only", st, a["lines"])
	}
	// An engine that does not advertise UCI_Chess960, over REST and the
	// WebSocket; a variant on a shogi position.
	for _, body := range []map[string]any{
		{"engine": "no960", "position": map[string]any{"fen": fen960, "variant": "chess960"}, "limits": map[string]any{"depth": 1}},
		{"position": map[string]any{"sfen": "startpos", "variant": "chess960"}, "limits": map[string]any{"depth": 1}},
		{"engine": "stockfish", "position": map[string]any{"fen": fen960, "variant": "crazyhouse"}, "limits": map[string]any{"depth": 1}},
	} {
		st, _, m := call(t, e, http.MethodPost, "/v1/analyze", body)
		want := "invalid_field"
		if body["engine"] == "no960" {
			want = "unsupported"
		}
		if st != 422 || m["code"] != want {
			t.Errorf("%v: %d %v, want 422 %s", body, st, m, want)
		}
	}
	// A Chess960 game as PGN: read with its variant, analysed whole on
	// stockfish, the castling move (king takes rook) judged like any other.
	pgnText := "[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"" + fen960 + "\"]\n\n8. O-O O-O 9. a3 *\n"
	st, _, rec := call(t, e, http.MethodPost, "/v1/records/parse", map[string]any{"record": pgnText})
	pos, _ := rec["position"].(map[string]any)
	if st != 200 || pos["variant"] != "chess960" || fmt.Sprint(pos["moves"]) != "[e1h1 e8h8 a2a3]" {
		t.Fatalf("parse: %d %v", st, rec)
	}
	st, _, job := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{"record": pgnText, "limits": map[string]any{"nodes": 50_000}, "notation": "san"})
	if st != http.StatusAccepted {
		t.Fatalf("game analysis: %d %v", st, job)
	}
	job = pollGameOn(t, e, job["id"].(string), 3*time.Minute)
	ps, _ := job["positions"].([]any)
	if job["status"] != "done" || len(ps) != 4 {
		t.Fatalf("game analysis: %v", job)
	}
	for i, want := range []string{"O-O", "O-O", "a3"} {
		p := ps[i].(map[string]any)
		if p["move_san"] != want || p["judgement"] == nil || p["bestmove_san"] == nil {
			t.Errorf("ply %d: %v", i, p)
		}
	}

	// The game written back as PGN: its Variant tag and castling read back.
	st, _, out := call(t, e, http.MethodPost, "/v1/records/export", map[string]any{"fen": fen960, "variant": "chess960",
		"plies": []any{map[string]any{"move": "e1h1"}, map[string]any{"move": "e8h8"}, map[string]any{"move": "a2a3"}}})
	st2, _, back := call(t, e, http.MethodPost, "/v1/records/parse", map[string]any{"record": out["pgn"]})
	bpos, _ := back["position"].(map[string]any)
	if st != 200 || st2 != 200 || !strings.Contains(fmt.Sprint(out["pgn"]), "[Variant \"Chess960\"]") || bpos["variant"] != "chess960" || fmt.Sprint(bpos["moves"]) != "[e1h1 e8h8 a2a3]" {
		t.Errorf("export: %d %v; read back: %d %v", st, out, st2, back)
	}

	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "a", "engine": "no960", "position": map[string]any{"fen": fen960, "variant": "chess960"}, "limits": map[string]any{"depth": 1}})
	if ev := last(cl.terminal("a", 30e9)); ev["type"] != "error" || ev["code"] != "unsupported" {
		t.Errorf("no960 over the WebSocket: %v", ev)
	}
}
