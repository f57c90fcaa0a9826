package play

import (
	"context"
	"testing"
	"time"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/session"
)

// TestResignDuringRedisCut (issue 35): a game resigned while the link
// between its instance and Redis is cut (2.5 s, under the default 5 s
// lease) stays resigned: another instance resuming it after the outage
// finds it ended, never playing again.
func TestResignDuringRedisCut(t *testing.T) {
	rs := redistest.Start(t)
	px := redistest.NewProxy(t, rs)
	ma := New(Config{Service: svc, Store: newRedisStore(t, px.URL, "t35:", 5*time.Second), Lag: time.Minute})
	mb := New(Config{Service: svc, Store: newRedisStore(t, rs.URL, "t35:", 5*time.Second), Lag: time.Minute})
	defer ma.Close(context.Background())
	defer mb.Close(context.Background())
	c := newConn(t, ma, "oscar")
	c.send(startReq("g", "fairy", `{"side":"b","clock":{"b":{"main_ms":600000},"w":{"byoyomi_ms":1000}}}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	c.state()
	if last := c.state(); last.Clock.Running != "b" || len(last.Moves) != 2 {
		t.Fatalf("after the engine's move: %+v", last)
	}
	px.Cut()
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.until(ended), "w", "resign", "resign")
	time.Sleep(2500 * time.Millisecond) // the outage itself
	px.Mend()
	c.cancel()

	c2 := newConn(t, mb, "oscar")
	began := time.Now()
	c2.send(&session.Request{Type: session.TypePlayResume, ID: "again", Game: v.ID})
	r := c2.state()
	t.Logf("resumed on the other instance after %v: %s %+v", time.Since(began).Round(time.Millisecond), r.Status, r.Result)
	if r.Status == statusPlaying {
		c2.send(&session.Request{Type: session.TypePlayMove, ID: "m2", Game: v.ID, Move: "2g2f"})
		n := c2.state()
		t.Fatalf("the resigned game is playing again on the other instance and took a move: %v", n.Moves)
	}
	checkResult(t, r, "w", "resign", "resign")
	waitIdle(t)
}
