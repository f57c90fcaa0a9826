package usi

import "testing"

// TestFromOtherSide: a score turned to the other side's point of view, in
// each of its forms.
func TestFromOtherSide(t *testing.T) {
	wp := &ScoreScale{Type: ScoreWP, Min: 0, Max: 100}
	stones := &ScoreScale{Type: ScoreStones, Min: -64, Max: 64}
	for _, tt := range []struct {
		in    Score
		scale *ScoreScale
		want  Score
	}{
		{Score{Value: 120}, nil, Score{Value: -120}},
		{Score{Value: 35, Bound: LowerBound}, nil, Score{Value: -35, Bound: UpperBound}},
		{Score{Mate: true, Value: 5}, nil, Score{Mate: true, Value: -5}},
		{Score{Mate: true, MateSign: '+'}, nil, Score{Mate: true, MateSign: '-'}},
		{Score{Scaled: true, Points: -25, Value: -2500}, stones, Score{Scaled: true, Points: 25, Value: 2500}},
		{Score{Scaled: true, Points: 70, Value: 7000, Bound: UpperBound}, wp, Score{Scaled: true, Points: 30, Value: 3000, Bound: LowerBound}},
		{Score{Scaled: true, Points: 4.5, Value: 450}, nil, Score{Scaled: true, Points: -4.5, Value: -450}},
	} {
		if got := tt.in.FromOtherSide(tt.scale); got != tt.want {
			t.Errorf("%+v.FromOtherSide(%v) = %+v, want %+v", tt.in, tt.scale, got, tt.want)
		}
	}
	in := Info{Fields: InfoScore | InfoWDL, Score: Score{Value: 40}, WDL: [3]int{600, 300, 100}}
	in.FromOtherSide(nil)
	if in.Score.Value != -40 || in.WDL != [3]int{100, 300, 600} {
		t.Errorf("a line turned: score %d, wdl %v; want -40, [100 300 600]", in.Score.Value, in.WDL)
	}
}
