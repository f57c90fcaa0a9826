package shogigame

import (
	"strings"
	"testing"

	"github.com/usid/usid/shogi"
)

// playOut plays moves from sfen and returns the history and whether and
// how the last position ended the game by repetition.
func playOut(t *testing.T, sfen string, moves []string) (rep bool, checker int, plies int) {
	t.Helper()
	p, errs := shogi.Load(sfen, nil)
	if errs != nil {
		t.Fatalf("load %s: %v", sfen, errs[0])
	}
	first := p.Turn()
	mover := func(i int) shogi.Color { return first ^ shogi.Color((i-1)&1) }
	h := newHistory(p)
	for i, s := range moves {
		m, err := p.CheckMove(s)
		if err != nil {
			t.Fatalf("move %d %s: %v", i, s, err)
		}
		p.Play(m)
		h.add(p)
		if rep, checker = h.repetition(mover); rep {
			return rep, checker, i + 1
		}
	}
	return false, noColor, len(moves)
}

func TestRepetition(t *testing.T) {
	// Kings walking back and forth: the start comes again after 4, 8 and
	// 12 plies, a draw at the fourth occurrence.
	walk := strings.Fields(strings.Repeat("5i5h 5a5b 5h5i 5b5a ", 4))
	if rep, checker, n := playOut(t, "startpos", walk); !rep || checker != noColor || n != 12 {
		t.Errorf("kings walking: repetition %v, checker %d at ply %d; want a draw at ply 12", rep, checker, n)
	}
	// Three occurrences are no 千日手.
	if rep, _, _ := playOut(t, "startpos", walk[:11]); rep {
		t.Errorf("three occurrences ended the game")
	}
	// Black's rook checks with every move: Black loses.
	checks := strings.Fields(strings.Repeat("5i4i 4a5a 4i5i 5a4a ", 4))
	if rep, checker, n := playOut(t, "5k3/9/9/9/9/9/9/9/K3R4 b - 1", checks); !rep || checker != int(shogi.Black) || n != 12 {
		t.Errorf("perpetual check: repetition %v, checker %d at ply %d; want Black (%d) at ply 12", rep, checker, n, shogi.Black)
	}
	// Quiet moves by Black inside the repetition make it a draw again.
	mixed := strings.Fields("9i9h 4a3a 9h9i 3a4a " + strings.Repeat("5i4i 4a5a 4i5i 5a4a ", 2))
	if rep, checker, _ := playOut(t, "5k3/9/9/9/9/9/9/9/K3R4 b - 1", mixed); !rep || checker != noColor {
		t.Errorf("checks with a quiet move between: repetition %v, checker %d; want a draw", rep, checker)
	}
}

func TestDeclaration(t *testing.T) {
	tests := []struct {
		sfen   string
		side   shogi.Color
		ok     bool
		points int
		why    string
	}{
		{"+L+NSG1GS+N+L/4K4/PPPPPPPPP/9/9/9/9/9/4k4 b RBP 1", shogi.Black, true, 28, ""},
		{"+L+NSG1GS+N+L/4K4/PPPPPPPPP/9/9/9/9/9/4k4 b RB 1", shogi.Black, false, 27, "too_few_points"},
		// White needs 27: the same material, mirrored.
		{"4K4/9/9/9/9/9/ppppppppp/4k4/+l+nsg1gs+n+l w rb 1", shogi.White, true, 27, ""},
		{"+L+NSG1GS+N+L/4K4/PPPPPPPPP/9/9/9/9/9/4k4 w RBP 1", shogi.Black, false, 0, "not_to_move"},
		{"+L+NSG1GS+N+L/9/PPPPPPPPP/4K4/9/9/9/9/4k4 b RBP 1", shogi.Black, false, 0, "king_not_in_camp"},
		{"4K4/9/9/9/9/9/9/9/4k4 b RBGSNLP 1", shogi.Black, false, 0, "too_few_pieces"},
	}
	for _, tt := range tests {
		p, errs := shogi.Load(tt.sfen, nil)
		if errs != nil {
			t.Fatalf("load %s: %v", tt.sfen, errs[0])
		}
		ok, points, why := declarationPoints(p, tt.side)
		if ok != tt.ok || why != tt.why || (tt.points > 0 && points != tt.points) {
			t.Errorf("%s: declaration %v, %d points, %q; want %v, %d, %q", tt.sfen, ok, points, why, tt.ok, tt.points, tt.why)
		}
	}
}
