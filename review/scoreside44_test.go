package review

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/othello"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/session"
)

// TestScoreSideVerdicts (issue 44): an othello engine whose scores are from
// the side that just moved (the probe learns it: other_side) has its game
// analysed as an engine scoring from the side to move has: the same
// evaluations from Black's side, the same verdicts, move by move. Both fake
// engines play and score alike (greedily, the disc difference); only the
// side of their scores differs. Before, each of the flipped engine's scores
// was taken from the wrong side: the winner's moves were blunders.
func TestScoreSideVerdicts(t *testing.T) {
	eng := func(name, mode string) pool.EngineConfig {
		return pool.EngineConfig{Name: name, Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + mode}, Protocol: "usix"}
	}
	p, err := pool.New([]pool.EngineConfig{eng("usual", fakeengine.USIXDiscs), eng("other", fakeengine.USIXDiscs+"=other")},
		pool.Options{ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	if err := p.WaitDiscovered(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"usual": probe.ScoreSideToMove, "other": probe.ScoreSideOther} {
		if prof := p.Profile(name); prof == nil || prof.ScoreSide != want {
			t.Fatalf("%s: profile %+v, want score side %s", name, prof, want)
		}
	}
	svc := session.NewService(session.Config{Pool: p, AcquireTimeout: 10 * time.Second})
	m := New(Config{Service: svc, SpareCheck: 20 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	// A game of the greedy engine against a player of the first square:
	// one side plays well and one badly, so the verdicts are not all ok.
	moves := []string{}
	pos := othello.Startpos()
	for ply := 0; ply < 24 && !pos.IsOver(); ply++ {
		ms := pos.LegalMoves()
		mv := ms[0]
		if ply%2 == 1 {
			mv = ms[len(ms)-1]
		}
		pos.Play(mv)
		moves = append(moves, mv.String())
	}
	views := map[string]*View{}
	for _, name := range []string{"usual", "other"} {
		v, err := m.Start(session.Caller{Client: "c"}, &Request{Engine: name, Position: &session.Position{Game: "othello", Start: "startpos", Moves: moves},
			Limits: &session.Limits{Nodes: 1000}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		views[name] = wait(t, m, "c", v.ID, time.Minute)
		if views[name].Status != StatusDone {
			t.Fatalf("%s: %s %+v", name, views[name].Status, views[name].Error)
		}
	}
	judged := map[string]int{}
	for i, u := range views["usual"].Positions {
		o := views["other"].Positions[i]
		if evalText(u.Eval) != evalText(o.Eval) || u.Judgement != o.Judgement || u.BestMove != o.BestMove {
			t.Errorf("ply %d: usual eval %s, %s (best %s); other side's %s, %s (best %s)", i, evalText(u.Eval), u.Judgement, u.BestMove, evalText(o.Eval), o.Judgement, o.BestMove)
		}
		judged[u.Judgement]++
	}
	if judged[JudgementOK] == len(moves) || judged[""] > 1 {
		t.Errorf("verdicts %v: want some moves judged worse than ok, every move judged", judged)
	}
	t.Logf("verdicts of both engines: %v", judged)
}

func evalText(s *session.Score) string {
	switch {
	case s == nil:
		return "none"
	case s.Points != nil:
		return fmt.Sprintf("%g", *s.Points)
	case s.CP != nil:
		return fmt.Sprintf("cp %d", *s.CP)
	case s.Mate != nil:
		return fmt.Sprintf("mate %d", *s.Mate)
	}
	return "?"
}
