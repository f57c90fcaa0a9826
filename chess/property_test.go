package chess

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomPositions returns n reproducible positions that pass Validate:
// positions of random games from the start (castling, en passant), and
// sparse random boards with promoted pieces and checks.
func randomPositions(tb testing.TB, n int, seed uint64) []*Position {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []*Position
	for len(out) < n/2 {
		p := Startpos()
		if len(out)%3 == 2 {
			p = mustLoad(tb, random960(rng), Chess960)
		}
		plies := rng.IntN(80)
		for i := 0; i < plies; i++ {
			ms := p.LegalMoves()
			if len(ms) == 0 {
				break
			}
			p.Play(ms[rng.IntN(len(ms))])
		}
		out = append(out, p)
	}
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000*n {
			tb.Fatal("too few valid random boards")
		}
		if p := randomBoard(rng); p.Validate() == nil {
			out = append(out, p)
		}
	}
	return out
}

// random960 returns a random Chess960 start: bishops on opposite colors,
// the king between the rooks.
func random960(rng *rand.Rand) string {
	var r [8]byte
	free := func(n int) int { // the nth empty file
		for i := range r {
			if r[i] == 0 {
				if n == 0 {
					return i
				}
				n--
			}
		}
		panic("no empty file")
	}
	r[2*rng.IntN(4)] = 'b'
	r[2*rng.IntN(4)+1] = 'b'
	r[free(rng.IntN(6))] = 'q'
	r[free(rng.IntN(5))] = 'n'
	r[free(rng.IntN(4))] = 'n'
	r[free(0)], r[free(1)], r[free(2)] = 'r', 'k', 'r'
	white := strings.ToUpper(string(r[:]))
	return string(r[:]) + "/pppppppp/8/8/8/8/PPPPPPPP/" + white + " w KQkq - 0 1"
}

// randomBoard places two kings and a few random pieces, with castling rights
// and an en-passant square where the board allows them.
func randomBoard(rng *rand.Rand) *Position {
	p := &Position{king: [2]Square{NoSquare, NoSquare}, ep: NoSquare, fullmove: 1,
		castle: [2][2]Square{{NoSquare, NoSquare}, {NoSquare, NoSquare}}}
	p.turn = Color(rng.IntN(2))
	empty := func() Square {
		for {
			if s := Square(rng.IntN(64)); p.board[s] == NoPiece {
				return s
			}
		}
	}
	for c := White; c <= Black; c++ {
		if rng.IntN(3) == 0 { // a king and rooks at home, to castle
			back := 7 * int(c)
			p.put(NewSquare(4, back), NewPiece(c, King))
			p.put(NewSquare(0, back), NewPiece(c, Rook))
			p.put(NewSquare(7, back), NewPiece(c, Rook))
			p.castle[c] = [2]Square{NewSquare(7, back), NewSquare(0, back)}
		} else {
			p.put(empty(), NewPiece(c, King))
		}
	}
	for i := rng.IntN(10); i > 0; i-- {
		s := empty()
		k := Kind(1 + rng.IntN(5))
		if k == Pawn && (s.Rank() == 0 || s.Rank() == 7) {
			continue
		}
		p.put(s, NewPiece(Color(rng.IntN(2)), k))
	}
	// An en-passant square where a pawn of the side not to move may just
	// have double-stepped.
	them := p.turn ^ 1
	for b := p.pieces(them, Pawn); b != 0; {
		s := b.pop()
		if relativeRank(them, s) == 3 && rng.IntN(2) == 0 {
			ep := s - 8
			if them == Black {
				ep = s + 8
			}
			p.ep = ep
			break
		}
	}
	return p
}

// TestMovesKeepPositionsValid: a legal move from a valid position reaches a
// valid position. Validate's refusals are conditions every reachable
// position meets; this catches one that refuses a position a move can make
// (a double check it thinks impossible, a castling right kept wrongly).
func TestMovesKeepPositionsValid(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for _, p := range randomPositions(t, n, 1) {
		for _, m := range p.LegalMoves() {
			q := *p
			q.Play(m)
			if errs := q.Validate(); errs != nil {
				t.Fatalf("%s then %s gives %s: %v", p.FEN(), m, q.FEN(), Errors(errs))
			}
			r, err := ParseFEN(q.FEN(), q.variant)
			if err != nil || *r != q {
				t.Fatalf("%s does not parse back to itself: %v", q.FEN(), err)
			}
		}
	}
}

