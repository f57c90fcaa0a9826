package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/match"
	"github.com/usid/usid/quota"
)

// TestMatchRoutes (issue 45): a match over REST, every answer checked
// against openapi.yaml: created (201 and Location), read as it plays and
// once done (its games, score, pairs, Elo, SPRT), refused (400, 404 for
// an unknown engine or match, 429 for a second match of the client),
// cancelled by DELETE.
func TestMatchRoutes(t *testing.T) {
	mm := match.New(match.Config{Service: shared.srv.cfg.Service, MaxPerClient: 1})
	defer mm.Close()
	hs := ownServer(t, func(c *Config) { c.Matches = mm })
	e := &env{http: hs}
	do := func(method, path string, body any) (int, http.Header, map[string]any) {
		t.Helper()
		return call(t, e, method, path, body)
	}
	req := map[string]any{
		"players": []any{map[string]any{"engine": "fairy"}, map[string]any{"engine": "fairy", "options": map[string]string{"Skill Level": "0"}}},
		"pairs":   1, "limits": map[string]any{"nodes": 2000}, "sprt": map[string]any{"elo0": 0, "elo1": 50},
	}
	code, hdr, v := do("POST", "/v1/matches", req)
	if code != http.StatusCreated || hdr.Get("Location") != "/v1/matches/"+v["id"].(string) {
		t.Fatalf("create: %d %v %v", code, hdr, v)
	}
	id := v["id"].(string)
	if code, _, v := do("POST", "/v1/matches", req); code != http.StatusTooManyRequests {
		t.Errorf("a second match of the client: %d %v, want 429", code, v)
	}
	bad := map[string]any{"players": []any{map[string]any{"engine": "fairy"}, map[string]any{"engine": "nobody"}}, "games": 2, "limits": map[string]any{"nodes": 100}}
	if code, _, v := do("POST", "/v1/matches", bad); code != http.StatusNotFound || v["code"] != "unknown_engine" {
		t.Errorf("an unknown engine: %d %v, want 404 unknown_engine", code, v)
	}
	if code, _, _ := do("POST", "/v1/matches", map[string]any{"players": []any{}, "extra": 1}); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d, want 400", code)
	}
	if code, _, _ := do("GET", "/v1/matches/0123", nil); code != http.StatusNotFound {
		t.Errorf("GET of an unknown match: %d, want 404", code)
	}
	if code, _, _ := do("DELETE", "/v1/matches/0123", nil); code != http.StatusNotFound {
		t.Errorf("DELETE of an unknown match: %d, want 404", code)
	}
	testwait.For(t, "the match ended", 3*time.Minute, func() bool {
		_, _, v := do("GET", "/v1/matches/"+id, nil)
		return v["status"] != "queued" && v["status"] != "running"
	})
	_, _, v = do("GET", "/v1/matches/"+id, nil)
	if v["status"] != "done" {
		t.Fatalf("ended: %v, want done", v)
	}
	games, _ := v["games"].([]any)
	score, _ := v["score"].(map[string]any)
	if len(games) != 2 || score["wins"].(float64)+score["draws"].(float64)+score["losses"].(float64) != 2 || v["pairs"] == nil || v["elo"] == nil || v["sprt"] == nil {
		t.Fatalf("done: %v", v)
	}
	for i, g := range games {
		gm := g.(map[string]any)
		if _, ok := gm["winner"]; !ok || gm["record"] == nil || gm["reason"] == "" {
			t.Errorf("game %d: %v, want a winner (or null), a reason and a record", i, gm)
		}
		if want := fmt.Sprintf("/watch/%s/%d", id, i); gm["watch"] != want || gm["index"] != float64(i) {
			t.Errorf("game %d: watch %v index %v, want %s", i, gm["watch"], gm["index"], want)
		}
		// The game as its watch page reads it: the players' own lines,
		// one per move an engine chose (every move here: no passes).
		code, _, gv := do("GET", fmt.Sprintf("/v1/matches/%s/games/%d", id, i), nil)
		moves := gm["position"].(map[string]any)["moves"].([]any)
		evals, _ := gv["evals"].([]any)
		if code != http.StatusOK || gv["match"] != id || len(evals) == 0 || len(evals) > len(moves) {
			t.Errorf("game %d as watched: %d, %d evaluations of %d moves: %v", i, code, len(evals), len(moves), gv)
		}
	}
	// Polled with its ETag, an ended match and an ended game are 304.
	for _, path := range []string{"/v1/matches/" + id, "/v1/matches/" + id + "/games/0"} {
		if tag := tagged(t, hs.URL+path, ""); tagged(t, hs.URL+path, tag) != tag {
			t.Errorf("%s polled with its ETag %s: a new tag", path, tag)
		}
	}
	for _, n := range []string{"2", "-1", "x", "99999999"} {
		if code, _, v := do("GET", "/v1/matches/"+id+"/games/"+n, nil); code != http.StatusNotFound {
			t.Errorf("game %s of a two-game match: %d %v, want 404", n, code, v)
		}
	}
	// The next match of the client, cancelled at once.
	code, _, v = do("POST", "/v1/matches", map[string]any{"players": req["players"], "games": 100, "limits": map[string]any{"movetime_ms": 500}})
	if code != http.StatusCreated {
		t.Fatalf("a second match once the first ended: %d %v", code, v)
	}
	if code, _, v := do("DELETE", "/v1/matches/"+v["id"].(string), nil); code != http.StatusOK || v["status"] != "cancelled" {
		t.Errorf("DELETE: %d %v, want 200 cancelled", code, v)
	}
}

