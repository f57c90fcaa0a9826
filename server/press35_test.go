package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// TestButtonPressesLeaveKindAvailable (issue 35): stockfish's Clear Hash,
// a button the operator allows, has the engine replaced after each lease
// that pressed it. One client pressing it 60 times, each press followed by
// another client's analysis on the kind's only process, leaves the kind
// available: the 60 analyses all succeed. Before, each replacement counted
// as a young engine's failure; the fifth marked the kind unavailable for
// 30 s and the analyses were refused (503 engine_unavailable).
//
// The replacements are the presser's engine time: a client with a 1 s
// budget is refused a press (too_many_requests) once its presses' engine
// starts have spent it, and the other client's analyses still succeed.
func TestButtonPressesLeaveKindAvailable(t *testing.T) {
	if _, err := os.Stat(stockfishPath); err != nil {
		t.Fatalf("%s is missing (%v): apt-get install stockfish", stockfishPath, err)
	}
	e, err := newEnvWith([]pool.EngineConfig{{
		Name: "sfpress", Path: stockfishPath, Instances: 1,
		Options:       map[string]string{"Hash": "16", "Threads": "1"},
		ClientOptions: map[string]pool.OptionRule{"Clear Hash": {}},
	}}, func(c *session.Config) { c.AcquireTimeout = 20 * time.Second })
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	keys := map[string]string{"presser": "key-presser-0123456789", "analyst": "key-analyst-0123456789"}
	cfg := e.srv.cfg
	cfg.Registerer = nil
	cfg.Access = &Access{Keys: keys, Anonymous: true,
		Keyed: Quota{EngineTime: quota.Budget{Seconds: 600, Period: time.Minute, Burst: 600, InteractiveShare: -1},
			Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Messages: 1e6},
		// The anonymous presser: one engine-second for the hour.
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: 1, Period: time.Hour, Burst: 1, InteractiveShare: -1},
			Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5, Messages: 1e6}}
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
		hs.Close()
	}()

	press := func(c *websocket.Conn, id string) map[string]any {
		t.Helper()
		msg := fmt.Sprintf(`{"type":"setoption","id":%q,"engine":"sfpress","name":"Clear Hash","value":""}`, id)
		if err := c.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		return readEvents(t, c, 1)[0]
	}
	analyses := 0
	analyse := func(when string) {
		t.Helper()
		resp, b := do(t, "POST", hs.URL+"/v1/analyze", keys["analyst"], `{"engine":"sfpress","position":{"fen":"startpos","moves":["e2e4","e7e5"]},"limits":{"depth":6}}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: the other client's analysis %d: %d %s (engine restarts so far %v)", when, analyses+1, resp.StatusCode, b, engineRestarts(t, e, "sfpress"))
		}
		analyses++
	}

	c, _, err := wsDial(t, hs.URL, "", http.Header{"Authorization": {"Bearer " + keys["presser"]}})
	if err != nil {
		t.Fatal(err)
	}
	const presses = 60
	for i := range presses {
		if ev := press(c, fmt.Sprint("p", i)); ev["type"] != "option" {
			t.Fatalf("press %d: %v", i+1, ev)
		}
		analyse(fmt.Sprintf("after press %d", i+1))
	}
	c.Close(websocket.StatusNormalClosure, "")
	if n := engineRestarts(t, e, "sfpress"); n < presses {
		t.Errorf("%v engine restarts after %d presses on the kind's only process, want one each", n, presses)
	}
	if st := e.pool.Status(); !st[0].Available {
		t.Errorf("after %d presses the kind is unavailable (retry after %v)", presses, st[0].RetryAfter)
	}

	// The anonymous presser pays for its presses' replacements: its budget
	// of one engine-second buys about as many as a second of engine starts.
	poor, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := range presses {
		ev := press(poor, fmt.Sprint("q", i))
		if ev["type"] == "error" && ev["code"] == "too_many_requests" {
			refused = i + 1
			t.Logf("press %d refused: %v", i+1, ev["message"])
			break
		}
		if ev["type"] != "option" {
			t.Fatalf("anonymous press %d: %v", i+1, ev)
		}
		analyse(fmt.Sprintf("after anonymous press %d", i+1))
	}
	if refused < 2 {
		t.Errorf("a 1 s budget paid for %d presses before a refusal (0: none in %d), want at least one and a refusal", refused-1, presses)
	}
}
