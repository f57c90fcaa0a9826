package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/quota"
)

// TestEngineTimeBudget: the quota is engine time (issue 17). Many short
// searches cost next to nothing; one long search spends a small budget and
// the client's next search is refused (429, Retry-After) until it refills,
// whether the time was spent over REST, the WebSocket or a game analysis;
// other clients are not touched. (No share is kept for interactive
// searches here, so that the game analysis may spend it all;
// TestJobLeavesInteractiveShare is the default.)
func TestEngineTimeBudget(t *testing.T) {
	shared.waitIdle(t)
	keys := map[string]string{"rest": "key-rest-0123456789", "ws": "key-ws-0123456789", "game": "key-game-0123456789"}
	_, hs := withAccess(t, &Access{Keys: keys, Anonymous: true,
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: 1, Period: time.Hour, Burst: 1, InteractiveShare: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}})
	quick := `{"engine":"fairy","limits":{"depth":1}}`
	long := `{"engine":"fairy","limits":{"movetime_ms":1200}}`
	refused := func(key, why string) {
		t.Helper()
		resp, b := do(t, "POST", hs.URL+"/v1/analyze", key, quick)
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if !strings.Contains(b, "retry in "+strconv.Itoa(secs)+"s") {
			t.Errorf("%s: Retry-After %d, detail %s: they must agree", why, secs, b)
		}
		// The search that spent the budget was cut to it (issue 35): the
		// debt is what it ran past, and the wait its refill.
		if resp.StatusCode != 429 || secs < 1 || !strings.Contains(b, "engine time is spent") {
			t.Errorf("%s: %d Retry-After %q %s; want 429 with a wait", why, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}

	// REST: twenty quick searches fit in one second of engine time.
	for i := range 20 {
		if resp, b := do(t, "POST", hs.URL+"/v1/analyze", keys["rest"], quick); resp.StatusCode != 200 {
			t.Fatalf("quick search %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", keys["rest"], long); resp.StatusCode != 200 {
		t.Fatalf("the search that spends the budget: %d %s", resp.StatusCode, b)
	}
	refused(keys["rest"], "REST after spending the budget")
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", "", quick); resp.StatusCode != 200 {
		t.Errorf("another client: %d %s", resp.StatusCode, b)
	}

	// WebSocket: the session's search is charged; then both ways refuse.
	c, _, err := wsDial(t, hs.URL, "", http.Header{"Authorization": {"Bearer " + keys["ws"]}})
	if err != nil {
		t.Fatal(err)
	}
	c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"a","engine":"fairy","limits":{"movetime_ms":1200}}`))
	if ev := readEvents(t, c, 1)[0]; ev["type"] != "bestmove" {
		t.Fatalf("WebSocket search: %v", ev)
	}
	c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"b","engine":"fairy","limits":{"depth":1}}`))
	if ev := readEvents(t, c, 1)[0]; ev["code"] != "too_many_requests" || ev["id"] != "b" {
		t.Errorf("WebSocket after spending the budget: %v", ev)
	}
	refused(keys["ws"], "REST after a WebSocket search spent the budget")

	// Game analysis: the job's searches are the client's engine time too.
	resp, b := do(t, "POST", hs.URL+"/v1/games/analysis", keys["game"], `{"engine":"fairy","position":{"moves":["7g7f"]},"limits":{"movetime_ms":700}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("game analysis: %d %s", resp.StatusCode, b)
	}
	var job struct{ ID string }
	json.Unmarshal([]byte(b), &job)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, b := do(t, "GET", hs.URL+"/v1/games/analysis/"+job.ID, keys["game"], "")
		// The job ends, or pauses when its own searches spent the budget
		// (a loaded machine overshoots a movetime): either way the
		// client's time went to the job.
		if strings.Contains(b, `"finished_at"`) || strings.Contains(b, `"status":"paused"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the game analysis did not end: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	refused(keys["game"], "REST after a game analysis spent the budget")
}

