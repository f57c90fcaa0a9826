package match

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/usid/usid/session"
)

// A match game as its watch page reads it, read while it is played (the
// race detector watching): its evaluations are the players' own, one per
// move an engine chose, each of a position the game went through (the
// mover's side to move there), the latest line with its moves; every game
// names its watch page.
func TestGameWatched(t *testing.T) {
	m := newManager(t, Config{})
	id, err := m.Start(session.Caller{Client: "w"}, &Request{
		Players: []Player{{Engine: "fairy"}, {Engine: "fairy", Options: map[string]string{"Skill Level": "-20"}}},
		Games:   2, Concurrency: 2, Limits: &session.Limits{Nodes: 3000},
	})
	if err != nil {
		t.Fatal(err)
	}
	mt := m.Get(id)
	if mt.Game(-1) != nil || mt.Game(2) != nil {
		t.Error("a game beyond the match's is answered")
	}
	reads := 0
	for !mt.isEnded() {
		for n := range 2 {
			if v := mt.Game(n); v != nil {
				reads++
				checkWatched(t, id, n, v)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_ = mt.Wait(ctx) // reads spaced out, not a wait for a state
		cancel()
	}
	for n := range 2 {
		v := mt.Game(n)
		if v == nil || v.Status != StatusDone || !v.Game.Done || v.Line == nil || len(v.Evals) == 0 {
			t.Fatalf("game %d once done: %+v", n, v)
		}
		checkWatched(t, id, n, v)
	}
	t.Logf("%d reads while the games were played", reads)
}

func checkWatched(t *testing.T, id string, n int, v *GameView) {
	t.Helper()
	g := v.Game
	if g.Index != n || g.Watch != fmt.Sprintf("/watch/%s/%d", id, n) || v.Match != id || len(v.Players) != 2 {
		t.Fatalf("game %d: index %d watch %q match %q", n, g.Index, g.Watch, v.Match)
	}
	if g.Sides["b"]+g.Sides["w"] != 1 || g.Sides["b"] == g.Sides["w"] {
		t.Fatalf("game %d: sides %v, want one player each", n, g.Sides)
	}
	moves := len(g.Position.Moves)
	if len(v.Evals) > moves {
		t.Fatalf("game %d: %d evaluations of %d moves", n, len(v.Evals), moves)
	}
	last := -1
	for _, e := range v.Evals {
		if e.Ply <= last || e.Ply >= moves || e.PV != nil || (e.Score.CP == nil && e.Score.Mate == nil) {
			t.Fatalf("game %d: evaluation %+v after ply %d of %d moves", n, e, last, moves)
		}
		last = e.Ply
	}
	if l := v.Line; l != nil && (l.Ply != last || len(l.PV) == 0 || len(l.PV) > maxLinePV) {
		t.Fatalf("game %d: the latest line %+v, the last evaluation's ply %d", n, l, last)
	}
}
