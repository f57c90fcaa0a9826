package play

import (
	"testing"
	"time"
)

func TestSpend(t *testing.T) {
	ms := time.Millisecond
	lag := 300 * ms
	tests := []struct {
		name    string
		tc      TimeControl
		main    int64
		elapsed time.Duration
		next    int64
		flagged bool
	}{
		{"main left", TimeControl{MainMS: 10000, ByoyomiMS: 1000}, 10000, 4000 * ms, 6000, false},
		{"into byoyomi", TimeControl{MainMS: 10000, ByoyomiMS: 1000}, 500, 1400 * ms, 0, false},
		{"byoyomi spent, within lag", TimeControl{ByoyomiMS: 1000}, 0, 1300 * ms, 0, false},
		{"byoyomi spent, past lag", TimeControl{ByoyomiMS: 1000}, 0, 1301 * ms, 0, true},
		{"sudden death spent", TimeControl{MainMS: 5000}, 200, 501 * ms, 0, true},
		{"sudden death within lag", TimeControl{MainMS: 5000}, 200, 500 * ms, 0, false},
		{"fischer adds", TimeControl{MainMS: 5000, IncMS: 2000}, 3000, 1000 * ms, 4000, false},
		{"fischer late within lag", TimeControl{MainMS: 5000, IncMS: 2000}, 100, 350 * ms, 2000, false},
		{"fischer flagged", TimeControl{MainMS: 5000, IncMS: 2000}, 100, 401 * ms, 0, true},
	}
	for _, tt := range tests {
		next, flagged := spend(tt.tc, tt.main, tt.elapsed, lag)
		if next != tt.next || flagged != tt.flagged {
			t.Errorf("%s: spend = %d, %v; want %d, %v", tt.name, next, flagged, tt.next, tt.flagged)
		}
		// The timer that declares the loss agrees with spend: at the
		// allowance a move is still in time, a millisecond later not.
		a := allowance(tt.tc, tt.main, lag)
		if _, f := spend(tt.tc, tt.main, a, lag); f {
			t.Errorf("%s: a move at the allowance %v loses on time", tt.name, a)
		}
		if _, f := spend(tt.tc, tt.main, a+ms, lag); !f {
			t.Errorf("%s: a move after the allowance %v is in time", tt.name, a)
		}
	}
}

func TestView(t *testing.T) {
	tc := TimeControl{MainMS: 1000, ByoyomiMS: 3000}
	for _, tt := range []struct {
		main    int64
		elapsed time.Duration
		want    SideClock
	}{
		{1000, 0, SideClock{1000, 3000}},
		{1000, 400 * time.Millisecond, SideClock{600, 3000}},
		{1000, 1500 * time.Millisecond, SideClock{0, 2500}},
		{1000, 9 * time.Second, SideClock{0, 0}},
	} {
		if got := view(tc, tt.main, tt.elapsed); got != tt.want {
			t.Errorf("view(%d, %v) = %+v, want %+v", tt.main, tt.elapsed, got, tt.want)
		}
	}
}

