package server

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

const recordKIF = "手合割：平手\n先手：甲\n後手：乙\n棋戦：テスト棋戦\n開始日時：2024/03/02\n手数----指手---------消費時間--\n*始まり\n" +
	"   1 ７六歩(77)   ( 0:12/00:00:12)\n*角道\n   2 ３四歩(33)   ( 0:05/00:00:05)+\n   3 投了\n\n変化：2手\n   2 ８四歩(83)\n"

func TestRecordsRoute(t *testing.T) {
	code, _, v := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": recordKIF})
	if code != 200 {
		t.Fatalf("%d %v", code, v)
	}
	pos := v["position"].(map[string]any)
	if v["format"] != "kif" || pos["sfen"] != "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1" ||
		len(pos["moves"].([]any)) != 2 || v["final_sfen"] != "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3" ||
		v["end"] != "resign" || v["comment"] != "始まり" {
		t.Errorf("record: %v", v)
	}
	h := v["header"].(map[string]any)
	if h["black"] != "甲" || h["white"] != "乙" || h["event"] != "テスト棋戦" || h["date"] != "2024/03/02" || h["handicap"] != "平手" || len(h["fields"].([]any)) != 5 {
		t.Errorf("header: %v", h)
	}
	plies := v["plies"].([]any)
	p0, p1 := plies[0].(map[string]any), plies[1].(map[string]any)
	if p0["move"] != "7g7f" || p0["kif"] != "▲７六歩(77)" || p0["comment"] != "角道" || p0["time_ms"] != 12000.0 || p0["line"] != 8.0 {
		t.Errorf("ply 1: %v", p0)
	}
	vars := p1["variations"].([]any)
	if len(vars) != 1 || vars[0].([]any)[0].(map[string]any)["move"] != "8c8d" || vars[0].([]any)[0].(map[string]any)["kif"] != "△８四歩(83)" {
		t.Errorf("ply 2 variations: %v", p1)
	}

	// A Shift_JIS file sent as its bytes.
	sjis, err := os.ReadFile("../kifu/testdata/kfw-game-a-sjis.kif")
	if err != nil {
		t.Fatal(err)
	}
	code, _, v = call(t, shared, "POST", "/v1/records/parse", map[string]any{"record_base64": base64.StdEncoding.EncodeToString(sjis)})
	if code != 200 || len(v["position"].(map[string]any)["moves"].([]any)) != 38 || v["header"].(map[string]any)["black"] != "先手太郎" {
		t.Errorf("Shift_JIS: %d %v", code, v)
	}
	// CSA with a handicap, its format named.
	code, _, v = call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": "PI82HI22KA\n-\n-7162GI\n+7776FU\n%CHUDAN\n", "format": "csa"})
	if code != 200 || v["header"].(map[string]any)["handicap"] != "二枚落ち" || v["end"] != "abort" {
		t.Errorf("CSA: %d %v", code, v)
	}
}

func TestRecordsRouteErrors(t *testing.T) {
	bad := "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３五歩(33)\n"
	long := "startpos moves" + strings.Repeat(" 5i5h 5a5b 5h5i 5b5a", 300)
	tests := []struct {
		name  string
		body  any
		code  string
		line  float64
		index float64
	}{
		{"illegal move", map[string]any{"record": bad}, "unreachable", 4, 1},
		{"syntax", map[string]any{"record": "手合割：平手\n   1 ７六歩(77)\nこれは何\n"}, "record_syntax", 3, -1},
		{"not a record", map[string]any{"record": "hello"}, "record_format", 0, -1},
		{"encoding", map[string]any{"record_base64": base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0x80})}, "record_encoding", 0, -1},
		{"too many moves", map[string]any{"record": long}, "record_too_long", 1, -1},
		{"neither field", map[string]any{}, "invalid_field", 0, -1},
		{"both fields", map[string]any{"record": "a", "record_base64": "YQ=="}, "invalid_field", 0, -1},
		{"bad base64", map[string]any{"record_base64": "%%%"}, "invalid_field", 0, -1},
		{"bad format", map[string]any{"record": bad, "format": "sgf"}, "invalid_field", 0, -1}, // pgn is a format since issue 28
		{"forced format", map[string]any{"record": bad, "format": "csa"}, "record_syntax", 1, -1},
	}
	for _, tc := range tests {
		code, _, v := call(t, shared, "POST", "/v1/records/parse", tc.body)
		line, _ := v["line"].(float64)
		index, ok := v["move_index"].(float64)
		if !ok {
			index = -1
		}
		if code != 422 || v["code"] != tc.code || line != tc.line || index != tc.index {
			t.Errorf("%s: %d %v, want 422 %s line %v move_index %v", tc.name, code, v, tc.code, tc.line, tc.index)
		}
	}
	if code, _, v := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": strings.Repeat("x", 70000)}); code != 413 || v["code"] != "body_too_large" {
		t.Errorf("huge: %d %v", code, v)
	}
}

