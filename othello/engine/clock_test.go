package engine

import (
	"testing"
	"time"
)

// TestBudget: the hard limit never passes the clock of the side to move
// (its time, increment and byoyomi) minus a margin, soft never passes
// hard, and searches without a clock have no limit.
func TestBudget(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		g          GoParams
		white      bool
		empties    int
		soft, hard time.Duration // 0: unchecked; -1: must be 0
		clock      time.Duration
	}{
		{g: GoParams{Infinite: true}, soft: -1, hard: -1},
		{g: GoParams{Ponder: true, BTime: 1000, timed: true}, soft: -1, hard: -1},
		{g: GoParams{Depth: 5}, soft: -1, hard: -1},
		{g: GoParams{Nodes: 5}, soft: -1, hard: -1},
		{g: GoParams{}, soft: defaultMoveTime, hard: defaultMoveTime},
		{g: GoParams{MoveTime: 1000}, soft: 900 * ms, hard: 900 * ms},
		{g: GoParams{BTime: 60000, WTime: 10, timed: true}, empties: 40, clock: 60 * time.Second},
		{g: GoParams{BTime: 60000, WTime: 10, timed: true}, white: true, empties: 40, clock: 10 * ms},
		{g: GoParams{Byoyomi: 3000, timed: true}, empties: 30, clock: 3 * time.Second},
		{g: GoParams{BTime: 1000, WTime: 1000, Byoyomi: 3000, timed: true}, empties: 30, clock: 4 * time.Second},
		{g: GoParams{WInc: 500, timed: true}, white: true, empties: 30, clock: 500 * ms},
		{g: GoParams{BTime: 0, timed: true}, empties: 30, clock: 0},
	} {
		soft, hard := Budget(c.g, c.white, c.empties)
		switch {
		case c.soft == -1 && soft != 0, c.hard == -1 && hard != 0:
			t.Errorf("%+v: %v %v, want no limit", c.g, soft, hard)
		case c.soft > 0 && soft != c.soft, c.hard > 0 && hard != c.hard:
			t.Errorf("%+v: %v %v, want %v %v", c.g, soft, hard, c.soft, c.hard)
		case c.soft == -1:
		case soft > hard || soft <= 0:
			t.Errorf("%+v: soft %v, hard %v", c.g, soft, hard)
		case c.clock > 0 && hard > c.clock-min(c.clock/2, 10*ms):
			t.Errorf("%+v: hard %v leaves no margin on a clock of %v", c.g, hard, c.clock)
		case c.clock == 0 && c.g.timed && hard > ms:
			t.Errorf("%+v: hard %v with no time at all", c.g, hard)
		}
	}
}

// TestSolveEmpties: more time, more empties solved, within bounds.
func TestSolveEmpties(t *testing.T) {
	last := 0
	for _, d := range []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, time.Hour} {
		n := solveEmpties(d)
		if n < last || n < 12 || n > 24 {
			t.Errorf("solveEmpties(%v) = %d after %d", d, n, last)
		}
		last = n
	}
}