// TestGoTimes: the engine is told its own time on both clocks, less the
// engine margin (taken from the byoyomi once the main time is short).
func TestGoTimes(t *testing.T) {
	m := New(Config{EngineMargin: 200 * time.Millisecond})
	ms := func(v *int64) int64 {
		if v == nil {
			return -1
		}
		return *v
	}
	for _, tt := range []struct {
		engine    TimeControl
		main      int64
		level     *Level
		b, w, byo int64
		inc       int64
	}{
		{TimeControl{MainMS: 60000, ByoyomiMS: 1000}, 60000, nil, 59800, 59800, 1000, -1},
		{TimeControl{ByoyomiMS: 1000}, 0, nil, 0, 0, 800, -1},
		{TimeControl{MainMS: 5000, ByoyomiMS: 1000}, 100, nil, 0, 0, 900, -1},
		{TimeControl{MainMS: 5000}, 150, nil, 0, 0, 0, -1},
		{TimeControl{MainMS: 5000, IncMS: 2000}, 3000, nil, 2800, 2800, -1, 2000},
		{TimeControl{ByoyomiMS: 1000}, 0, &Level{MoveTimeMS: 500}, 0, 0, 500, -1},
		{TimeControl{ByoyomiMS: 1000}, 0, &Level{MoveTimeMS: 3000}, 0, 0, 800, -1},
	} {
		g := &game{m: m, b: boardFrom(t, "shogi", "startpos")}
		g.st.Human = "b"
		g.st.TC = Sides{B: TimeControl{MainMS: 1000}, W: tt.engine}
		g.st.Main = [2]int64{1000, tt.main}
		g.st.Level = tt.level
		r := g.goRequest("x", nil, false, 0)
		if ms(r.BTime) != tt.b || ms(r.WTime) != tt.w || ms(r.Byoyomi) != tt.byo || ms(r.WInc) != tt.inc {
			t.Errorf("%+v main %d level %+v: btime %d wtime %d byoyomi %d winc %d; want %d %d %d %d",
				tt.engine, tt.main, tt.level, ms(r.BTime), ms(r.WTime), ms(r.Byoyomi), ms(r.WInc), tt.b, tt.w, tt.byo, tt.inc)
		}
	}
	// A turn taken over from another instance: the engine is told what is
	// left after the time its clock ran there.
	for _, tt := range []struct {
		engine     TimeControl
		main, gone int64
		b, byo     int64
	}{
		{TimeControl{MainMS: 60000, ByoyomiMS: 1000}, 60000, 10000, 49800, 1000},
		{TimeControl{ByoyomiMS: 1000}, 0, 300, 0, 500},
		{TimeControl{MainMS: 5000, ByoyomiMS: 1000}, 500, 1000, 0, 300},
		{TimeControl{MainMS: 5000, IncMS: 2000}, 3000, 1000, 1800, -1},
	} {
		g := &game{m: m, b: boardFrom(t, "shogi", "startpos")}
		g.st.Human = "b"
		g.st.TC = Sides{B: TimeControl{MainMS: 1000}, W: tt.engine}
		g.st.Main = [2]int64{1000, tt.main}
		r := g.goRequest("x", nil, false, time.Duration(tt.gone)*time.Millisecond)
		if ms(r.BTime) != tt.b || ms(r.WTime) != tt.b || ms(r.Byoyomi) != tt.byo {
			t.Errorf("%+v main %d, %d ms gone: btime %d wtime %d byoyomi %d; want %d %d %d",
				tt.engine, tt.main, tt.gone, ms(r.BTime), ms(r.WTime), ms(r.Byoyomi), tt.b, tt.b, tt.byo)
		}
	}
}

// TestChessGoTimes: a chess engine is told each side's own clock (its own
// less the margin), the increments and the moves to the end of its
// period; a level's movetime is its whole time for one move.
func TestChessGoTimes(t *testing.T) {
	m := New(Config{EngineMargin: 200 * time.Millisecond})
	ms := func(v *int64) int64 {
		if v == nil {
			return -1
		}
		return *v
	}
	for _, tt := range []struct {
		engine           TimeControl
		played           int
		level            *Level
		b, w, winc, binc int64
		togo             int
	}{
		{TimeControl{MainMS: 60000, IncMS: 1000}, 0, nil, 30000, 59800, 1000, -1, 0},
		{TimeControl{MainMS: 60000, Moves: 40}, 0, nil, 30000, 59800, -1, -1, 40},
		{TimeControl{MainMS: 60000, Moves: 40}, 41, nil, 30000, 59800, -1, -1, 39},
		{TimeControl{MainMS: 60000, IncMS: 1000}, 0, &Level{MoveTimeMS: 500}, 30000, 500, -1, -1, 1},
	} {
		g := &game{m: m, b: boardFrom(t, "chess", "startpos")}
		g.st.Human, g.st.FEN = "b", "startpos"
		g.st.TC = Sides{B: TimeControl{MainMS: 30000}, W: tt.engine}
		g.st.Main = [2]int64{30000, 60000}
		g.st.Played[1] = tt.played
		g.st.Level = tt.level
		r := g.goRequest("x", nil, false, 0)
		togo := 0
		if r.MovesToGo != nil {
			togo = *r.MovesToGo
		}
		if ms(r.BTime) != tt.b || ms(r.WTime) != tt.w || r.Byoyomi != nil || ms(r.WInc) != tt.winc || ms(r.BInc) != tt.binc || togo != tt.togo || r.Position.Start != "startpos" {
			t.Errorf("%+v level %+v: btime %d wtime %d winc %d binc %d movestogo %d byoyomi %v; want %d %d %d %d %d",
				tt.engine, tt.level, ms(r.BTime), ms(r.WTime), ms(r.WInc), ms(r.BInc), togo, r.Byoyomi, tt.b, tt.w, tt.winc, tt.binc, tt.togo)
		}
	}
}
