package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/shogi"
)

var gameMoves = strings.Fields("7g7f 3c3d 2g2f 4c4d 2f2e 2b3c 3i4h 8b4b")

// pollGame reads a job until it has ended (every answer checked against
// openapi.yaml).
func pollGame(t *testing.T, id string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st, _, v := call(t, shared, http.MethodGet, "/v1/games/analysis/"+id, nil)
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

// checkGame checks a done job of gameMoves from the start position: every
// position analysed, every best move legal, every played move judged.
func checkGame(t *testing.T, v map[string]any, moves []string) {
	t.Helper()
	if v["status"] != "done" {
		t.Fatalf("status %v (%v), want done", v["status"], v["error"])
	}
	ps, _ := v["positions"].([]any)
	if len(ps) != len(moves)+1 {
		t.Fatalf("%d positions, want %d", len(ps), len(moves)+1)
	}
	for i, x := range ps {
		p, _ := x.(map[string]any)
		if p == nil {
			t.Fatalf("position %d is null in a done job", i)
		}
		pos, _ := shogi.Load("startpos", moves[:i])
		if _, err := pos.CheckMove(p["bestmove"].(string)); err != nil {
			t.Errorf("ply %d: best move %v: %v", i, p["bestmove"], err)
		}
		if p["eval"] == nil {
			t.Errorf("ply %d: no eval", i)
		}
		if i < len(moves) && (p["move"] != moves[i] || p["judgement"] == nil || p["loss"] == nil) {
			t.Errorf("ply %d: move %v judgement %v loss %v", i, p["move"], p["judgement"], p["loss"])
		}
	}
	if v["summary"] == nil {
		t.Error("no summary")
	}
}

func TestGameAnalysisREST(t *testing.T) {
	st, h, v := call(t, shared, http.MethodPost, "/v1/games/analysis", map[string]any{
		"engine": "fairy", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"depth": 3}, "notation": "kif"})
	if st != http.StatusAccepted {
		t.Fatalf("POST: %d %v", st, v)
	}
	id, _ := v["id"].(string)
	if len(id) != 32 || h.Get("Location") != "/v1/games/analysis/"+id {
		t.Fatalf("id %q, Location %q", id, h.Get("Location"))
	}
	done := pollGame(t, id, time.Minute)
	checkGame(t, done, gameMoves)
	// DELETE of an ended job changes nothing.
	st, _, v = call(t, shared, http.MethodDelete, "/v1/games/analysis/"+id, nil)
	if st != http.StatusOK || v["status"] != "done" {
		t.Errorf("DELETE of a done job: %d %v", st, v["status"])
	}
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{http.MethodGet, "/v1/games/analysis/0123456789abcdef0123456789abcdef", nil, 404, "not_found"},
		{http.MethodDelete, "/v1/games/analysis/nope", nil, 404, "not_found"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"position": map[string]any{}, "thresholds": map[string]any{"inaccuracy": 0.3, "mistake": 0.2, "blunder": 0.1}}, 422, "invalid_field"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"position": map[string]any{}, "keep": true}, 400, "bad_request"}, // REST jobs keep their hour anyway
		{http.MethodPost, "/v1/games/analysis", map[string]any{"engine": "nope", "limits": map[string]any{"depth": 1}, "position": map[string]any{}}, 404, "unknown_engine"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"record": "7g7f", "limits": map[string]any{"depth": 1}}, 422, "record_format"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"record": "1 ７六歩(77)\n2 ２二角成(88)\n", "limits": map[string]any{"depth": 1}}, 422, "opponent_piece"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"position": map[string]any{"moves": []string{"7g7f", "7g7f"}}, "limits": map[string]any{"depth": 1}}, 422, ""},
		{http.MethodPost, "/v1/games/analysis", `{"limits": {"depth": 1}, "multipv": 2}`, 400, "bad_request"},
		{http.MethodPost, "/v1/games/analysis", map[string]any{"engine": "mateonly", "limits": map[string]any{"depth": 1}, "position": map[string]any{}}, 422, "unsupported"},
	} {
		st, _, v := call(t, shared, tc.method, tc.path, tc.body)
		if st != tc.status || (tc.code != "" && v["code"] != tc.code) {
			t.Errorf("%s %s %v: %d %v, want %d %s", tc.method, tc.path, tc.body, st, v, tc.status, tc.code)
		}
	}
	// The metrics count the job.
	resp, err := http.Get(shared.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`usid_game_jobs{state="running"}`, `usid_game_jobs{state="queued"}`, `usid_game_positions_total{source="engine"}`, `usid_game_jobs_finished_total{status="done"}`} {
		if !strings.Contains(string(body), m+" ") {
			t.Errorf("/metrics has no %s", m)
		}
	}
	if strings.Contains(string(body), `usid_game_positions_total{source="engine"} 0`) {
		t.Error("usid_game_positions_total counted no position")
	}
	// A path with a parameter answers a method it does not take with its Allow.
	st, h, _ = call(t, shared, http.MethodPut, "/v1/games/analysis/"+id, nil)
	if st != http.StatusMethodNotAllowed || h.Get("Allow") != "DELETE, GET" {
		t.Errorf("PUT: %d Allow %q", st, h.Get("Allow"))
	}
	shared.waitIdle(t)
}

