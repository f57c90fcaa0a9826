package othello

import "testing"

// startPerft are the published counts of move paths from the start position
// (testdata/README.md names the sources): passes count as plies, an ended
// game as one path.
var startPerft = []uint64{4, 12, 56, 244, 1396, 8200, 55092, 390216}

func TestPerftStart(t *testing.T) {
	p := Startpos()
	for i, want := range startPerft {
		if got := p.Perft(i + 1); got != want {
			t.Errorf("perft(%d) = %d, want %d", i+1, got, want)
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
