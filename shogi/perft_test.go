package shogi

import (
	"strconv"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// perftTestLimit keeps tests fast: deeper rows, with more leaves than this,
// are checked by BenchmarkPerftPublished instead.
const perftTestLimit = 20_000_000

type perftRow struct {
	sfen   string
	counts []uint64 // counts[i] is perft(i+1)
}

func perftRows(t testing.TB, name string) []perftRow {
	var rows []perftRow
	for _, r := range rulestest.ReadTSV(t, name) {
		row := perftRow{sfen: r[0]}
		for _, c := range r[1:] {
			n, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				t.Fatalf("%s: bad count %q", name, c)
			}
			row.counts = append(row.counts, n)
		}
		rows = append(rows, row)
	}
	return rows
}

func checkPerft(t testing.TB, rows []perftRow, keep func(uint64) bool) {
	t.Helper()
	for _, row := range rows {
		p, errs := Load(row.sfen, nil)
		if errs != nil {
			t.Fatalf("Load(%q): %v", row.sfen, Errors(errs))
		}
		for i, want := range row.counts {
			if !keep(want) {
				continue
			}
			if got := p.Perft(i + 1); got != want {
				t.Errorf("perft(%d) of %q = %d, want %d", i+1, row.sfen, got, want)
			}
		}
		if p.SFEN() != mustParse(t, row.sfen).SFEN() {
			t.Errorf("Perft changed the position %q", row.sfen)
		}
	}
}

func TestPerftPublished(t *testing.T) {
	checkPerft(t, perftRows(t, "perft-published.tsv"), func(n uint64) bool { return n <= perftTestLimit })
}

func TestPerftRandom(t *testing.T) {
	checkPerft(t, perftRows(t, "perft-random.tsv"), func(uint64) bool { return true })
}

// BenchmarkPerftPublished checks the rows too deep for tests.
func BenchmarkPerftPublished(b *testing.B) {
	rows := perftRows(b, "perft-published.tsv")
	for b.Loop() {
		checkPerft(b, rows, func(n uint64) bool { return n > perftTestLimit })
	}
}

func BenchmarkPerft5(b *testing.B) {
	p := Startpos()
	for b.Loop() {
		if n := p.Perft(5); n != 19861490 {
			b.Fatalf("perft(5) = %d", n)
		}
	}
}

func mustParse(t testing.TB, sfen string) *Position {
	t.Helper()
	p, err := ParseSFEN(sfen)
	if err != nil {
		t.Fatalf("ParseSFEN(%q): %v", sfen, err)
	}
	return p
}
