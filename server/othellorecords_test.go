package server

import (
	"fmt"
	"strings"
	"testing"
)

// othelloGame is a whole othello game (random legal moves) with a forced
// pass before its last square; Black wins 45-19.
const othelloGame = "f5f4c3e6g4b2d3e3f3g3g2h3e7f1g5c5f2e8c4d6h5e2g1h2d2d1b5b4c7a5a4h6c2b3f8c6h1f6b6a6a1e1a7b7f7g6c1b8d7c8g7h4h7a2d8g8a3a8b1h8"

// squaresOf splits a transcript into its squares.
func squaresOf(t string) []string {
	var out []string
	for i := 0; i+1 < len(t); i += 2 {
		out = append(out, t[i:i+2])
	}
	return out
}

// TestOthelloRecords: an othello move transcript is read by
// /v1/records/parse (detected, or format "transcript") as an othello
// position with the passes put back and each square's line, and written by
// /v1/records/export with its result; refusals have the othello codes,
// the square's index and line.
func TestOthelloRecords(t *testing.T) {
	// Upper and lower case, spaces and lines, as transcripts are written.
	text := strings.ToUpper(othelloGame[:20]) + "\n" + othelloGame[20:60] + " \r\n  " + othelloGame[60:]
	for _, body := range []map[string]any{{"record": text}, {"record": text, "format": "transcript"}} {
		code, _, v := call(t, shared, "POST", "/v1/records/parse", body)
		if code != 200 {
			t.Fatalf("%v: %d %v", body["format"], code, v)
		}
		pos, _ := v["position"].(map[string]any)
		moves, _ := pos["moves"].([]any)
		plies, _ := v["plies"].([]any)
		if v["format"] != "transcript" || pos["othello"] != "startpos" || len(moves) != 61 || moves[59] != "pass" || moves[60] != "h8" ||
			v["end"] != "45-19" || len(plies) != 61 || v["final_othello"] == nil {
			t.Fatalf("parse: %v", v)
		}
		if p := plies[59].(map[string]any); p["move"] != "pass" || p["line"] != nil {
			t.Errorf("the pass put back: %v", p)
		}
		for i, want := range map[int]float64{0: 1, 9: 1, 10: 2, 29: 2, 30: 3, 60: 3} {
			if p := plies[i].(map[string]any); p["line"] != want {
				t.Errorf("ply %d: %v, want line %v", i, p, want)
			}
		}
		if h, _ := v["header"].(map[string]any); h == nil || len(h["fields"].([]any)) != 0 {
			t.Errorf("header: %v", v["header"])
		}
	}

	for _, tc := range []struct {
		name, record, format string
		code                 string
		line, index          float64
	}{
		{"an occupied square", "f5d6\nc3d3c4f4\nf4", "", "occupied", 3, 6},
		{"a square that flips nothing", "f5a1", "", "flips_nothing", 1, 1},
		{"not a square", "f5d6\nc3z9", "transcript", "move_syntax", 2, 3},
		{"a shogi record read as a transcript", "position startpos moves 7g7f", "transcript", "move_syntax", 1, 0},
		{"an empty transcript", " \n", "transcript", "record_format", 0, -1},
	} {
		body := map[string]any{"record": tc.record}
		if tc.format != "" {
			body["format"] = tc.format
		}
		code, _, v := call(t, shared, "POST", "/v1/records/parse", body)
		line, _ := v["line"].(float64)
		index, ok := v["move_index"].(float64)
		if !ok {
			index = -1
		}
		if code != 422 || v["code"] != tc.code || line != tc.line || index != tc.index {
			t.Errorf("%s: %d %v, want 422 %s line %v move_index %v", tc.name, code, v, tc.code, tc.line, tc.index)
		}
	}

	// Written back: the squares without the pass, the result by the discs;
	// the pass may be given or left out.
	var withPass, without []map[string]any
	for i, sq := range squaresOf(othelloGame) {
		if i == 59 {
			withPass = append(withPass, map[string]any{"move": "pass"})
		}
		withPass = append(withPass, map[string]any{"move": sq})
		without = append(without, map[string]any{"move": sq})
	}
	withPass[1]["variations"] = [][]map[string]any{{{"move": "d6", "eval": map[string]any{"cp": 200, "depth": 8}, "time_ms": 1500}}}
	for name, body := range map[string]map[string]any{
		"with the pass":       {"othello": "startpos", "plies": withPass, "header": map[string]any{"black": "A"}, "comment": "not written"},
		"without it":          {"format": "transcript", "plies": without, "end": "45-19"},
		"from the start text": {"othello": "---------------------------OX------XO---------------------------B1", "plies": without},
	} {
		code, _, v := call(t, shared, "POST", "/v1/records/export", body)
		if code != 200 || v["transcript"] != othelloGame || v["end"] != "45-19" {
			t.Errorf("export %s: %d %v", name, code, v)
		}
	}
	code, _, v := call(t, shared, "POST", "/v1/records/export", map[string]any{"othello": "startpos", "plies": without[:4], "end": "W+"})
	if code != 200 || v["transcript"] != othelloGame[:8] || v["end"] != "W+" {
		t.Errorf("a resigned game: %d %v", code, v)
	}
	code, _, back := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": v["transcript"]})
	if code != 200 || fmt.Sprint(back["position"].(map[string]any)["moves"]) != "[f5 f4 c3 e6]" || back["end"] != nil {
		t.Errorf("read back: %d %v", code, back)
	}

	for _, tc := range []struct {
		name  string
		body  map[string]any
		code  string
		index any
	}{
		{"an illegal square", map[string]any{"othello": "startpos", "plies": []any{map[string]any{"move": "f5"}, map[string]any{"move": "f5"}}}, "occupied", 1.0},
		{"an illegal square in a variation", map[string]any{"othello": "startpos", "plies": []any{map[string]any{"move": "f5", "variations": []any{[]any{map[string]any{"move": "d3"}, map[string]any{"move": "a1"}}}}}}, "flips_nothing", 1.0},
		{"a pass not allowed", map[string]any{"format": "transcript", "plies": []any{map[string]any{"move": "pass"}}}, "pass_not_allowed", 0.0},
		{"another end than the board's", map[string]any{"othello": "startpos", "plies": without, "end": "B+"}, "invalid_field", nil},
		{"a shogi end", map[string]any{"othello": "startpos", "end": "resign"}, "invalid_field", nil},
		{"another start", map[string]any{"othello": "--------------------------XXX------XO---------------------------W2", "plies": []any{}}, "invalid_field", nil},
		{"two games' positions", map[string]any{"othello": "startpos", "sfen": "startpos"}, "invalid_field", nil},
		{"a transcript of a chess game", map[string]any{"fen": "startpos", "format": "transcript"}, "invalid_field", nil},
		{"a variant", map[string]any{"othello": "startpos", "variant": "chess960"}, "invalid_field", nil},
		{"no score", map[string]any{"othello": "startpos", "plies": []any{map[string]any{"move": "f5", "eval": map[string]any{"depth": 3}}}}, "invalid_field", nil},
	} {
		st, _, m := call(t, shared, "POST", "/v1/records/export", tc.body)
		if st != 422 || m["code"] != tc.code || m["move_index"] != tc.index {
			t.Errorf("%s: %d %v, want 422 %s at %v", tc.name, st, m, tc.code, tc.index)
		}
	}
}
