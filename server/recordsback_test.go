package server

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// withoutLines is a parse answer's plies without each ply's "line" (where
// the text had the move: a record written anew has its own lines).
func withoutLines(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "line" {
				out[k] = withoutLines(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutLines(e)
		}
		return out
	}
	return v
}

// timedKIF is a KIF whose every move has its time: KIF writes times for
// every move or none (kifu.ExportKIF), so a move without one would read
// back as 0:00.
const timedKIF = "手合割：平手\n先手：甲\n後手：乙\n手数----指手---------消費時間--\n*始まり\n" +
	"   1 ７六歩(77)   ( 0:12/00:00:12)\n*角道\n   2 ３四歩(33)   ( 0:05/00:00:05)+\n   3 ２二角成(88) ( 0:03/00:00:15)\n   4 同　銀(31) ( 0:01/00:00:06)\n   5 投了\n\n" +
	"変化：2手\n   2 ８四歩(83)   ( 0:07/00:00:07)\n*飛車先\n   3 ２六歩(27)   ( 0:02/00:00:14)\n"

// TestRecordsParseExportParse: for every game, what /v1/records/parse
// answers is taken by /v1/records/export as it is, and the record written
// parses back to the same game: the same start, main line and final
// position, the same tree of plies (variations nested, comments, NAGs,
// clocks, evaluations, times), the same end and header fields (export
// adds the tags PGN's roster needs); writing the second answer gives the
// same text.
func TestRecordsParseExportParse(t *testing.T) {
	file := func(name string) string {
		b, err := os.ReadFile("../chess/pgn/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct{ name, record, field, final string }{
		{"shogi KIF with a variation", timedKIF, "kif", "final_sfen"},
		{"chess: the Opera game", file("opera.pgn"), "pgn", "final_fen"},
		{"chess: a lichess export", file("lichess.pgn"), "pgn", "final_fen"},
		{"othello: a transcript with a pass", othelloGame, "transcript", "final_othello"},
	} {
		code, _, first := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": c.record})
		if code != 200 {
			t.Fatalf("%s: parse: %d %v", c.name, code, first)
		}
		code, _, out := call(t, shared, "POST", "/v1/records/export", first)
		text, _ := out[c.field].(string)
		if code != 200 || text == "" {
			t.Fatalf("%s: export of the parse answer: %d %v", c.name, code, out)
		}
		code, _, second := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": text})
		if code != 200 {
			t.Fatalf("%s: parse of the export: %d %v\n%s", c.name, code, second, text)
		}
		for _, k := range []string{"format", "position", c.final, "end", "comment", "plies"} {
			if a, b := withoutLines(first[k]), withoutLines(second[k]); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: %s read back\n%v\nwas\n%v\n%s", c.name, k, b, a, text)
			}
		}
		// The first answer's header fields among the second's (KIF writes
		// 手合割 after the others; PGN keeps the order).
		f1, f2 := first["header"].(map[string]any)["fields"].([]any), second["header"].(map[string]any)["fields"].([]any)
		for _, f := range f1 {
			if !slices.ContainsFunc(f2, func(g any) bool { return reflect.DeepEqual(f, g) }) {
				t.Errorf("%s: header fields %v read back as %v", c.name, f1, f2)
			}
		}
		if c.field == "pgn" && !reflect.DeepEqual(f1, f2[len(f2)-len(f1):]) {
			t.Errorf("%s: tags %v read back as %v", c.name, f1, f2)
		}
		code, _, again := call(t, shared, "POST", "/v1/records/export", second)
		if code != 200 || again[c.field] != text {
			t.Errorf("%s: writing again: %d\n%v\nwas\n%s", c.name, code, again[c.field], text)
		}
	}
}

