package engine

import (
	"testing"
	"time"

	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/othello"
)

// midgame is a position of move 20 (from a game of the match harness).
func midgame(t testing.TB) Board {
	p, errs := othello.Load("startpos", []string{"f5", "d6", "c3", "d3", "c4", "f4", "c5", "b3", "c2", "e6", "c6", "b4", "b5", "d2", "e3", "a6", "c1", "b1", "f3", "f6"})
	if errs != nil {
		t.Fatal(othello.Errors(errs))
	}
	return boardOf(p)
}

// TestSearchDeterministic: the same search twice (the table cleared)
// gives the same move and score, and deeper searches report every depth.
func TestSearchDeterministic(t *testing.T) {
	b := midgame(t)
	z := NewSearcher(4, 1)
	var depths []int
	r1 := z.Search(b, Limits{Level: MaxLevel, Depth: 6}, new(Control), func(in Info) { depths = append(depths, in.Depth) })
	z.Clear()
	r2 := z.Search(b, Limits{Level: MaxLevel, Depth: 6}, new(Control), nil)
	if r1.Move != r2.Move || r1.Score != r2.Score || r1.Nodes != r2.Nodes {
		t.Errorf("two searches: %+v and %+v", r1, r2)
	}
	if len(depths) != 6 || depths[5] != 6 {
		t.Errorf("depths reported %v", depths)
	}
	if Moves(b.P, b.O)&(1<<uint(r1.Move)) == 0 {
		t.Errorf("move %d is not legal", r1.Move)
	}
}

// TestStopEndsSearch: a stopped search still answers a legal move.
func TestStopEndsSearch(t *testing.T) {
	b := midgame(t)
	ctl := new(Control)
	ctl.Stop()
	res := NewSearcher(1, 1).Search(b, Limits{Level: MaxLevel}, ctl, nil)
	if res.Move < 0 || Moves(b.P, b.O)&(1<<uint(res.Move)) == 0 {
		t.Errorf("stopped search answered %d", res.Move)
	}
}

// BenchmarkSearch searches the move-20 position 10 plies deep and reports
// the nodes searched per second of the middle-game search.
func BenchmarkSearch(b *testing.B) {
	pos := midgame(b)
	z := NewSearcher(16, 1)
	var nodes uint64
	for b.Loop() {
		z.Clear()
		nodes += z.Search(pos, Limits{Level: MaxLevel, Depth: 10}, new(Control), nil).Nodes
	}
	b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
}

// TestDeadlineTimer: the hard deadline's timer raises the flag the search
// reads (late), and new deadlines take it down again at once.
func TestDeadlineTimer(t *testing.T) {
	c := new(Control)
	c.SetDeadlines(time.Time{}, time.Now().Add(time.Millisecond))
	testwait.For(t, "the hard deadline's flag", time.Minute, c.late.Load)
	c.SetDeadlines(time.Time{}, time.Now().Add(time.Hour))
	if c.late.Load() {
		t.Error("new deadlines kept the flag of the old one")
	}
	c.SetDeadlines(time.Time{}, time.Time{})
	if c.late.Load() || c.timer != nil {
		t.Error("no deadline, yet a flag or a timer")
	}
}