// tagged GETs url (with If-None-Match: tag unless tag is empty) through
// the checked client, and answers the ETag: 200 without a tag, 304 with
// one (else the test fails).
func tagged(t *testing.T, url, tag string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	want := http.StatusOK
	if tag != "" {
		req.Header.Set("If-None-Match", tag)
		want = http.StatusNotModified
	}
	res, err := checkedClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != want || res.Header.Get("ETag") == "" {
		t.Errorf("GET %s (If-None-Match %q): %d, ETag %q; want %d with an ETag", url, tag, res.StatusCode, res.Header.Get("ETag"), want)
	}
	return res.Header.Get("ETag")
}

// TestMatchAnswersBeyondConformance: the statuses of /v1/matches the
// conformance check cannot bring about through its proxy, checked against
// openapi.yaml here: 503 queue_full (the server's matches all taken), 429
// on GET (the client's reads spent), 408 (a body that stalls).
func TestMatchAnswersBeyondConformance(t *testing.T) {
	mm := match.New(match.Config{Service: shared.srv.cfg.Service, MaxPerClient: 2, MaxMatches: 1})
	defer mm.Close()
	cfg := shared.srv.cfg
	cfg.Registerer, cfg.Matches, cfg.BodyTimeout = nil, mm, 200*time.Millisecond
	cfg.Access = &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Reads: 0.001}}
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Drain(context.Background())
	c := checkedClient(t)
	send := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, hs.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	long := `{"players":[{"engine":"fairy"},{"engine":"fairy"}],"games":100,"limits":{"movetime_ms":500}}`
	if code := send("POST", "/v1/matches", long); code != http.StatusCreated {
		t.Fatalf("the first match: %d", code)
	}
	if code := send("POST", "/v1/matches", long); code != http.StatusServiceUnavailable {
		t.Errorf("a match past matches.max_matches: %d, want 503", code)
	}
	const id = "/v1/matches/5f0c1d2e3a4b5c6d7e8f9a0b"
	if code := send("GET", id, ""); code != http.StatusNotFound {
		t.Errorf("GET of an unknown match: %d, want 404", code)
	}
	// The one read of the burst went above: the next is refused.
	if code := send("GET", id, ""); code != http.StatusTooManyRequests {
		t.Errorf("GET %s with the reads spent: %d, want 429", id, code)
	}
	resp, body := stalledPOST(t, hs.URL, "/v1/matches", `{"players":`)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled POST /v1/matches: %d %s, want 408", resp.StatusCode, body)
	}
	checkResponseAs(t, "RequestTimeout", "stalled POST /v1/matches", resp, body)
}

// TestMatchEngineTimeBudget: a match's searches are its owner's: they
// spend the owner's engine time, and once it is spent the match ends
// failed (too_many_requests) and the owner's next search is refused,
// while another client searches on.
func TestMatchEngineTimeBudget(t *testing.T) {
	shared.waitIdle(t)
	mm := match.New(match.Config{Service: shared.srv.cfg.Service})
	defer mm.Close()
	const key = "key-match-0123456789"
	hs := ownServer(t, func(c *Config) {
		c.Matches = mm
		c.Access = &Access{Keys: map[string]string{"m": key}, Anonymous: true,
			Keyed:          Quota{EngineTime: quota.Budget{Seconds: 2, Period: time.Hour, Burst: 2, InteractiveShare: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
			AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}}
	})
	resp, b := do(t, "POST", hs.URL+"/v1/matches", key, `{"players":[{"engine":"fairy"},{"engine":"fairy"}],"games":50,"limits":{"movetime_ms":300}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	id := resp.Header.Get("Location")
	var v map[string]any
	testwait.For(t, "the match ended", 2*time.Minute, func() bool {
		_, b := do(t, "GET", hs.URL+id, key, "")
		v = map[string]any{}
		json.Unmarshal([]byte(b), &v)
		return v["status"] != "queued" && v["status"] != "running"
	})
	e, _ := v["error"].(map[string]any)
	if v["status"] != "failed" || e["code"] != "too_many_requests" {
		t.Fatalf("got %v %v, want failed with too_many_requests", v["status"], v["error"])
	}
	// About 2 s of engine time at 300 ms a move: a few moves, no more.
	moves := 0
	for _, g := range v["games"].([]any) {
		moves += len(g.(map[string]any)["position"].(map[string]any)["moves"].([]any))
	}
	if moves > 40 {
		t.Errorf("%d moves played on 2 s of engine time at 300 ms a move", moves)
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", key, `{"engine":"fairy","limits":{"depth":1}}`); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the owner's next search: %d %s, want 429", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", "", `{"engine":"fairy","limits":{"depth":1}}`); resp.StatusCode != http.StatusOK {
		t.Errorf("another client's search: %d %s, want 200", resp.StatusCode, b)
	}
}

// TestMatchStoreUnreachable: with the matches' Redis not answering, every
// route of a match answers 503 queue_full with Retry-After, as the other
// stores' routes do (checked against openapi.yaml): DELETE too, not a
// "no such match".
func TestMatchStoreUnreachable(t *testing.T) {
	mm, err := match.Open(match.Config{Service: shared.srv.cfg.Service, Redis: &match.RedisConfig{URL: deadRedis(t), Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	hs := ownServer(t, func(c *Config) { c.Matches = mm })
	unreachableAnswers(t, hs.URL, "queue_full", []route{
		{"POST", "/v1/matches", `{"players":[{"engine":"fairy"},{"engine":"fairy"}],"games":2,"limits":{"nodes":100}}`},
		{"GET", "/v1/matches/5f0c1d2e3a4b5c6d7e8f9a0b", ""},
		{"GET", "/v1/matches/5f0c1d2e3a4b5c6d7e8f9a0b/games/0", ""},
		{"DELETE", "/v1/matches/5f0c1d2e3a4b5c6d7e8f9a0b", ""},
	})
}
