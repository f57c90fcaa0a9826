package chess

import (
	"math/rand/v2"
	"testing"
)

// TestMagicAttacks compares the magic lookups with walking the rays on
// random occupancies of every square.
func TestMagicAttacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for s := Square(0); s < 64; s++ {
		for i := 0; i < 200; i++ {
			occ := Bitboard(rng.Uint64() & rng.Uint64())
			var rook, bishop Bitboard
			for _, d := range []int{dirN, dirE, dirS, dirW} {
				rook |= slide(d, s, occ)
			}
			for _, d := range []int{dirNE, dirNW, dirSE, dirSW} {
				bishop |= slide(d, s, occ)
			}
			if got := rookAttacks(s, occ); got != rook {
				t.Fatalf("rook on %s, occupancy %#x: %#x, want %#x", s, occ, got, rook)
			}
			if got := bishopAttacks(s, occ); got != bishop {
				t.Fatalf("bishop on %s, occupancy %#x: %#x, want %#x", s, occ, got, bishop)
			}
		}
	}
}