// A client may run two jobs at once; a third is 429; DELETE ends one at once.
func TestGameAnalysisBoundAndCancel(t *testing.T) {
	body := map[string]any{"engine": "fairy", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"movetime_ms": 300}}
	var ids []string
	for range 2 {
		st, _, v := call(t, shared, http.MethodPost, "/v1/games/analysis", body)
		if st != http.StatusAccepted {
			t.Fatalf("POST: %d %v", st, v)
		}
		ids = append(ids, v["id"].(string))
	}
	st, h, v := call(t, shared, http.MethodPost, "/v1/games/analysis", body)
	if st != http.StatusTooManyRequests || v["code"] != "too_many_requests" || h.Get("Retry-After") == "" {
		t.Errorf("third job: %d %v Retry-After %q", st, v, h.Get("Retry-After"))
	}
	for _, id := range ids {
		st, _, v := call(t, shared, http.MethodDelete, "/v1/games/analysis/"+id, nil)
		if st != http.StatusOK || v["status"] != "cancelled" || v["finished_at"] == nil {
			t.Errorf("DELETE: %d %v", st, v["status"])
		}
		p := v["progress"].(map[string]any)
		if num(p["done"]) >= num(p["total"]) {
			t.Errorf("cancelled job done: %v", p)
		}
	}
	shared.waitIdle(t)
	if st, _, v := call(t, shared, http.MethodPost, "/v1/games/analysis", map[string]any{"position": map[string]any{}, "limits": map[string]any{"depth": 1}}); st != http.StatusAccepted {
		t.Errorf("after the cancels: %d %v", st, v)
	} else {
		pollGame(t, v["id"].(string), time.Minute)
	}
}

func TestGameAnalysisWebSocket(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze_game", "id": "g1", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"depth": 2}})
	evs := cl.until(time.Minute, func(ev map[string]any) bool {
		return ev["id"] == "g1" && (ev["type"] == "game_analysis" || ev["type"] == "error")
	})
	end := last(evs)
	if end["type"] != "game_analysis" || end["status"] != "done" || end["summary"] == nil || end["job"] == nil {
		t.Fatalf("terminal event %v", end)
	}
	seen := map[int]bool{}
	for _, ev := range evs[:len(evs)-1] {
		if ev["type"] != "progress" || ev["job"] != end["job"] {
			t.Errorf("event %v", ev)
			continue
		}
		for _, p := range ev["positions"].([]any) {
			seen[num(p.(map[string]any)["ply"])] = true
		}
	}
	if len(seen) != len(gameMoves)+1 {
		t.Errorf("progress events covered plies %v", seen)
	}
	// The same job by REST.
	checkGame(t, pollGame(t, end["job"].(string), time.Second), gameMoves)

	// Bad requests are refused at once, with the request's id.
	cl.send(map[string]any{"type": "analyze_game", "id": "g2", "position": map[string]any{}, "thresholds": map[string]any{"inaccuracy": 0.1, "mistake": 0.05, "blunder": 0.2}})
	if ev := last(cl.terminal("g2", 5*time.Second)); ev["code"] != "invalid_field" {
		t.Errorf("thresholds out of order: %v", ev)
	}
	shared.waitIdle(t)
}

// stop with the request's id cancels the job: one game_analysis, cancelled.
func TestGameAnalysisWebSocketStop(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze_game", "id": "g1", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"movetime_ms": 300}})
	cl.until(20*time.Second, func(ev map[string]any) bool { return ev["type"] == "progress" })
	cl.send(map[string]any{"type": "stop", "id": "g1"})
	end := last(cl.until(20*time.Second, func(ev map[string]any) bool {
		return ev["id"] == "g1" && (ev["type"] == "game_analysis" || ev["type"] == "error")
	}))
	if end["status"] != "cancelled" || end["code"] != nil {
		t.Fatalf("after stop: %v", end)
	}
	// A second stop is quiet: the job has had its terminal event.
	cl.send(map[string]any{"type": "stop", "id": "g1"})
	cl.send(map[string]any{"type": "analyze", "id": "a1", "limits": map[string]any{"depth": 1}})
	for _, ev := range cl.terminal("a1", 20*time.Second) {
		if ev["id"] == "g1" {
			t.Errorf("event for g1 after its end: %v", ev)
		}
	}
	shared.waitIdle(t)
}

// A job started with keep outlives the WebSocket that started it: the
// client reads it by REST.
func TestGameAnalysisSurvivesWebSocket(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze_game", "id": "g1", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"movetime_ms": 150}, "keep": true})
	ev := last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["type"] == "progress" || ev["type"] == "error" }))
	job, _ := ev["job"].(string)
	if job == "" {
		t.Fatalf("first event %v", ev)
	}
	cl.c.Close(websocket.StatusNormalClosure, "")
	<-cl.done
	v := pollGame(t, job, time.Minute)
	checkGame(t, v, gameMoves)
	shared.waitIdle(t)
}

// A job belongs to the page that started it: closing the WebSocket cancels
// it (its engines go back to the pool), unless it asked to keep.
func TestGameAnalysisEndsWithWebSocket(t *testing.T) {
	cl := dial(t, shared)
	cl.send(map[string]any{"type": "analyze_game", "id": "g1", "position": map[string]any{"moves": gameMoves}, "limits": map[string]any{"movetime_ms": 1000}})
	ev := last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["type"] == "progress" || ev["type"] == "error" }))
	job, _ := ev["job"].(string)
	if job == "" {
		t.Fatalf("first event %v", ev)
	}
	if p, _ := ev["progress"].(map[string]any); p == nil || num(p["estimated_left_ms"]) <= 0 {
		t.Errorf("progress without a time-left estimate: %v", ev["progress"])
	}
	cl.c.Close(websocket.StatusNormalClosure, "")
	<-cl.done
	v := pollGame(t, job, time.Minute)
	if v["status"] != "cancelled" {
		t.Fatalf("after the connection closed: %v %v, want cancelled", v["status"], v["progress"])
	}
	if p := v["progress"].(map[string]any); num(p["done"]) >= len(gameMoves)+1 {
		t.Errorf("every position analysed after the connection closed: %v", p)
	}
	shared.waitIdle(t)
}