// TestRecordsBodyTimeout: a stalled record body gets 408 like every REST
// body (the conformance check leaves this status to this test).
func TestRecordsBodyTimeout(t *testing.T) {
	spec(t)
	cfg := shared.srv.cfg
	cfg.Registerer = nil
	cfg.BodyTimeout = 200 * time.Millisecond
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Drain(context.Background())
	resp, body := stalledPOST(t, hs.URL, "/v1/records/parse", `{"record":`)
	if resp.StatusCode != 408 {
		t.Fatalf("%d %s, want 408", resp.StatusCode, body)
	}
	checkResponseAs(t, "RequestTimeout", "stalled POST /v1/records/parse", resp, body)
}

// TestRecordsExport: a game written as KIF with comments, times,
// evaluations and variations reads back (POST /v1/records/parse) to the
// same lines.
func TestRecordsExport(t *testing.T) {
	cp, mate := 54, -3
	body := map[string]any{
		"header":  map[string]any{"black": "甲", "white": "乙", "handicap": "平手", "fields": []map[string]any{{"key": "棋戦", "value": "テスト棋戦"}}},
		"comment": "始まり",
		"end":     "resign",
		"plies": []map[string]any{
			{"move": "7g7f", "time_ms": 12000, "eval": map[string]any{"cp": cp, "depth": 12, "pv": []string{"3c3d", "2g2f"}}},
			{"move": "3c3d", "comment": "角道", "variations": [][]map[string]any{{{"move": "8c8d", "eval": map[string]any{"mate": mate}}, {"move": "2g2f"}}}},
			{"move": "8h2b+"},
		},
	}
	code, _, v := call(t, shared, "POST", "/v1/records/export", body)
	if code != 200 {
		t.Fatalf("%d %v", code, v)
	}
	kif := v["kif"].(string)
	for _, want := range []string{"先手：甲\n", "後手：乙\n", "棋戦：テスト棋戦\n", "手合割：平手\n", "*始まり\n", "   1 ７六歩(77)   ( 0:12/00:00:12)\n",
		"*#評価値=54\n*#読み筋=△３四歩(33)▲２六歩(27)\n*#深さ=12\n", "*角道\n", "   3 ２二角成(88)", "   4 投了\n", "変化：2手\n   2 ８四歩(83)", "*#詰み=後手勝ち:3手\n"} {
		if !strings.Contains(kif, want) {
			t.Errorf("KIF lacks %q:\n%s", want, kif)
		}
	}
	code, _, p := call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": kif})
	if code != 200 {
		t.Fatalf("parse back: %d %v", code, p)
	}
	moves := p["position"].(map[string]any)["moves"].([]any)
	plies := p["plies"].([]any)
	alt := plies[1].(map[string]any)["variations"].([]any)[0].([]any)
	if len(moves) != 3 || moves[2] != "8h2b+" || p["end"] != "resign" || len(alt) != 2 || alt[1].(map[string]any)["move"] != "2g2f" ||
		plies[1].(map[string]any)["comment"] != "角道" || plies[0].(map[string]any)["time_ms"] != 12000.0 {
		t.Errorf("read back: %v", p)
	}

	// A handicap start is written as its 手合割, its players as 下手 and
	// 上手; any other start as a board.
	code, _, v = call(t, shared, "POST", "/v1/records/export", map[string]any{"sfen": "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
		"header": map[string]any{"black": "甲", "white": "乙"}, "plies": []map[string]any{{"move": "3c3d"}}})
	if code != 200 {
		t.Fatalf("handicap: %d %v", code, v)
	}
	for _, want := range []string{"手合割：飛車落ち\n", "下手：甲\n", "上手：乙\n"} {
		if !strings.Contains(v["kif"].(string), want) {
			t.Errorf("handicap KIF lacks %q:\n%s", want, v["kif"])
		}
	}
	code, _, p = call(t, shared, "POST", "/v1/records/parse", map[string]any{"record": v["kif"]})
	if h, _ := p["header"].(map[string]any); code != 200 || h["black"] != "甲" || h["white"] != "乙" {
		t.Errorf("handicap read back: %d %v", code, p)
	}
	code, _, v = call(t, shared, "POST", "/v1/records/export", map[string]any{"sfen": "4k4/9/9/9/9/9/9/9/4K4 b G 1", "plies": []map[string]any{{"move": "G*5b"}}})
	if code != 200 || !strings.Contains(v["kif"].(string), "先手の持駒：金") {
		t.Errorf("board diagram: %d %v", code, v)
	}
}

