package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/usid/usid/othello"
)

// startPerft are the published counts from the start (Aart Bik, "Perft
// for Reversi"), also package othello's.
var startPerft = []uint64{4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288}

func start() Board { return boardOf(othello.Startpos()) }

func TestPerftStart(t *testing.T) {
	for d := 1; d <= len(startPerft); d++ {
		if got := Perft(start(), d); got != startPerft[d-1] {
			t.Errorf("perft(%d) = %d, want %d", d, got, startPerft[d-1])
		}
	}
}

// randomGame plays random legal moves from the start (passes included)
// and calls visit on every position on the way, its othello.Position too.
func randomGame(rng *rand.Rand, visit func(b Board, p *othello.Position)) {
	p := othello.Startpos()
	for {
		visit(boardOf(p), p)
		moves := p.LegalMoves()
		if len(moves) == 0 {
			return
		}
		if err := p.Play(moves[rng.IntN(len(moves))]); err != nil {
			panic(err)
		}
	}
}

// TestMovesAgreeWithOthello checks the move generator and the flips against
// package othello's rules on every position of random games.
func TestMovesAgreeWithOthello(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	positions := 0
	for range 300 {
		randomGame(rng, func(b Board, p *othello.Position) {
			positions++
			var want uint64
			for _, m := range p.LegalMoves() {
				if m != othello.Pass {
					want |= 1 << uint(m)
				}
			}
			if got := Moves(b.P, b.O); got != want {
				t.Fatalf("%s: moves %x, want %x", p.Token(), got, want)
			}
			if (want == 0) != (p.MustPass() || p.IsOver()) {
				t.Fatalf("%s: no move but othello says otherwise", p.Token())
			}
			for mv := want; mv != 0; mv &= mv - 1 {
				sq := trailing(mv)
				q := *p
				if err := q.Play(othello.Move(sq)); err != nil {
					t.Fatal(err)
				}
				if got, wantB := b.Play(sq, Flips(b.P, b.O, sq)), boardOf(&q); got != wantB {
					t.Fatalf("%s: %s gives %+v, want %+v", p.Token(), othello.Square(sq), got, wantB)
				}
			}
			if r, over := p.Outcome(); over {
				mine, theirs := r.Black, r.White
				if p.Turn() == othello.White {
					mine, theirs = theirs, mine
				}
				if got := b.FinalScore(); got != mine-theirs {
					t.Fatalf("%s: final score %d, want %d", p.Token(), got, mine-theirs)
				}
			}
		})
	}
	if positions < 15000 {
		t.Fatalf("only %d positions", positions)
	}
}

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

func BenchmarkPerft(b *testing.B) {
	for b.Loop() {
		if n := Perft(start(), 9); n != 3005288 {
			b.Fatal(n)
		}
	}
}

// BenchmarkPerftOthelloPackage is BenchmarkPerft on package othello's
// move generator, for a side-by-side ratio.
func BenchmarkPerftOthelloPackage(b *testing.B) {
	p := othello.Startpos()
	for b.Loop() {
		if n := p.Perft(9); n != 3005288 {
			b.Fatal(n)
		}
	}
}
