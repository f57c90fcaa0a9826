package play

import (
	"context"
	"testing"
	"time"

	"github.com/usid/usid/session"
)

// TestIdlePlayerEnded (issue 35): a player who stays connected but does
// not move holds a game's slot no longer than Config.Idle, whatever the
// clock (6 h + 6 h a move here): the game is lost (abandoned) once the
// player has moved in it, aborted when the player never did; either way
// its slot is free again.
func TestIdlePlayerEnded(t *testing.T) {
	const idle = 1500 * time.Millisecond
	// A generous lag: the engine's clock is not what this test is about.
	m := New(Config{Service: svc, Idle: idle, MaxPerClient: 1, Lag: time.Minute})
	defer m.Close(context.Background())
	long := `{"side":"b","clock":{"b":{"main_ms":21600000,"byoyomi_ms":21600000},"w":{"byoyomi_ms":500}}}`

	// The player moves once, then idles, connected.
	c := newConn(t, m, "ivan")
	c.send(startReq("g1", "fairy", long, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	v = c.until(func(v *stateView) bool { return len(v.Moves) == 2 || v.Status != statusPlaying })
	if v.Status != statusPlaying {
		t.Fatalf("before idling: %+v", v.Result)
	}
	since := time.Now()
	v = c.until(func(v *stateView) bool { return v.Status != statusPlaying })
	took := time.Since(since)
	t.Logf("the idle player's game ended %v after the engine's move (idle %v): %+v", took.Round(time.Millisecond), idle, *v.Result)
	checkResult(t, v, "w", "abandoned", "abort")
	if took < idle-100*time.Millisecond {
		t.Errorf("ended after %v, before the player had been idle %v", took, idle)
	}
	if v.Clock.B.MainMS < 21600000-idle.Milliseconds()-2000 {
		t.Errorf("the player's clock at the end: %+v", v.Clock.B)
	}

	// The slot is free: a new game, in which the player never moves.
	c.send(startReq("g2", "fairy", long, nil))
	v = c.state()
	if v.Status != statusPlaying {
		t.Fatalf("a new game after the end: %+v", v.Public)
	}
	v = c.until(func(v *stateView) bool { return v.Status != statusPlaying })
	checkResult(t, v, "", "aborted", "abort")
	if playing, _ := m.Counts(); playing != 0 {
		t.Errorf("%d games in progress after both ended", playing)
	}
	waitIdle(t)
}