// TestRepetitionKeyAgreesWithGenerator: the key keeps the en-passant square
// exactly when a generated move captures en passant, and two positions
// that differ in nothing else share it.
func TestRepetitionKeyAgreesWithGenerator(t *testing.T) {
	usable, unusable := 0, 0
	for _, p := range randomPositions(t, 3000, 2) {
		capture := false
		for _, m := range p.LegalMoves() {
			capture = capture || m.IsEnPassant()
		}
		switch {
		case capture:
			usable++
		case p.ep != NoSquare:
			unusable++
		}
		if p.CanCaptureEnPassant() != capture {
			t.Fatalf("%s: CanCaptureEnPassant %v, the generator %v", p.FEN(), !capture, capture)
		}
		q := *p
		q.ep = NoSquare
		if same := p.RepetitionKey() == q.RepetitionKey(); same == capture {
			t.Fatalf("%s: key %q; without its en-passant square %q", p.FEN(), p.RepetitionKey(), q.RepetitionKey())
		}
		if same := p.repKey() == q.repKey(); same == capture {
			t.Fatalf("%s: repKey and RepetitionKey disagree", p.FEN())
		}
	}
	if usable == 0 || unusable == 0 {
		t.Errorf("%d positions with an en-passant capture, %d with a square and none: the test needs both", usable, unusable)
	}
	t.Logf("%d positions with an en-passant capture, %d with a square and none", usable, unusable)
}

// TestCheckMoveAgreesWithGenerator: CheckMove accepts exactly the generated
// moves, trying every destination (and promotion) of every piece of the side
// to move.
func TestCheckMoveAgreesWithGenerator(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 40
	}
	for _, p := range randomPositions(t, n, 2) {
		legal := map[string]bool{}
		for _, m := range p.LegalMoves() {
			legal[m.String()] = true
		}
		accepted := 0
		for b := p.byColor[p.turn]; b != 0; {
			from := b.pop()
			for to := Square(0); to < 64; to++ {
				if to == from {
					continue
				}
				suffixes := []string{""}
				if p.board[from].Kind() == Pawn && (to.Rank() == 0 || to.Rank() == 7) {
					suffixes = []string{"", "q", "r", "b", "n"}
				}
				for _, suf := range suffixes {
					s := from.String() + to.String() + suf
					m, err := p.CheckMove(s)
					switch {
					case err == nil && !legal[s]:
						t.Fatalf("%s: CheckMove accepts %s, which the generator does not make", p.FEN(), s)
					case err == nil && m.String() != s:
						t.Fatalf("%s: CheckMove(%s) returns %s", p.FEN(), s, m)
					case err != nil && legal[s]:
						t.Fatalf("%s: CheckMove refuses generated %s: %v", p.FEN(), s, err)
					case err == nil:
						accepted++
					}
				}
			}
		}
		if accepted != len(legal) {
			t.Fatalf("%s: CheckMove accepted %d moves, the generator made %d", p.FEN(), accepted, len(legal))
		}
	}
}

// TestEnPassantChecksValid: an en-passant capture lifts two pawns from the
// board and may uncover two lines at once; the positions it makes, double
// checks included, stay valid. Boards are random around a pawn that just
// double-stepped next to an enemy pawn.
func TestEnPassantChecksValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	double := 0
	for tries := 0; tries < 200000 && double < 20; tries++ {
		p := randomBoard(rng)
		// White just played f2-f4 (file varies); Black's pawn beside it.
		f := rng.IntN(8)
		side := 1 - 2*rng.IntN(2)
		if f+side < 0 || f+side > 7 {
			continue
		}
		for _, s := range []Square{NewSquare(f, 3), NewSquare(f+side, 3), NewSquare(f, 2), NewSquare(f, 1)} {
			if p.board[s] != NoPiece {
				p.remove(s)
			}
		}
		if p.king[White] == NoSquare || p.king[Black] == NoSquare || p.pieces(White, King).count() != 1 || p.pieces(Black, King).count() != 1 {
			continue
		}
		p.put(NewSquare(f, 3), NewPiece(White, Pawn))
		p.put(NewSquare(f+side, 3), NewPiece(Black, Pawn))
		p.turn, p.ep, p.halfmove = Black, NewSquare(f, 2), 0
		if p.Validate() != nil {
			continue
		}
		for _, m := range p.LegalMoves() {
			if !m.IsEnPassant() {
				continue
			}
			q := *p
			q.Play(m)
			if q.checkers().count() == 2 {
				double++
			}
			if errs := q.Validate(); errs != nil {
				t.Fatalf("%s then %s gives %s: %v", p.FEN(), m, q.FEN(), Errors(errs))
			}
		}
	}
	if double == 0 {
		t.Fatal("no en-passant double check found; the test shows nothing")
	}
}
