package play

import "time"

// TimeControl is one side's time: main time, then byoyomi (a period each
// move once the main time is spent) or a Fischer increment (added after
// each move); neither: sudden death. Moves (chess) makes the main time a
// period of that many moves, given again at the end of each (a classical
// control: 40 moves in 90 minutes); the engine is told the moves to go.
type TimeControl struct {
	MainMS    int64 `json:"main_ms"`
	ByoyomiMS int64 `json:"byoyomi_ms,omitempty"`
	IncMS     int64 `json:"inc_ms,omitempty"`
	Moves     int   `json:"moves,omitempty"`
}

// SideClock is what one side has left: MainMS of main time and, once that
// is spent, ByoyomiMS of the current byoyomi period.
type SideClock struct {
	MainMS    int64 `json:"main_ms"`
	ByoyomiMS int64 `json:"byoyomi_ms"`
}

// spend charges elapsed to a side with main time left under tc and
// returns the main time it has for its next move, and whether it lost on
// time: its move came more than lag after its time (main, then the byoyomi
// period; with an increment, main alone) ran out. lag is the allowance for
// the way between the server and the player (an engine's pipe, a page's
// network), the same for both sides.
func spend(tc TimeControl, main int64, elapsed, lag time.Duration) (next int64, flagged bool) {
	e := elapsed.Milliseconds()
	l := lag.Milliseconds()
	if tc.IncMS > 0 {
		left := main - e
		if left < -l {
			return 0, true
		}
		return max(left, 0) + tc.IncMS, false
	}
	if e <= main {
		return main - e, false
	}
	return 0, e-main > tc.ByoyomiMS+l
}

// allowance is how long a side with main time left under tc may take for
// its move before it loses on time (lag included).
func allowance(tc TimeControl, main int64, lag time.Duration) time.Duration {
	ms := main
	if tc.IncMS == 0 {
		ms += tc.ByoyomiMS
	}
	return time.Duration(ms)*time.Millisecond + lag
}

// view is a side's clock elapsed into its turn.
func view(tc TimeControl, main int64, elapsed time.Duration) SideClock {
	e := elapsed.Milliseconds()
	if tc.IncMS > 0 || e <= main {
		return SideClock{MainMS: max(main-e, 0), ByoyomiMS: tc.ByoyomiMS}
	}
	return SideClock{MainMS: 0, ByoyomiMS: max(tc.ByoyomiMS-(e-main), 0)}
}
