package othello

import "testing"

// startPerft are the published counts of move paths from the start position
// at depths 1–11 (Aart Bik, "Perft for Reversi", testdata/README.md): passes
// count as plies, an ended game as one path.
var startPerft = []uint64{4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800}

// perftTestDepth keeps tests fast: deeper counts are checked by
// BenchmarkPerftPublished.
const perftTestDepth = 8

func TestPerftStart(t *testing.T) {
	p := Startpos()
	for d := 1; d <= perftTestDepth; d++ {
		if got := p.Perft(d); got != startPerft[d-1] {
			t.Errorf("perft(%d) = %d, want %d", d, got, startPerft[d-1])
		}
	}
	if p.Token() != StartToken {
		t.Errorf("Perft changed the start position: %s", p.Token())
	}
}

// BenchmarkPerft counts perft(8) from the start: 390,216 paths.
func BenchmarkPerft(b *testing.B) {
	p := Startpos()
	for b.Loop() {
		if n := p.Perft(8); n != 390216 {
			b.Fatalf("perft(8) = %d", n)
		}
	}
}

// BenchmarkPerftPublished checks the published counts too deep for tests
// (depths 9–11: passes from depth 9 on, ended games from depth 11 on).
func BenchmarkPerftPublished(b *testing.B) {
	p := Startpos()
	for b.Loop() {
		for d := perftTestDepth + 1; d <= len(startPerft); d++ {
			if got := p.Perft(d); got != startPerft[d-1] {
				b.Errorf("perft(%d) = %d, want %d", d, got, startPerft[d-1])
			}
		}
	}
}