// TestJobLeavesInteractiveShare (issue 26): a game analysis never locks
// its owner out of live analysis. The job spends the budget only down to
// the share kept for interactive searches (here 3 of 4 s: the job's two
// 0.5 s searches may overshoot a lot on a loaded machine), pauses there,
// and the same client's REST and WebSocket analyses still start.
// Before, the job spent the whole budget and both were refused (429) for
// as long as it took to refill.
func TestJobLeavesInteractiveShare(t *testing.T) {
	shared.waitIdle(t)
	key := "key-share-0123456789"
	_, hs := withAccess(t, &Access{Keys: map[string]string{"share": key}, Anonymous: true,
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: 4, Period: time.Hour, Burst: 4, InteractiveShare: 0.75}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}})

	// Nine positions of 0.5 s each: more than the 1 s the job may spend.
	resp, b := do(t, "POST", hs.URL+"/v1/games/analysis", key,
		`{"engine":"fairy","position":{"moves":["7g7f","3c3d","2g2f","8c8d","2f2e","8d8e","6i7h","4a3b"]},"limits":{"movetime_ms":500}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("game analysis: %d %s", resp.StatusCode, b)
	}
	var job struct{ ID string }
	json.Unmarshal([]byte(b), &job)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, b = do(t, "GET", hs.URL+"/v1/games/analysis/"+job.ID, key, "")
		if strings.Contains(b, `"status":"paused"`) {
			if !strings.Contains(b, "but for the share kept for its live analysis") {
				t.Errorf("the paused job does not say why: %s", b)
			}
			break
		}
		if strings.Contains(b, `"finished_at"`) || time.Now().After(deadline) {
			t.Fatalf("the job did not pause at the interactive share: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	quick := `{"engine":"fairy","limits":{"depth":1}}`
	if resp, b := do(t, "POST", hs.URL+"/v1/analyze", key, quick); resp.StatusCode != 200 {
		t.Errorf("REST analysis while the paused job holds its part of the budget: %d %s", resp.StatusCode, b)
	}
	c, _, err := wsDial(t, hs.URL, "", http.Header{"Authorization": {"Bearer " + key}})
	if err != nil {
		t.Fatal(err)
	}
	c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"live","engine":"fairy","limits":{"depth":1}}`))
	if ev := readUntil(t, c, "the live analysis' end", isTerminal); ev["type"] != "bestmove" {
		t.Errorf("WebSocket analysis while the paused job holds its part of the budget: %v", ev)
	}
	if _, b = do(t, "GET", hs.URL+"/v1/games/analysis/"+job.ID, key, ""); !strings.Contains(b, `"status":"paused"`) {
		t.Errorf("the job did not stay paused: %s", b)
	}
	do(t, "DELETE", hs.URL+"/v1/games/analysis/"+job.ID, key, "")
}

// readUntil reads c's events until one that want accepts, and returns it.
func readUntil(t *testing.T, c *websocket.Conn, what string, want func(map[string]any) bool) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		var ev map[string]any
		json.Unmarshal(b, &ev)
		if want(ev) {
			return ev
		}
	}
}

func isType(typ string) func(map[string]any) bool {
	return func(ev map[string]any) bool { return ev["type"] == typ }
}

func isTerminal(ev map[string]any) bool {
	return ev["type"] == "bestmove" || ev["type"] == "checkmate" || ev["type"] == "error"
}

