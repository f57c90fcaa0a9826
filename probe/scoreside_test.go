package probe

import (
	"context"
	"strings"
	"testing"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/usi"
)

// TestScoreSide: the side an engine's scores are from is learned from the
// two decided positions, for each side a fake othello engine can score
// from; an engine whose scores say nothing clear (the normal fake's
// constant cp 10) is unknown, and taken as scoring from the side to move.
func TestScoreSide(t *testing.T) {
	for _, tt := range []struct {
		mode, want string
		flipped    [2]bool // ScoresFlipped("b"), ScoresFlipped("w")
	}{
		{fakeengine.USIXDiscs, ScoreSideToMove, [2]bool{false, false}},
		{fakeengine.USIXDiscs + "=other", ScoreSideOther, [2]bool{true, true}},
		{fakeengine.USIXDiscs + "=black", ScoreSideBlack, [2]bool{false, true}},
		{fakeengine.USIXDiscs + "=white", ScoreSideWhite, [2]bool{true, false}},
		{fakeengine.USIX, ScoreSideUnknown, [2]bool{false, false}},       // score 2 discs: not clear
		{fakeengine.USIXNoInfo, ScoreSideUnknown, [2]bool{false, false}}, // no score at all
		{fakeengine.USIXFloat, ScoreSideUnknown, [2]bool{false, false}},  // 41.0 whoever has won
	} {
		start := func(ctx context.Context) (*usi.Engine, error) {
			return usi.Start(ctx, usi.Config{Path: fakeengine.Path(), Env: fakeengine.Env(tt.mode), Dialect: usi.DialectUSIX})
		}
		p, err := Run(t.Context(), Config{Start: start, Dialect: usi.DialectUSIX})
		if err != nil {
			t.Fatalf("%s: %v", tt.mode, err)
		}
		got := [2]bool{p.ScoresFlipped("b"), p.ScoresFlipped("w")}
		if p.ScoreSide != tt.want || got != tt.flipped || p.Sources["score_side"] != SourceProbed || p.Notes["score_side"] == "" {
			t.Errorf("%s: score side %q, flipped %v (%s: %s); want %q, %v", tt.mode, p.ScoreSide, got, p.Sources["score_side"], p.Notes["score_side"], tt.want, tt.flipped)
		}
		t.Logf("%s: %s: %s", tt.mode, p.ScoreSide, p.Notes["score_side"])
	}
	p := probeFake(t, fakeengine.Normal)
	if p.ScoreSide != ScoreSideUnknown || !strings.Contains(p.Notes["score_side"], "not clear") || p.ScoresFlipped("w") {
		t.Errorf("normal fake: score side %q (%s), want unknown, not flipped", p.ScoreSide, p.Notes["score_side"])
	}
}

// TestClearSign: what a score says clearly.
func TestClearSign(t *testing.T) {
	stones := &usi.ScoreScale{Type: usi.ScoreStones, Min: -64, Max: 64}
	wp := &usi.ScoreScale{Type: usi.ScoreWP, Min: 0, Max: 100}
	for _, tt := range []struct {
		s     usi.Score
		scale *usi.ScoreScale
		want  int
	}{
		{usi.Score{Value: 900}, nil, 1},
		{usi.Score{Value: -300}, nil, -1},
		{usi.Score{Value: 299}, nil, 0},
		{usi.Score{Mate: true, Value: 3}, nil, 1},
		{usi.Score{Mate: true, Value: -2}, nil, -1},
		{usi.Score{Mate: true, MateSign: '-'}, nil, -1},
		{usi.Score{Scaled: true, Points: 40}, stones, 1},
		{usi.Score{Scaled: true, Points: -12}, stones, 0},
		{usi.Score{Scaled: true, Points: 20}, wp, -1},
		{usi.Score{Scaled: true, Points: 55}, wp, 0},
		{usi.Score{Scaled: true, Points: -25}, nil, -1},
	} {
		if got := clearSign(tt.s, tt.scale); got != tt.want {
			t.Errorf("clearSign(%+v, %v) = %d, want %d", tt.s, tt.scale, got, tt.want)
		}
	}
}
