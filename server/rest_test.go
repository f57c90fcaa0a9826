package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHealthAndReady(t *testing.T) {
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _, body := call(t, shared, "GET", path, nil); code != 200 || body["status"] == "" {
			t.Errorf("GET %s: %d %v", path, code, body)
		}
	}
	for path, want := range map[string]string{"/openapi.yaml": "openapi: 3", "/metrics": "usid_pool_engines"} {
		resp, err := http.Get(shared.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 1<<20)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(b.String(), want) {
			t.Errorf("GET %s: %d, no %q", path, resp.StatusCode, want)
		}
	}
}

func TestEnginesRoute(t *testing.T) {
	code, _, body := call(t, shared, "GET", "/v1/engines", nil)
	engines, _ := body["engines"].([]any)
	if code != 200 || len(engines) != 6 {
		t.Fatalf("%d %v", code, body)
	}
	fairy := engines[0].(map[string]any)
	if fairy["name"] != "fairy" || !strings.Contains(fairy["id"].(map[string]any)["name"].(string), "Fairy-Stockfish") ||
		fairy["instances"] != 2.0 || len(fairy["options"].([]any)) < 10 || fairy["client_options"].(map[string]any)["Skill Level"] == nil {
		t.Errorf("fairy: %v", fairy)
	}
	gps := engines[1].(map[string]any)
	if gps["capabilities"].(map[string]any)["checkmate"] != true {
		t.Errorf("gps capabilities: %v", gps["capabilities"])
	}
}

func TestValidateRoute(t *testing.T) {
	code, _, v := call(t, shared, "POST", "/v1/validate", map[string]any{
		"position": map[string]any{"moves": []string{"7g7f", "3c3d", "8h2b+", "3a2b"}}, "notation": "kif"})
	if code != 200 || v["valid"] != true || v["side_to_move"] != "b" || len(v["legal_moves"].([]any)) == 0 {
		t.Errorf("legal: %d %v", code, v)
	}
	kif := v["moves_kif"].([]any)
	if len(kif) != 4 || kif[0] != "▲７六歩(77)" || kif[3] != "△同　銀(31)" {
		t.Errorf("moves_kif %v", kif)
	}
	code, _, v = call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"sfen": "4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1"}})
	errs, _ := v["errors"].([]any)
	if code != 200 || v["valid"] != false || len(errs) != 1 || errs[0].(map[string]any)["code"] != "nifu" {
		t.Errorf("nifu: %d %v", code, v)
	}
	code, _, v = call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"moves": []string{"7g7f", "7g7f"}}})
	errs, _ = v["errors"].([]any)
	if code != 200 || v["valid"] != false || errs[0].(map[string]any)["move_index"] != 1.0 {
		t.Errorf("bad move: %d %v", code, v)
	}
}

// TestRESTErrors: every error status, as problem JSON with a stable code.
func TestRESTErrors(t *testing.T) {
	tests := []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"POST", "/v1/validate", `{"position":`, 400, "bad_request"},
		{"POST", "/v1/validate", `{"position":{},"extra":1}`, 400, "bad_request"},
		{"POST", "/v1/validate", `{"position":{}} {}`, 400, "bad_request"},
		{"POST", "/v1/validate", `{"position":{"moves":["` + strings.Repeat("7g7f\",\"", 20000) + `"]}}`, 413, "body_too_large"},
		{"POST", "/v1/validate", map[string]any{"notation": "western"}, 422, "invalid_field"},
		{"POST", "/v1/analyze", map[string]any{"position": map[string]any{}}, 422, "invalid_field"}, // no limit
		{"POST", "/v1/analyze", map[string]any{"position": map[string]any{"sfen": "4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1"}, "limits": map[string]any{"depth": 1}}, 422, "nifu"},
		{"POST", "/v1/analyze", map[string]any{"position": map[string]any{"moves": []string{"7g7f", "P*5e"}}, "limits": map[string]any{"depth": 1}}, 422, "drop_not_in_hand"},
		{"POST", "/v1/analyze", map[string]any{"engine": "nope", "limits": map[string]any{"depth": 1}}, 404, "unknown_engine"},
		{"POST", "/v1/analyze", map[string]any{"limits": map[string]any{"depth": 1e6}}, 422, "invalid_field"},
		{"POST", "/v1/analyze", map[string]any{"limits": map[string]any{"nodes": -5}}, 422, "invalid_field"},
		{"POST", "/v1/analyze", map[string]any{"multipv": 2, "engine": "gps", "limits": map[string]any{"depth": 1}}, 422, "unsupported"},
		{"POST", "/v1/mate", map[string]any{"timeout_ms": 1e12}, 422, "invalid_field"},
	}
	for _, tt := range tests {
		code, hdr, p := call(t, shared, tt.method, tt.path, tt.body)
		if code != tt.status || p["code"] != tt.code || p["status"] != float64(tt.status) || p["detail"] == "" {
			t.Errorf("%s %s %.80v: %d %v, want %d %s", tt.method, tt.path, tt.body, code, p, tt.status, tt.code)
		}
		if ct := hdr.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s %s: Content-Type %q", tt.method, tt.path, ct)
		}
	}
	if p := tests[7]; true {
		_, _, body := call(t, shared, p.method, p.path, p.body)
		if body["move_index"] != 1.0 {
			t.Errorf("move error without move_index: %v", body)
		}
	}
	// Routes and methods outside the spec.
	for _, tt := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/analyze", 405}, {"GET", "/v1/nothing", 404}} {
		req, _ := http.NewRequest(tt.method, shared.http.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// TestNoEngineInTime: with every gps engine busy, a REST request gets 503
// and Retry-After once its wait for an engine is over.
func TestNoEngineInTime(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze", "id": "hog", "engine": "gps", "position": map[string]any{"sfen": outOfBok}})
	cl.until(20*time.Second, func(ev map[string]any) bool { return ev["type"] == "engine" })
	code, hdr, p := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "limits": map[string]any{"movetime_ms": 100}})
	if code != 503 || p["code"] != "no_engine" || hdr.Get("Retry-After") == "" {
		t.Errorf("busy engine: %d %v Retry-After %q", code, p, hdr.Get("Retry-After"))
	}
	cl.send(map[string]any{"type": "stop", "id": "hog"})
	cl.terminal("hog", 10*time.Second)
}