func TestRecordsExportErrors(t *testing.T) {
	long := make([]map[string]any, 0, 1100)
	for i := 0; len(long) < 1100; i++ {
		for _, m := range []string{"5i5h", "5a5b", "5h5i", "5b5a"} {
			long = append(long, map[string]any{"move": m})
		}
	}
	tests := []struct {
		name  string
		body  any
		code  string
		index float64
	}{
		{"illegal move", map[string]any{"plies": []map[string]any{{"move": "7g7f"}, {"move": "3c3e"}}}, "unreachable", 1},
		{"illegal variation move", map[string]any{"plies": []map[string]any{{"move": "7g7f", "variations": [][]map[string]any{{{"move": "2g2f"}, {"move": "7g7f"}}}}}}, "opponent_piece", 1},
		{"illegal start", map[string]any{"sfen": "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNK b - 1", "plies": []map[string]any{}}, "two_kings", -1},
		{"cp and mate", map[string]any{"plies": []map[string]any{{"move": "7g7f", "eval": map[string]any{"cp": 1, "mate": 3}}}}, "invalid_field", -1},
		{"no score", map[string]any{"plies": []map[string]any{{"move": "7g7f", "eval": map[string]any{"depth": 3}}}}, "invalid_field", -1},
		{"negative time", map[string]any{"plies": []map[string]any{{"move": "7g7f", "time_ms": -1}}}, "invalid_field", -1},
		{"a time longer than CSA allows", map[string]any{"plies": []map[string]any{{"move": "7g7f", "time_ms": 1_000_000_000_001}}}, "invalid_field", -1},
		{"empty variation", map[string]any{"plies": []map[string]any{{"move": "7g7f", "variations": [][]map[string]any{{}}}}}, "invalid_field", -1},
		{"bad end", map[string]any{"end": "won", "plies": []map[string]any{}}, "invalid_field", -1},
		{"too many moves", map[string]any{"plies": long}, "record_too_long", -1},
	}
	for _, tc := range tests {
		code, _, v := call(t, shared, "POST", "/v1/records/export", tc.body)
		index, ok := v["move_index"].(float64)
		if !ok {
			index = -1
		}
		if code != 422 || v["code"] != tc.code || index != tc.index {
			t.Errorf("%s: %d %v, want 422 %s move_index %v", tc.name, code, v, tc.code, tc.index)
		}
	}
	if code, _, v := call(t, shared, "POST", "/v1/records/export", map[string]any{"plies": []map[string]any{{"move": "7g7f", "kiff": "▲７六歩(77)"}}}); code != 400 {
		t.Errorf("unknown field: %d %v", code, v)
	}
}

// TestRecordsRateLimited: /v1/records/* cost CPU without an engine, so they
// take from the client's request rate like searches (before: no limit, and
// four clients parsing comment bombs slowed everyone's /v1/validate);
// another client is not affected.
func TestRecordsRateLimited(t *testing.T) {
	_, hs := withAccess(t, &Access{Keys: map[string]string{"k": "key-k"}, Anonymous: true,
		AnonymousQuota: Quota{Rate: 0.01, Burst: 2, Sessions: 5, Leases: 5}})
	parse := `{"record":"position startpos moves 7g7f"}`
	export := `{"plies":[{"move":"7g7f"}]}`
	for i, c := range []struct {
		path, body string
		want       int
	}{{"/v1/records/parse", parse, 200}, {"/v1/records/export", export, 200}, {"/v1/records/parse", parse, 429}, {"/v1/records/export", export, 429}} {
		resp, b := do(t, "POST", hs.URL+c.path, "", c.body)
		if resp.StatusCode != c.want {
			t.Errorf("anonymous request %d (%s): %d %s, want %d", i+1, c.path, resp.StatusCode, b, c.want)
		}
		if c.want == 429 && (resp.Header.Get("Retry-After") == "" || !strings.Contains(b, `"too_many_requests"`)) {
			t.Errorf("429 without Retry-After or code: %v %s", resp.Header, b)
		}
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/records/parse", "key-k", parse); resp.StatusCode != 200 {
		t.Errorf("a keyed client is limited by the anonymous one: %d %s", resp.StatusCode, b)
	}
}
