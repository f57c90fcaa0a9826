package play

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEngineWaitStandsTheClock (issue 35): a state whose engine waits for
// a process shows no running clock and the engine's clock as it stood when
// the wait began, however long ago; an instance taking the turn over
// moves the turn's start on by the wait (and ignores a wait that is not
// within the turn: a state it did not write).
func TestEngineWaitStandsTheClock(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	st := testState("g", "alice") // the human (Black) has moved: the engine, White, is to move
	st.Human, st.Moves, st.MovesKIF, st.TimesMS, st.Pre = "b", []string{"7g7f"}, []string{"▲７六歩(77)"}, []int64{0}, 0
	st.TurnStart, st.EngineWaits = t0, t0.Add(700*time.Millisecond)
	var v stateView
	if err := json.Unmarshal(stateEvent("x", st, time.Now()).Play, &v); err != nil {
		t.Fatal(err)
	}
	if v.Clock.Running != "" || v.Clock.W.MainMS != st.Main[1]-700 {
		t.Errorf("a waiting engine's clock a minute on: %+v, want none running and %d ms left", v.Clock, st.Main[1]-700)
	}
	for _, tt := range []struct {
		waits, want time.Time
	}{
		{t0.Add(700 * time.Millisecond), t0.Add(59300 * time.Millisecond)}, // waited 59.3 s: not charged
		{t0.Add(-time.Second), t0},    // before the turn: ignored
		{t0.Add(2 * time.Minute), t0}, // in the future: ignored
		{time.Time{}, t0},             // no wait
	} {
		g := &game{st: *st}
		g.st.EngineWaits = tt.waits
		g.standWait(t0.Add(time.Minute))
		if !g.st.TurnStart.Equal(tt.want) || !g.st.EngineWaits.IsZero() {
			t.Errorf("waits %v: turn start %v (waits %v), want %v", tt.waits.Sub(t0), g.st.TurnStart.Sub(t0), g.st.EngineWaits, tt.want.Sub(t0))
		}
	}
}
