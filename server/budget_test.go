package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/quota"
)

// TestEngineTimeBudget: the quota is engine time (issue 17). Many short
// searches cost next to nothing; one long search spends a small budget and
// the client's next search is refused (429, Retry-After) until it refills,
// whether the time was spent over REST, the WebSocket or a game analysis;
// other clients are not touched.
func TestEngineTimeBudget(t *testing.T) {
	shared.waitIdle(t)
	keys := map[string]string{"rest": "key-rest-0123456789", "ws": "key-ws-0123456789", "game": "key-game-0123456789"}
	_, hs := withAccess(t, &Access{Keys: keys, Anonymous: true,
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: 1, Period: time.Hour, Burst: 1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
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
		if resp.StatusCode != 429 || secs < 60 || !strings.Contains(b, "engine time is spent") {
			t.Errorf("%s: %d Retry-After %q %s; want 429 with a wait of minutes for an hour's budget", why, resp.StatusCode, resp.Header.Get("Retry-After"), b)
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
		if strings.Contains(b, `"finished_at"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the game analysis did not end: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	refused(keys["game"], "REST after a game analysis spent the budget")
}
