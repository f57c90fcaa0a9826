package chess

import (
	"strings"
	"testing"
)

// TestEnding: each way a game ends by the rules, and positions that go on.
func TestEnding(t *testing.T) {
	for _, tc := range []struct {
		fen   string
		moves string
		want  Ending
	}{
		{StartFEN, "", ""},
		{StartFEN, "f2f3 e7e5 g2g4 d8h4", EndCheckmate},                      // fool's mate
		{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "", EndStalemate},                 // no move, not in check
		{"8/8/4k3/8/8/3K4/8/8 w - - 0 1", "", EndInsufficientMaterial},       // kings only
		{"8/8/4k3/8/8/3KN3/8/8 w - - 0 1", "", EndInsufficientMaterial},      // a lone knight
		{"8/8/4k3/2b5/8/3KB3/8/8 w - - 0 1", "", EndInsufficientMaterial},    // bishops on dark squares both
		{"8/8/4k3/3b4/8/3KB3/8/8 w - - 0 1", "", ""},                         // bishops of both colours
		{"8/8/4k3/8/8/3KNN2/8/8 w - - 0 1", "", ""},                          // two knights: mate is possible
		{StartFEN, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8", EndRepetition}, // the start a third time
		{StartFEN, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1", ""},                 // twice only
		{"4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", "a1a2", EndFiftyMoves},        // the hundredth ply
		{"4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", "e2e3", ""},                   // a pawn move resets it
		{"7k/8/6K1/8/8/8/8/R7 w - - 99 80", "a1a8", EndCheckmate},            // mate on the fiftieth move
	} {
		start, err := ParseFEN(tc.fen, Standard)
		if err != nil {
			t.Fatal(err)
		}
		var ms []Move
		pos := *start
		for _, s := range strings.Fields(tc.moves) {
			m, err := pos.CheckMove(s)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.fen, s, err)
			}
			pos.Play(m)
			ms = append(ms, m)
		}
		if got := GameEnding(start, ms); got != tc.want {
			t.Errorf("%s moves %q: got %q, want %q", tc.fen, tc.moves, got, tc.want)
		}
	}
}
