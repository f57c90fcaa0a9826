package chess

import (
	"strconv"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

type perftRow struct {
	name   string
	fen    string
	counts []uint64 // counts[i] is perft(i+1)
}

func perftRows(t testing.TB, file string) []perftRow {
	var rows []perftRow
	for _, r := range rulestest.ReadTSV(t, file) {
		row := perftRow{name: r[0], fen: r[1]}
		for _, c := range r[2:] {
			n, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				t.Fatalf("%s: bad count %q", file, c)
			}
			row.counts = append(row.counts, n)
		}
		rows = append(rows, row)
	}
	return rows
}

func mustLoad(t testing.TB, fen string, v Variant) *Position {
	t.Helper()
	p, errs := Load(fen, nil, v)
	if errs != nil {
		t.Fatalf("Load(%q): %v", fen, Errors(errs))
	}
	return p
}

// TestPerft checks every count of testdata/perft.tsv (published) and
// perft-random.tsv (positions of random games, counts agreeing with
// Stockfish's go perft).
func TestPerft(t *testing.T) {
	for _, row := range append(perftRows(t, "perft.tsv"), perftRows(t, "perft-random.tsv")...) {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			v := Standard
			if row.name[:3] == "960" {
				v = Chess960
			}
			p := mustLoad(t, row.fen, v)
			for i, want := range row.counts {
				if got := p.Perft(i + 1); got != want {
					t.Errorf("perft(%d) of %q = %d, want %d", i+1, row.fen, got, want)
				}
			}
			if p.FEN() != mustLoad(t, row.fen, v).FEN() {
				t.Errorf("Perft changed the position %q", row.fen)
			}
		})
	}
}