func TestAnalyzeRoute(t *testing.T) {
	code, _, r := call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "fairy", "multipv": 2, "notation": "kif",
		"position": map[string]any{"sfen": outOfBok}, "limits": map[string]any{"depth": 6}})
	lines, _ := r["lines"].([]any)
	if code != 200 || r["engine"] != "fairy" || r["bestmove"] == "" || r["bestmove_kif"] == nil || len(lines) != 2 {
		t.Fatalf("fairy: %d %v", code, r)
	}
	for i, l := range lines {
		m := l.(map[string]any)
		if m["multipv"] != float64(i+1) || m["score"] == nil || len(m["pv"].([]any)) == 0 || len(m["pv_kif"].([]any)) == 0 || m["depth"].(float64) > 6 {
			t.Errorf("line %d: %v", i+1, m)
		}
	}
	if best := lines[0].(map[string]any)["pv"].([]any)[0]; best != r["bestmove"] {
		t.Errorf("bestmove %v is not the first line's first move %v", r["bestmove"], best)
	}
	code, _, r = call(t, shared, "POST", "/v1/analyze", map[string]any{"engine": "gps", "position": map[string]any{"sfen": outOfBok}, "limits": map[string]any{"movetime_ms": 500}})
	if code != 200 || r["bestmove"] == "" || len(r["lines"].([]any)) != 1 {
		t.Errorf("gps: %d %v", code, r)
	}
}

// TestMateRoute: the tsume flow over REST.
func TestMateRoute(t *testing.T) {
	tests := []struct {
		name   string
		body   map[string]any
		result string
		moves  int
	}{
		{"mate in 5", map[string]any{"position": map[string]any{"sfen": mateIn5}, "timeout_ms": 10000, "notation": "kif"}, "mate", 5},
		{"no mate", map[string]any{"position": map[string]any{"sfen": noMate}, "timeout_ms": 5000}, "nomate", 0},
		{"hard, short", map[string]any{"position": map[string]any{"sfen": "7nl/5Psk1/6gp1/8p/9/9/9/9/9 b RBG2S2Nr 1"}, "timeout_ms": 100}, "timeout", 0},
		{"fairy", map[string]any{"engine": "fairy", "position": map[string]any{"sfen": mateIn5}}, "notimplemented", 0},
	}
	for _, tt := range tests {
		code, _, r := call(t, shared, "POST", "/v1/mate", tt.body)
		moves, _ := r["moves"].([]any)
		if code != 200 || r["result"] != tt.result || len(moves) != tt.moves {
			t.Errorf("%s: %d %v, want %s with %d moves", tt.name, code, r, tt.result, tt.moves)
		}
		if kif, _ := r["moves_kif"].([]any); tt.result == "mate" && len(kif) != 5 {
			t.Errorf("%s: moves_kif %v", tt.name, r["moves_kif"])
		}
	}
	code, _, p := call(t, shared, "POST", "/v1/mate", map[string]any{"engine": "liar", "position": map[string]any{"sfen": mateIn5}})
	if code != 502 || p["code"] != "engine_error" || !strings.Contains(p["detail"].(string), "verification") {
		t.Errorf("a doctored mate line: %d %v, want 502 engine_error", code, p)
	}
}
