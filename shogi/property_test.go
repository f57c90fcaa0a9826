package shogi

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// everyMoveShape lists every syntactically possible move: all board moves
// with and without promotion and all drops. Legality is up to a position.
func everyMoveShape() []Move {
	var ms []Move
	for from := Square(0); from < 81; from++ {
		for to := Square(0); to < 81; to++ {
			if from != to {
				ms = append(ms, Move{From: from, To: to}, Move{From: from, To: to, Promote: true})
			}
		}
	}
	for k := Pawn; k <= Gold; k++ {
		for to := Square(0); to < 81; to++ {
			ms = append(ms, Move{From: NoSquare, To: to, Drop: k})
		}
	}
	return ms
}

// checkGeneratorAgrees checks that the move generator and the single-move
// checker, written independently, agree on every possible move of p.
func checkGeneratorAgrees(t *testing.T, p *Position, shapes []Move) {
	t.Helper()
	legal := p.LegalMoves()
	seen := make(map[Move]bool, len(legal))
	for _, m := range legal {
		if seen[m] {
			t.Errorf("%s: LegalMoves lists %s twice", p.SFEN(), m)
		}
		seen[m] = true
	}
	for _, m := range shapes {
		if got := p.IsLegal(m); got != seen[m] {
			t.Errorf("%s: IsLegal(%s) = %v, but LegalMoves lists it: %v", p.SFEN(), m, got, seen[m])
		}
	}
}

func TestGeneratorAgreesWithChecker(t *testing.T) {
	shapes := everyMoveShape()
	var positions []*Position
	for _, r := range rulestest.ReadTSV(t, "games.tsv") {
		moves := strings.Fields(r[0])
		for i := 0; i < len(moves); i += 20 {
			p, errs := Load("startpos", moves[:i])
			if errs != nil {
				t.Fatal(Errors(errs))
			}
			positions = append(positions, p)
		}
	}
	for _, name := range []string{"perft-random.tsv", "perft-published.tsv"} {
		for _, r := range rulestest.ReadTSV(t, name) {
			positions = append(positions, mustParse(t, r[0]))
		}
	}
	// Random playouts reach drops, promotions and checks that games rarely show.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 12 {
		p := Startpos()
		for range 200 {
			ms := p.LegalMoves()
			if len(ms) == 0 {
				break
			}
			p.do(ms[rng.IntN(len(ms))])
			if rng.IntN(12) == 0 {
				q := *p
				positions = append(positions, &q)
			}
		}
	}
	for _, p := range positions {
		checkGeneratorAgrees(t, p, shapes)
	}
	t.Logf("checked %d positions × %d move shapes", len(positions), len(shapes))
}

// TestPlayAndTakeBack checks that do and undo restore a position exactly.
func TestPlayAndTakeBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := Startpos()
	for range 2000 {
		ms := p.LegalMoves()
		if len(ms) == 0 {
			p = Startpos()
			continue
		}
		before := *p
		for _, m := range ms {
			u := p.do(m)
			if errs := p.Validate(); errs != nil {
				t.Fatalf("%s after %s breaks the rules: %v", before.SFEN(), m, Errors(errs))
			}
			p.undo(m, u)
			if *p != before {
				t.Fatalf("%s: do/undo of %s gives %s", before.SFEN(), m, p.SFEN())
			}
		}
		if err := p.Play(ms[rng.IntN(len(ms))]); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(Startpos().LegalMoves(), Startpos().LegalMoves()) {
		t.Fatal("LegalMoves is not deterministic")
	}
}