// TestBudgetCheckedWhenSearchStarts (issue 25): the budget is checked when
// a search gets its engine, not when its request arrived. Four sessions of
// one client with half a second of engine time queue a 1 s analysis each
// behind other clients' searches; when the engines free up, one search
// runs (it takes its whole movetime as it starts) and the three others are
// refused: at most the budget plus one search is spent. Before, all four
// ran (4 s on a 0.5 s budget, 8x).
func TestBudgetCheckedWhenSearchStarts(t *testing.T) {
	shared.waitIdle(t)
	keys := map[string]string{"q": "key-queued-0123456789"}
	_, hs := withAccess(t, &Access{Keys: keys, Anonymous: true,
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: 0.5, Period: time.Hour, Burst: 0.5}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}})
	// Other clients hold both fairy engines with long analyses.
	var blockers []*websocket.Conn
	for range 2 {
		c, _, err := wsDial(t, hs.URL, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		// A long movetime rather than until stop: fairy is never sent go
		// infinite in these tests (TestNativeLimits).
		c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"blk","engine":"fairy","limits":{"movetime_ms":60000}}`))
		readUntil(t, c, "the blocker's engine", isType("engine"))
		blockers = append(blockers, c)
	}
	hdr := http.Header{"Authorization": {"Bearer " + keys["q"]}}
	var queued []*websocket.Conn
	for i := range 4 {
		c, _, err := wsDial(t, hs.URL, "", hdr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"analyze","id":"a","engine":"fairy","limits":{"movetime_ms":1000}}`))
		if ev := readUntil(t, c, "queued", func(ev map[string]any) bool { return ev["type"] == "queued" || isTerminal(ev) }); ev["type"] != "queued" {
			t.Fatalf("search %d was not queued: %v", i, ev)
		}
		queued = append(queued, c)
	}
	for _, c := range blockers {
		c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"stop","id":"blk"}`))
	}
	ran, refused := 0, 0
	for i, c := range queued {
		ev := readUntil(t, c, "the queued search's end", isTerminal)
		switch {
		case ev["type"] == "bestmove":
			ran++
		case ev["code"] == "too_many_requests" && strings.Contains(ev["message"].(string), "engine time is spent"):
			refused++
		default:
			t.Errorf("search %d: %v", i, ev)
		}
	}
	t.Logf("of four queued 1 s searches on a 0.5 s budget: %d ran, %d refused", ran, refused)
	if ran != 1 || refused != 3 {
		t.Errorf("%d ran and %d were refused, want 1 and 3 (the budget and one search at most)", ran, refused)
	}
}

// TestGameJobPausesOnBudget (issue 25): a game job's searches take from
// its owner's engine time as each starts; when the owner runs out, the job
// pauses (status paused, with too_many_requests as the reason), it does
// not run on nor fail. Before, a job of 30 positions at 1 s each searched
// all of them on a 5 s budget.
func TestGameJobPausesOnBudget(t *testing.T) {
	shared.waitIdle(t)
	keys := map[string]string{"g": "key-game-pause-0123456789"}
	_, hs := withAccess(t, &Access{Keys: keys, Anonymous: true,
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: 1, Period: time.Hour, Burst: 1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}})
	resp, b := do(t, "POST", hs.URL+"/v1/games/analysis", keys["g"],
		`{"engine":"fairy","position":{"moves":["7g7f","3c3d","2g2f","4c4d","2f2e","2b3c","3i4h","8b4b","5i6h"]},"limits":{"movetime_ms":300}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("game analysis: %d %s", resp.StatusCode, b)
	}
	var job struct{ ID string }
	json.Unmarshal([]byte(b), &job)
	var v struct {
		Status   string
		Progress struct{ Done, Total int }
		Error    *struct{ Code, Message string }
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, b = do(t, "GET", hs.URL+"/v1/games/analysis/"+job.ID, keys["g"], "")
		json.Unmarshal([]byte(b), &v)
		if v.Status != "queued" && v.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job neither paused nor ended: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("1 s budget, 10 positions at 300 ms: %s at %d/%d", v.Status, v.Progress.Done, v.Progress.Total)
	if v.Status != "paused" || v.Error == nil || v.Error.Code != "too_many_requests" || v.Progress.Done > 5 {
		t.Errorf("job %s at %d/%d (error %+v), want paused at about 4 with too_many_requests", v.Status, v.Progress.Done, v.Progress.Total, v.Error)
	}
	do(t, "DELETE", hs.URL+"/v1/games/analysis/"+job.ID, keys["g"], "")
}

// TestInteractiveShareChecked: a share above the whole bucket is a
// configuration error, not a budget silently treated otherwise.
func TestInteractiveShareChecked(t *testing.T) {
	a := &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: 1, InteractiveShare: 1.5}}}
	if err := a.Check(); err == nil || !strings.Contains(err.Error(), "access.anonymous_quota.engine_time: interactive_share 1.5") {
		t.Errorf("Check: %v, want the share refused", err)
	}
}

