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
		// FIDE 9.2.3: an en-passant square counts only where a pawn can
		// capture on it. After 1.e4 none can: the position after 1.e4 comes
		// a third time with 5.Ng1.
		{StartFEN, "e2e4 g8f6 g1f3 f6g8 f3g1 g8f6 g1f3 f6g8 f3g1", EndRepetition},
		// After 2...d5 White can take en passant: that position is another
		// than the one 4...Nc6 and 6...Nc6 come back to (twice only).
		{StartFEN, "e2e4 b8c6 e4e5 d7d5 g1f3 c6b8 f3g1 b8c6 g1f3 c6b8 f3g1 b8c6", ""},
		{StartFEN, "e2e4 b8c6 e4e5 d7d5 g1f3 c6b8 f3g1 b8c6 g1f3 c6b8 f3g1 b8c6 g1f3 c6b8 f3g1 b8c6", EndRepetition},
		// A capture that is no legal move is no right either: dxe3 would
		// leave Black's king to the rook on a4.
		{"8/8/8/8/R2p3k/8/4P3/K7 w - - 0 1", "e2e4 h4h5 a1b1 h5h4 b1a1 h4h5 a1b1 h5h4 b1a1", EndRepetition},
		{"4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", "a1a2", EndFiftyMoves}, // the hundredth ply
		{"4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", "e2e3", ""},            // a pawn move resets it
		{"7k/8/6K1/8/8/8/8/R7 w - - 99 80", "a1a8", EndCheckmate},     // mate on the fiftieth move
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

// TestRepetitionKey: the en-passant square is in the key only where an
// en-passant capture is a legal move (FIDE 9.2.3).
func TestRepetitionKey(t *testing.T) {
	for _, tc := range []struct{ fen, moves, want string }{
		{StartFEN, "e2e4", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"},                    // no black pawn beside e4
		{StartFEN, "e2e4 b8c6 e4e5 d7d5", "r1bqkbnr/ppp1pppp/2n5/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6"}, // exd6 is legal
		{"8/8/8/8/R2pP2k/8/8/K7 b - e3 0 1", "", "8/8/8/8/R2pP2k/8/8/K7 b - -"},                         // dxe3 leaves the king to the rook
		{"8/8/8/5k2/3pP3/8/8/K7 b - e3 0 1", "", "8/8/8/5k2/3pP3/8/8/K7 b - e3"},                        // dxe3 answers the pawn's check
		{"4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", "", "4k3/8/8/8/4P3/8/8/4K3 b - -"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 7 20", "", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq -"}, // castling rights as they are
	} {
		p, errs := Load(tc.fen, strings.Fields(tc.moves), Standard)
		if errs != nil {
			t.Fatalf("%s %s: %v", tc.fen, tc.moves, Errors(errs))
		}
		if got := p.RepetitionKey(); got != tc.want {
			t.Errorf("%s %s: key %q, want %q", tc.fen, tc.moves, got, tc.want)
		}
		if got, want := p.CanCaptureEnPassant(), !strings.HasSuffix(tc.want, "-"); got != want {
			t.Errorf("%s %s: CanCaptureEnPassant %v", tc.fen, tc.moves, got)
		}
	}
}
