package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/usid/usid/othello"
	"github.com/usid/usid/usi"
)

// TestOthelloEngineThroughUSI runs `usid othello-engine` as the pool runs
// any engine (a process spoken to by package usi in the USI-X dialect) and
// checks what usid reads of it: its name, the level option the play page
// looks for, its score scale, a search's bare disc scores and a legal
// bestmove under a byoyomi clock.
func TestOthelloEngineThroughUSI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := usi.Config{Path: os.Args[0], Args: []string{"othello-engine"}, Env: append(os.Environ(), "USID_RUN_MAIN=1")}
	// The probe's detection (usi, uci and uoi at once) tells it USI-X.
	if d, err := usi.Detect(ctx, cfg, 30*time.Second); err != nil || d != usi.DialectUSIX {
		t.Errorf("Detect: %v, %v; want usix", d, err)
	}
	cfg.Dialect = usi.DialectUSIX
	e, err := usi.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if id := e.ID(); id.Name != "usid-othello" || id.Author != "usid" {
		t.Errorf("id %+v", id)
	}
	if !slices.ContainsFunc(e.Options(), func(o usi.Option) bool {
		return o.Name == "level" && o.Type == usi.TypeSpin && o.Min == 0 && o.Max == 20
	}) {
		t.Errorf("no level option 0..20 in %+v", e.Options())
	}
	for _, opt := range [][2]string{{"USI_Hash", "256"}, {"USI_Ponder", "false"}} {
		if err := e.SetOption(opt[0], opt[1]); err != nil {
			t.Errorf("setoption %s: %v", opt[0], err)
		}
	}
	if err := e.IsReady(ctx); err != nil {
		t.Fatal(err)
	}
	if sc, ok := e.ScoreScale(); !ok || sc.Type != usi.ScoreStones || sc.Min != -64 || sc.Max != 64 {
		t.Errorf("score scale %+v (%v)", sc, ok)
	}
	moves := []string{"f5", "d6", "c3"}
	s, err := e.Go(ctx, usi.NewPosition("sfen", "startpos", moves), usi.Go{Clock: &usi.Clock{BTime: time.Second, WTime: time.Second, Byoyomi: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := othello.Load("startpos", moves)
	if res.BestMove == nil || !slices.Contains(p.LegalMoveStrings(), res.BestMove.Move) {
		t.Fatalf("bestmove %+v, legal %v", res.BestMove, p.LegalMoveStrings())
	}
	if len(res.Lines) == 0 || !res.Lines[0].Score.Scaled || len(res.Lines[0].PV) == 0 || res.Lines[0].PV[0] != res.BestMove.Move {
		t.Errorf("last info %+v", res.Lines)
	}
}
