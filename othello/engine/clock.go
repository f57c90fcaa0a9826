package engine

import "time"

// GoParams are the limits of a go command. Times are in milliseconds.
type GoParams struct {
	BTime, WTime, BInc, WInc, Byoyomi, MoveTime int64
	Depth                                       int
	Nodes                                       uint64
	Infinite, Ponder                            bool
	timed                                       bool // a clock or movetime was given
}

// defaultMoveTime is the time of a go without any limit: a move within a
// second rather than a search that never ends.
const defaultMoveTime = 1000 * time.Millisecond

// Budget returns how long a search may take: soft, after which it begins
// no new iteration, and hard, when it must answer. Zero is no limit (go
// infinite, go ponder before ponderhit, or depth and nodes alone).
//
// The clock of the side to move is shared out over the moves it has left
// (about half the empty squares, a few more to be safe), its increment and
// byoyomi added, and a margin for the pipe and the scheduler kept back:
// the hard limit is never beyond the time the side has minus that margin.
func Budget(g GoParams, white bool, empties int) (soft, hard time.Duration) {
	if g.Infinite || g.Ponder {
		return 0, 0
	}
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	if g.MoveTime > 0 {
		h := ms(g.MoveTime) - margin(ms(g.MoveTime))
		return h, h
	}
	if !g.timed {
		if g.Depth > 0 || g.Nodes > 0 {
			return 0, 0
		}
		return defaultMoveTime, defaultMoveTime
	}
	left, inc := g.BTime, g.BInc
	if white {
		left, inc = g.WTime, g.WInc
	}
	left, inc = max(left, 0), max(inc, 0)
	avail := ms(left + inc + max(g.Byoyomi, 0)) // what this move may use at most
	movesLeft := int64(empties/2 + 3)
	soft = ms(left/movesLeft + inc*3/4 + max(g.Byoyomi, 0))
	soft -= margin(soft)
	hard = min(avail-margin(avail), 3*soft) // room to end an iteration, never the clock
	soft = min(soft, hard)
	return max(soft, time.Millisecond), max(hard, time.Millisecond)
}

// margin is the time kept back from a limit d: a tenth, at least 15 ms
// (but never more than half of d) and at most 150 ms.
func margin(d time.Duration) time.Duration {
	m := d / 10
	m = max(m, 15*time.Millisecond)
	m = min(m, 150*time.Millisecond)
	return min(m, d/2)
}

// solveEmpties is how many empty squares the exact solver takes, for a
// search that may last hard (0: no limit). Each empty square more costs the
// solver about three times as long (BenchmarkFFO). Conservative: on a
// shared machine a second of wall time can be a fraction of a CPU second,
// and a solve cut short leaves only the shallow search before it.
func solveEmpties(hard time.Duration) int {
	if hard == 0 {
		return 24
	}
	n := 14
	for t := 40 * time.Millisecond; t < hard && n < 24; t *= 3 {
		n++
	}
	return n
}
