package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// countSent counts the lines sent to engine name that start with prefix.
func countSent(name, prefix string) int {
	return len(sentWith(name, prefix))
}

// sentWith lists the lines sent to engine name that start with prefix,
// but a broadcast's "go infinite": a broadcast test before these, in file
// order, leaves its search to the shared engines, which may go on after
// they were seen idle (as TestNativeLimits knows too).
func sentWith(name, prefix string) []string {
	var out []string
	for _, l := range shared.sentTo(name) {
		if strings.HasPrefix(l, prefix) && !strings.HasPrefix(l, "go infinite") {
			out = append(out, l)
		}
	}
	return out
}

// readEvents reads n events from c.
func readEvents(t *testing.T, c *websocket.Conn, n int) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out []map[string]any
	for len(out) < n {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		var ev map[string]any
		json.Unmarshal(b, &ev)
		if ev["type"] == "engine" || ev["type"] == "info" || ev["type"] == "queued" {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// TestOneParserForLimiterAndHandler: a search request with a '}' appended
// used to skip the rate limiter (which could not read it) and reach the
// engine (the handler's parser accepted it). Now one strict parse serves
// both: such a message is refused, and the limiter counts every message.
func TestOneParserForLimiterAndHandler(t *testing.T) {
	shared.waitIdle(t)
	_, hs := withAccess(t, &Access{Anonymous: true, AnonymousQuota: Quota{Rate: 0.01, Burst: 1, Sessions: 5, Leases: 5, Messages: 1000}})
	c, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The searches asked here are depth 1 (fairy takes go depth): other
	// tests' leftover searches (a broadcast's go infinite, a game's clock)
	// are not counted.
	before := countSent("fairy", "go depth ")
	const n = 30
	for i := range n {
		suffix := []string{"}", "]", ""}[i%3]
		msg := `{"type":"analyze","id":"a` + strconv.Itoa(i) + `","engine":"fairy","limits":{"depth":1}}` + suffix
		c.Write(t.Context(), websocket.MessageText, []byte(msg))
	}
	evs := readEvents(t, c, n)
	searches := 0
	for i, ev := range evs {
		if ev["type"] == "bestmove" {
			searches++
			continue
		}
		if ev["type"] != "error" || (ev["code"] != "bad_request" && ev["code"] != "too_many_requests") || ev["id"] == nil {
			t.Errorf("event %d: %v", i, ev)
		}
	}
	shared.waitIdle(t)
	if got := countSent("fairy", "go depth ") - before; searches != 1 || got != 1 {
		gos := sentWith("fairy", "go ")
		t.Errorf("%d searches answered, %d go commands reached the engine; the rate allows 1 (the last go commands: %q)", searches, got, gos[max(0, len(gos)-got-2):])
	}
	// REST: trailing data is refused too.
	for _, body := range []string{`{}}`, `{}]`, `{} {}`, `{"position":{},"position":{}}`} {
		if resp, b := do(t, "POST", hs.URL+"/v1/validate", "", body); resp.StatusCode != 400 {
			t.Errorf("POST /v1/validate %s: %d %s, want 400", body, resp.StatusCode, b)
		}
	}
}

// TestControlFlood: newgame, gameover and the other control messages count
// against the client's flood guard; before, 4,501 engine lines came from a
// client in 4.5 s.
func TestControlFlood(t *testing.T) {
	shared.waitIdle(t)
	_, hs := withAccess(t, &Access{Anonymous: true, AnonymousQuota: Quota{Rate: 100, Burst: 100, Sessions: 5, Leases: 5, Messages: 5}})
	c, _, err := wsDial(t, hs.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := countSent("fairy", "usinewgame")
	const n = 100
	start := time.Now()
	for i := range n {
		c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"newgame","id":"n`+strconv.Itoa(i)+`","engine":"fairy"}`))
	}
	limited := 0
	for _, ev := range readEvents(t, c, n) {
		if ev["code"] == "too_many_requests" {
			limited++
			if ev["id"] == nil {
				t.Errorf("flood refusal without id: %v", ev)
			}
		}
	}
	elapsed := time.Since(start)
	got := countSent("fairy", "usinewgame") - before
	allowed := 11 + int(5*elapsed.Seconds()) + 1 // burst 2*5+1, then 5/s
	t.Logf("%d newgame lines reached the engine in %v, %d refused", got, elapsed.Round(time.Millisecond), limited)
	if got > allowed || limited == 0 && allowed < n {
		t.Errorf("%d newgame lines reached the engine in %v (flood guard allows %d); %d refused", got, elapsed, allowed, limited)
	}
}

// TestErrorsEchoTheID: a refused message names the request it answers when
// it had an id (issue 13: an unknown field was answered without one).
func TestErrorsEchoTheID(t *testing.T) {
	cl := dial(t, shared)
	for _, tt := range []struct{ msg, id, code string }{
		{`{"type":"analyze","id":"u1","bogus":1}`, "u1", "bad_request"},
		{`{"type":"analyze","id":"u2","limits":{"depth":1}}}`, "u2", "bad_request"},
		{`{"type":"analyze","id":"u3","limits":{"depth":"x"}}`, "u3", "bad_request"},
		{`{"type":"dance","id":"u4"}`, "u4", "unknown_type"},
		{`{"type":"gameover","id":"u5","result":"resign"}`, "u5", "invalid_field"},
	} {
		cl.sendRaw(tt.msg)
		ev := last(cl.until(10*time.Second, func(ev map[string]any) bool { return ev["type"] == "error" }))
		if ev["id"] != tt.id || ev["code"] != tt.code {
			t.Errorf("%s: %v, want id %s, code %s", tt.msg, ev, tt.id, tt.code)
		}
	}
}
