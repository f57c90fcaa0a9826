package chess

import (
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// TestFENCorpus loads every row of testdata/fens.tsv and wants exactly the
// codes the row names (or none, for "legal"), with messages.
func TestFENCorpus(t *testing.T) {
	for i, r := range rulestest.ReadTSV(t, "fens.tsv") {
		if len(r) != 4 {
			t.Fatalf("fens.tsv row %d has %d columns", i+1, len(r))
		}
		want, variant, pos, why := r[0], r[1], r[2], r[3]
		name := strings.ReplaceAll(want+"/"+why, " ", "_")
		t.Run(name, func(t *testing.T) {
			v := Standard
			if variant == "chess960" {
				v = Chess960
			}
			var got []string
			fen, moves, err := ParsePositionCommand(pos)
			if err != nil {
				got = append(got, string(err.(*Error).Code))
			} else {
				_, errs := Load(fen, moves, v)
				for _, e := range errs {
					if e.Message == "" {
						t.Errorf("%s: error without message", e.Code)
					}
					got = append(got, string(e.Code))
				}
			}
			if len(got) == 0 {
				got = []string{"legal"}
			}
			if w := strings.Split(want, ","); !slices.Equal(got, w) {
				t.Errorf("%s: got %v, want %v", pos, got, w)
			}
		})
	}
}

// TestFENRoundTrip: a parsed position prints as canonical FEN that parses
// back to the same position.
func TestFENRoundTrip(t *testing.T) {
	cases := []struct {
		in, out string
		v       Variant
	}{
		{StartFEN, StartFEN, Standard},
		{"4k3/8/8/8/8/8/8/4K3 w - -", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", Standard},
		{"4k3/8/8/8/8/8/8/R3K2R  w  HA  -  3  20", "4k3/8/8/8/8/8/8/R3K2R w KQ - 3 20", Standard},
		{"1r2k1r1/8/8/8/8/8/8/1R2K1R1 w BGbg - 0 1", "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", Chess960},
		{"rr2k1r1/8/8/8/8/8/8/RR2K1R1 w BGbg - 0 1", "rr2k1r1/8/8/8/8/8/8/RR2K1R1 w KBkb - 0 1", Chess960},
		{"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", Standard},
	}
	for _, c := range cases {
		p := mustLoad(t, c.in, c.v)
		if got := p.FEN(); got != c.out {
			t.Errorf("FEN of %q = %q, want %q", c.in, got, c.out)
		}
		q := mustLoad(t, p.FEN(), c.v)
		if *q != *p {
			t.Errorf("%q does not parse back to the same position", p.FEN())
		}
	}
}

func TestParsePositionCommand(t *testing.T) {
	cases := []struct {
		in    string
		fen   string
		moves []string
	}{
		{"startpos", "startpos", nil},
		{"position startpos moves e2e4 e7e5", "startpos", []string{"e2e4", "e7e5"}},
		{"fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1 moves e1e2", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", []string{"e1e2"}},
		{"fen 4k3/8/8/8/8/8/8/4K3 w - - moves e1e2", "4k3/8/8/8/8/8/8/4K3 w - -", []string{"e1e2"}},
		{"startpos moves", "startpos", []string{}},
	}
	for _, c := range cases {
		fen, moves, err := ParsePositionCommand(c.in)
		if err != nil || fen != c.fen || !slices.Equal(moves, c.moves) {
			t.Errorf("ParsePositionCommand(%q) = %q, %q, %v; want %q, %q", c.in, fen, moves, err, c.fen, c.moves)
		}
	}
}
