package othello

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomPositions returns n reproducible positions of random games from the
// start, with every ply of each game, so that passes and ends are among them.
func randomPositions(n int, seed uint64) []*Position {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []*Position
	for len(out) < n {
		p := Startpos()
		for {
			q := *p
			out = append(out, &q)
			ms := p.LegalMoves()
			if len(ms) == 0 {
				break
			}
			p.do(ms[rng.IntN(len(ms))])
		}
	}
	return out
}

// TestProperties checks, on every position of many random games: discs and
// empty squares add up to 64; the position is valid; the move generator,
// IsLegal and CheckMove agree on every square and on pass; pass is legal
// exactly when the side has no square and the opponent has one; an ended
// game has no move and a result whose scores add up to 64; a move adds one
// disc and turns over at least one; the token, key and ofen read back.
func TestProperties(t *testing.T) {
	var sawPass, sawOver int
	for _, p := range randomPositions(4000, 1) {
		tok := p.Token()
		if n := p.Discs(Black) + p.Discs(White) + p.Empties(); n != 64 {
			t.Fatalf("%s: discs and empties add up to %d", tok, n)
		}
		if errs := p.Validate(); errs != nil {
			t.Fatalf("%s: %v", tok, Errors(errs))
		}
		legal := p.LegalMoves()
		for m := Move(0); m <= Pass; m++ {
			in := slices.Contains(legal, m)
			if p.IsLegal(m) != in {
				t.Fatalf("%s: IsLegal(%s) = %v, generator %v", tok, m, !in, in)
			}
			_, err := p.CheckMove(m.String())
			if (err == nil) != in {
				t.Fatalf("%s: CheckMove(%s) = %v, generator %v", tok, m, err, in)
			}
		}
		mine := legalSet(p.disc[p.turn], p.disc[p.turn^1])
		theirs := legalSet(p.disc[p.turn^1], p.disc[p.turn])
		if p.MustPass() != (mine == 0 && theirs != 0) || p.MustPass() != slices.Equal(legal, []Move{Pass}) {
			t.Fatalf("%s: MustPass %v, legal %v", tok, p.MustPass(), legal)
		}
		res, over := p.Outcome()
		if over != (len(legal) == 0) || over != p.IsOver() {
			t.Fatalf("%s: over %v with legal moves %v", tok, over, legal)
		}
		if over {
			sawOver++
			if res.Black+res.White != 64 || (res.Winner == BlackWins) != (res.BlackDiscs > res.WhiteDiscs) {
				t.Fatalf("%s: result %+v", tok, res)
			}
		}
		if p.MustPass() {
			sawPass++
		}
		for _, m := range legal {
			q := *p
			q.do(m)
			if m == Pass {
				if q.disc != p.disc {
					t.Fatalf("%s: pass changed the board", tok)
				}
				continue
			}
			if q.Discs(p.turn) < p.Discs(p.turn)+2 || q.Empties() != p.Empties()-1 {
				t.Fatalf("%s: %s took %d to %d discs", tok, m, p.Discs(p.turn), q.Discs(p.turn))
			}
			if q.MoveNumber() != p.MoveNumber()+1 || q.Turn() == p.Turn() {
				t.Fatalf("%s: %s did not hand the move over", tok, m)
			}
		}
		for _, s := range []string{tok, p.Key(), p.OFEN()} {
			q, err := ParseAny(s)
			if err != nil || q.disc != p.disc || q.turn != p.turn {
				t.Fatalf("ParseAny(%s) = %v, %v", s, q, err)
			}
		}
	}
	if sawPass == 0 || sawOver == 0 {
		t.Fatalf("random games showed %d passes and %d ends", sawPass, sawOver)
	}
}

// transpose reflects p in the a1–h8 diagonal, a symmetry of the rules.
func transpose(p *Position) *Position {
	q := &Position{turn: p.turn, moveNumber: p.moveNumber}
	for s := Square(0); s < 64; s++ {
		t := NewSquare(s.Rank(), s.File())
		for c := Black; c <= White; c++ {
			if p.disc[c]&(1<<uint(s)) != 0 {
				q.disc[c] |= 1 << uint(t)
			}
		}
	}
	return q
}

// TestTransposeSymmetry: the moves of the transposed position are the
// transposed moves. The UOI draft's naming is the USI-X naming transposed, so
// a square's UOI name is the USI-X name of its reflection.
func TestTransposeSymmetry(t *testing.T) {
	for _, p := range randomPositions(500, 2) {
		q := transpose(p)
		var want []string
		for _, m := range p.LegalMoves() {
			if m == Pass {
				want = append(want, "pass")
				continue
			}
			want = append(want, m.UOI()) // the reflection's USI-X name
		}
		got := q.LegalMoveStrings()
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: transposed moves %v, want %v", p.Token(), got, want)
		}
	}
}