// TestSearchCutToBudget (issue 35): a search's limit is cut to the engine
// time its client has left, and the answer says so (limited_by_budget):
// a client with 1 s left asking a 4 s search is charged about 1 s, not
// 4 s, over REST analyze, WebSocket analyze (bounded, and until stop:
// stopped when the budget runs out, its bestmove saying why), REST mate
// and a game analysis whose movetime is longer than the whole bucket.
// Before, the search ran its whole limit: 3 s of debt past the budget.
func TestSearchCutToBudget(t *testing.T) {
	shared.waitIdle(t)
	budgets := quota.NewMemory(quota.MemoryConfig{})
	b := quota.Budget{Seconds: 1, Period: time.Hour, Burst: 1}
	keys := map[string]string{}
	for _, n := range []string{"rest", "ws", "wsstop", "mate", "game"} {
		keys[n] = "key-cut-" + n + "-0123456789"
	}
	_, hs := withAccess(t, &Access{Keys: keys, Anonymous: true, Budgets: budgets,
		Keyed:          Quota{EngineTime: b, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}})
	// overrun is what the client was charged past its 1 s: the balance's
	// debt, read back from the wait for it (1 engine-second per hour).
	overrun := func(name string) time.Duration {
		wait := budgets.Allow(context.Background(), "key:"+name, b)
		return time.Duration(wait.Seconds() / 3600 * float64(time.Second))
	}
	check := func(name string, took time.Duration, limited any) {
		t.Helper()
		o := overrun(name)
		t.Logf("%s: more than the 1 s left asked: ran %v, charged %v past the budget, limited_by_budget %v", name, took.Round(time.Millisecond), o.Round(time.Millisecond), limited)
		if o > time.Second {
			t.Errorf("%s: charged %v past the budget, want at most 1 s", name, o)
		}
		if limited != true {
			t.Errorf("%s: the answer does not say the search was cut (limited_by_budget %v)", name, limited)
		}
	}

	t0 := time.Now()
	resp, body := do(t, "POST", hs.URL+"/v1/analyze", keys["rest"], `{"engine":"fairy","position":{"sfen":"`+outOfBok+`"},"limits":{"movetime_ms":4000}}`)
	var ans map[string]any
	json.Unmarshal([]byte(body), &ans)
	if resp.StatusCode != 200 {
		t.Fatalf("REST analyze: %d %s", resp.StatusCode, body)
	}
	check("rest", time.Since(t0), ans["limited_by_budget"])

	t0 = time.Now()
	resp, body = do(t, "POST", hs.URL+"/v1/mate", keys["mate"], `{"engine":"slowmate","timeout_ms":4000}`)
	ans = nil
	json.Unmarshal([]byte(body), &ans)
	if resp.StatusCode != 200 || ans["result"] != "timeout" {
		t.Errorf("REST mate: %d %s, want 200 with result timeout", resp.StatusCode, body)
	}
	check("mate", time.Since(t0), ans["limited_by_budget"])

	for _, tc := range []struct{ name, msg string }{
		{"ws", `{"type":"analyze","id":"a","engine":"fairy","position":{"sfen":"` + outOfBok + `"},"limits":{"movetime_ms":4000}}`},
		// Until stop: gpsusi (fairy is never sent go infinite here).
		{"wsstop", `{"type":"analyze","id":"a","engine":"gps","position":{"sfen":"` + outOfBok + `"}}`},
	} {
		c, _, err := wsDial(t, hs.URL, "", http.Header{"Authorization": {"Bearer " + keys[tc.name]}})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		c.Write(t.Context(), websocket.MessageText, []byte(tc.msg))
		ev := readUntil(t, c, tc.name+"'s end", isTerminal)
		if ev["type"] != "bestmove" {
			t.Errorf("%s: %v, want bestmove", tc.name, ev)
		}
		check(tc.name, time.Since(t0), ev["limited_by_budget"])
		c.Close(websocket.StatusNormalClosure, "")
	}

	resp, body = do(t, "POST", hs.URL+"/v1/games/analysis", keys["game"], `{"engine":"fairy","position":{"moves":[]},"limits":{"movetime_ms":3000}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("game analysis: %d %s", resp.StatusCode, body)
	}
	var job struct {
		ID        string
		Status    string
		Positions []map[string]any
	}
	json.Unmarshal([]byte(body), &job)
	// One position, no move played: its one search is the test (a move
	// played whose best move differs takes a second search, which the
	// spent budget pauses, and the position goes back to be searched
	// again: the answer would hang on fairy's best move).
	t0 = time.Now()
	var limited any
	testwait.For(t, "the game's first position", time.Minute, func() bool {
		_, body = do(t, "GET", hs.URL+"/v1/games/analysis/"+job.ID, keys["game"], "")
		json.Unmarshal([]byte(body), &job)
		for _, p := range job.Positions { // the first searched, whichever it is
			if p != nil {
				limited = p["limited_by_budget"]
				return true
			}
		}
		return job.Status == "done" || job.Status == "failed"
	})
	check("game", time.Since(t0), limited)
	do(t, "DELETE", hs.URL+"/v1/games/analysis/"+job.ID, keys["game"], "")
}