// TestPGNVariationsAnswered: the Opera game's variations, comments and
// NAGs, and a lichess export's clocks and evaluations, as parse answers
// them: in the shape of shogi's plies (variations on the ply they are
// alternatives to).
func TestPGNVariationsAnswered(t *testing.T) {
	b, err := os.ReadFile("../chess/pgn/testdata/opera.pgn")
	if err != nil {
		t.Fatal(err)
	}
	code, _, v := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": string(b)})
	if code != 200 {
		t.Fatalf("%d %v", code, v)
	}
	plies := v["plies"].([]any)
	bxf3 := plies[7].(map[string]any)
	alt := bxf3["variations"].([]any)[0].([]any)
	nxe5 := alt[3].(map[string]any)
	if bxf3["san"] != "Bxf3" || alt[0].(map[string]any)["san"] != "dxe5" || nxe5["comment"] != "and White has won a pawn." ||
		nxe5["variations"].([]any)[0].([]any)[0].(map[string]any)["san"] != "Bc4" {
		t.Errorf("4... Bxf3 and its variation: %v", bxf3)
	}
	if q := plies[30].(map[string]any); q["san"] != "Qb8+" || !reflect.DeepEqual(q["nags"], []any{3.0}) || q["comment"] != "A queen sacrifice." {
		t.Errorf("16. Qb8+!!: %v", q)
	}
	b, err = os.ReadFile("../chess/pgn/testdata/lichess.pgn")
	if err != nil {
		t.Fatal(err)
	}
	code, _, v = call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": string(b)})
	if code != 200 {
		t.Fatalf("%d %v", code, v)
	}
	qh5 := v["plies"].([]any)[2].(map[string]any)
	if qh5["clock_ms"] != 178000.0 || !reflect.DeepEqual(qh5["eval"], map[string]any{"cp": -26.0}) || !reflect.DeepEqual(qh5["nags"], []any{6.0}) ||
		qh5["comment"] != "(0.28 → -0.26) Inaccuracy. Nf3 was best." || len(qh5["variations"].([]any)) != 1 {
		t.Errorf("2. Qh5?!: %v", qh5)
	}
}

// TestRecordsExportMismatch: what parse answers beside the moves is
// checked against them: a notation naming another move, moves that are
// not the plies' main line, a final position the moves do not reach are
// refused with record_mismatch; another game's notation with
// invalid_field.
func TestRecordsExportMismatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  map[string]any
		code  string
		index float64
	}{
		{"a san naming another move", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "e2e4", "san": "e4"}, {"move": "e7e5", "san": "e6"}}}, "record_mismatch", 1},
		{"a san that is no move", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "e2e4", "san": "Ke9"}}}, "record_mismatch", 0},
		{"a san in a variation", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "e2e4", "variations": [][]map[string]any{{{"move": "d2d4", "san": "c4"}}}}}}, "record_mismatch", 0},
		{"a kif on a chess ply", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "e2e4", "kif": "▲７六歩(77)"}}}, "invalid_field", -1},
		{"a kif naming another move", map[string]any{"plies": []map[string]any{{"move": "7g7f", "kif": "▲２六歩(27)"}}}, "record_mismatch", 0},
		{"a san on a shogi ply", map[string]any{"plies": []map[string]any{{"move": "7g7f", "san": "e4"}}}, "invalid_field", -1},
		{"position.moves other than the plies", map[string]any{"position": map[string]any{"fen": "startpos", "moves": []string{"e2e4", "e7e6"}}, "plies": []map[string]any{{"move": "e2e4"}, {"move": "e7e5"}}}, "record_mismatch", 1},
		{"position.moves shorter than the plies", map[string]any{"position": map[string]any{"fen": "startpos", "moves": []string{"e2e4"}}, "plies": []map[string]any{{"move": "e2e4"}, {"move": "e7e5"}}}, "record_mismatch", 1},
		{"a final position not reached", map[string]any{"fen": "startpos", "final_fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "plies": []map[string]any{{"move": "e2e4"}}}, "record_mismatch", -1},
		{"two starts", map[string]any{"fen": "startpos", "position": map[string]any{"fen": "8/8/8/8/8/8/8/K6k w - - 0 1", "moves": []string{}}}, "invalid_field", -1},
		{"a variation's comment on the main line", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "e2e4", "comment_before": "x"}}}, "invalid_field", -1},
	} {
		code, _, v := call(t, shared, "POST", "/v1/records/export", tc.body)
		index, ok := v["move_index"].(float64)
		if !ok {
			index = -1
		}
		if code != 422 || v["code"] != tc.code || index != tc.index {
			t.Errorf("%s: %d %v, want 422 %s move_index %v", tc.name, code, v, tc.code, tc.index)
		}
	}
	// A position's moves alone are the game; any SAN naming the move is
	// taken ("Ngf3" where "Nf3" is enough).
	code, _, v := call(t, shared, "POST", "/v1/records/export", map[string]any{"position": map[string]any{"fen": "startpos", "moves": []string{"g1f3"}}})
	if code != 200 || !strings.Contains(v["pgn"].(string), "1. Nf3 *") {
		t.Errorf("moves alone: %d %v", code, v)
	}
	code, _, v = call(t, shared, "POST", "/v1/records/export", map[string]any{"fen": "startpos", "plies": []map[string]any{{"move": "g1f3", "san": "Ngf3"}}})
	if code != 200 || !strings.Contains(v["pgn"].(string), "1. Nf3 *") {
		t.Errorf("a SAN written otherwise: %d %v", code, v)
	}
}
