package play

import (
	"context"
	"testing"
	"time"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// TestPlayingLists: a client's games in progress are listed to it alone,
// a game whose connection went (its tab closed) too, and no longer once
// it ended; with the Redis store, another instance lists the games this
// one drives (the player's next page may reach any pod).
func TestPlayingLists(t *testing.T) {
	rs := redistest.Start(t)
	m := New(Config{Service: svc, Lag: time.Minute, Store: newRedisStore(t, rs.URL, "list:", time.Second)})
	defer m.Close(context.Background())
	other := New(Config{Service: svc, Store: newRedisStore(t, rs.URL, "list:", time.Second)})
	defer other.Close(context.Background())
	ctx := context.Background()

	c := newConn(t, m, "frank")
	c.send(startReq("g", "fairy", `{"side":"w","clock":{"b":{"byoyomi_ms":1000},"w":{"main_ms":600000}}}`, nil))
	v := c.until(func(v *stateView) bool { return len(v.Moves) == 1 }) // the engine's first move
	c.cancel()                                                         // the tab is closed

	want := Summary{ID: v.ID, Rules: "shogi", Engine: "fairy", Human: "w", Plies: 1, Turn: "w"}
	for name, mm := range map[string]*Manager{"driving instance": m, "other instance": other} {
		got, err := mm.Playing(ctx, "frank")
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("%s: frank's games %+v (%v), want [%+v]", name, got, err, want)
		}
		if got, err := mm.Playing(ctx, "mallory"); err != nil || len(got) != 0 {
			t.Errorf("%s: mallory sees %+v (%v), want none", name, got, err)
		}
	}

	// Resigned from another page, by its id alone.
	c2 := newConn(t, m, "frank")
	c2.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c2.until(ended), "b", "resign", "resign")
	if got, err := m.Playing(ctx, "frank"); err != nil || len(got) != 0 {
		t.Errorf("after the resignation: %+v (%v), want none", got, err)
	}
	// The other instance reads the end once the driving one stored it.
	testwait.For(t, "the other instance lists no game of frank's", 10*time.Second, func() bool {
		got, err := other.Playing(ctx, "frank")
		return err == nil && len(got) == 0
	})
	waitIdle(t)
}
