package session

import (
	"strings"
	"testing"
)

// TestChessBoard: a chess position's cache key names the game and keeps
// the 50-move counter; a history with a repeated position is seen; the
// notation is SAN.
func TestChessBoard(t *testing.T) {
	check := func(p *Position) *Checked {
		t.Helper()
		c, err := CheckPosition(p, 100)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shogiKey := check(&Position{}).Key()
	start := check(&Position{Game: "chess", Start: "startpos"})
	if k := start.Key(); !strings.HasPrefix(k, "chess ") || k == shogiKey || strings.HasSuffix(k, " 1") {
		t.Errorf("key %q (shogi's %q): want the game named and no move number", k, shogiKey)
	}
	a := check(&Position{Game: "chess", Start: "4k3/8/8/8/8/8/8/R3K3 w - - 0 40"}).Key()
	b := check(&Position{Game: "chess", Start: "4k3/8/8/8/8/8/8/R3K3 w - - 90 40"}).Key()
	if a == b {
		t.Errorf("keys of two 50-move counters are one: %q", a)
	}
	// An en-passant square no pawn can use is no part of the question an
	// engine answers (stockfish drops it: "position fen ... e3" then "d"
	// prints "-"); one a pawn can use is.
	afterE4 := check(&Position{Game: "chess", Start: "startpos", Moves: []string{"e2e4"}}).Key()
	if k := check(&Position{Game: "chess", Start: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}).Key(); k != afterE4 {
		t.Errorf("1.e4 is keyed %q, its FEN without e3 %q", afterE4, k)
	}
	withEP := check(&Position{Game: "chess", Start: "startpos", Moves: []string{"e2e4", "b8c6", "e4e5", "d7d5"}}).Key()
	if k := check(&Position{Game: "chess", Start: "r1bqkbnr/ppp1pppp/2n5/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"}).Key(); k == withEP || !strings.Contains(withEP, " d6 ") {
		t.Errorf("a usable en-passant square is dropped: %q, without it %q", withEP, k)
	}
	for _, tt := range []struct {
		moves   []string
		repeats bool
	}{
		{[]string{"g1f3", "g8f6", "f3g1", "f6g8"}, true},
		{[]string{"g1f3", "g8f6", "f3g1", "f6g8", "e2e4"}, true},
		{[]string{"e2e4", "e7e5", "g1f3", "b8c6"}, false},
		{[]string{"g1f3", "g8f6", "f3g1"}, false},
		// After 1.e4 no pawn can take en passant: 3.Ng1 brings that
		// position back (FIDE 9.2.3).
		{[]string{"e2e4", "g8f6", "g1f3", "f6g8", "f3g1"}, true},
		// After 2...d5 White can: 4...Nc6 brings another position.
		{[]string{"e2e4", "b8c6", "e4e5", "d7d5", "g1f3", "c6b8", "f3g1", "b8c6"}, false},
	} {
		c := check(&Position{Game: "chess", Start: "startpos", Moves: tt.moves})
		if got := c.Repeats(); got != tt.repeats {
			t.Errorf("%v: repeats %v, want %v", tt.moves, got, tt.repeats)
		}
	}
	c := check(&Position{Game: "chess", Start: "startpos", Moves: []string{"e2e4"}})
	if got := strings.Join(c.Notate([]string{"e7e5", "g1f3", "b8c6", "f1b5", "zz"}), " "); got != "e5 Nf3 Nc6 Bb5" {
		t.Errorf("SAN %q", got)
	}
	if c.USI.FEN == "" || c.USI.SFEN != "" || len(c.USI.Moves) != 1 {
		t.Errorf("engine position %+v", c.USI)
	}
	if _, err := CheckPosition(&Position{Game: "chess", Start: "4k3/8/8/8/8/8/8/4K2R w KQ - 0 1"}, 100); err == nil || err.Code != "castling_rights" {
		t.Errorf("bad castling rights: %v", err)
	}
	if _, err := CheckPosition(&Position{Game: "chess", Start: "startpos", Moves: []string{"e2e4", "e2e4"}}, 100); err == nil || err.MoveIndex != 1 {
		t.Errorf("illegal second move: %+v", err)
	}
}

// TestChess960Board: a Chess960 position is read by its rules (castling
// king-takes-rook, Shredder-FEN rights), keyed apart from the same FEN
// read as standard chess, and sent to the engine as its full FEN (never
// "startpos"); an unknown variant, or one on a shogi position, is refused.
func TestChess960Board(t *testing.T) {
	fen := "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
	std, err := CheckPosition(&Position{Game: "chess", Start: fen}, 10)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CheckPosition(&Position{Game: "chess", Start: fen, Variant: "chess960", Moves: []string{"e1h1"}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !(c.Variant() == "chess960") || (std.Variant() == "chess960") || !strings.HasPrefix(c.Key(), "chess960 ") {
		t.Errorf("960 %v key %q; standard %v", (c.Variant() == "chess960"), c.Key(), (std.Variant() == "chess960"))
	}
	if _, err := CheckPosition(&Position{Game: "chess", Start: fen, Moves: []string{"e1h1"}}, 10); err == nil {
		t.Error("king-takes-rook castling taken as standard chess")
	}
	if s, err := CheckPosition(&Position{Game: "chess", Start: "startpos", Variant: "chess960"}, 10); err != nil || s.USI.FEN == "startpos" || !(s.Variant() == "chess960") {
		t.Errorf("the standard start as Chess960: %+v %v", s, err)
	}
	for _, p := range []*Position{{Game: "chess", Start: fen, Variant: "crazyhouse"}, {Variant: "chess960"}} {
		if _, err := CheckPosition(p, 10); err == nil || err.Code != CodeInvalidField {
			t.Errorf("%+v: %v, want invalid_field", p, err)
		}
	}
}
