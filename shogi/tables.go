package shogi

// Directions on the board as (rank delta, column delta), where the column runs
// in square-index order (from file 9 toward file 1). North is toward rank a,
// Black's forward direction. The eight king directions come first and
// opposite(d) = d^4 for them; the four knight jumps follow.
const (
	dirN = iota
	dirNE
	dirE
	dirSE
	dirS
	dirSW
	dirW
	dirNW
	dirKnightNE // Black knight jumps
	dirKnightNW
	dirKnightSW // White knight jumps (rotations of the two above)
	dirKnightSE
	numDirs
)

var dirDelta = [numDirs][2]int{
	dirN: {-1, 0}, dirNE: {-1, 1}, dirE: {0, 1}, dirSE: {1, 1},
	dirS: {1, 0}, dirSW: {1, -1}, dirW: {0, -1}, dirNW: {-1, -1},
	dirKnightNE: {-2, 1}, dirKnightNW: {-2, -1}, dirKnightSW: {2, -1}, dirKnightSE: {2, 1},
}

// opposite returns the direction rotated by 180 degrees: the same move as
// seen by the other color.
func opposite(d int) int {
	if d < 8 {
		return d ^ 4
	}
	return d ^ 2 // 8<->10, 9<->11
}

var (
	// neighbor[s][d] is the square one step from s in direction d, or NoSquare.
	neighbor [81][numDirs]Square
	// stepMask[p] has bit d set when piece p moves/attacks one step in direction d.
	stepMask [32]uint16
	// slideMask[p] has bit d set when piece p slides any distance in direction d.
	slideMask [32]uint16
	// stepDirs and slideDirs list the bits of the masks, for move generation.
	stepDirs  [32][]int8
	slideDirs [32][]int8
)

func init() {
	for s := 0; s < 81; s++ {
		r, c := s/9, s%9
		for d := 0; d < numDirs; d++ {
			nr, nc := r+dirDelta[d][0], c+dirDelta[d][1]
			if nr < 0 || nr > 8 || nc < 0 || nc > 8 {
				neighbor[s][d] = NoSquare
			} else {
				neighbor[s][d] = Square(nr*9 + nc)
			}
		}
	}

	bits := func(ds ...int) uint16 {
		var m uint16
		for _, d := range ds {
			m |= 1 << d
		}
		return m
	}
	gold := bits(dirN, dirNE, dirNW, dirE, dirW, dirS)
	diag := bits(dirNE, dirNW, dirSE, dirSW)
	orth := bits(dirN, dirE, dirS, dirW)
	// Black's moves; White's are the same rotated.
	steps := map[Kind]uint16{
		Pawn: bits(dirN), Knight: bits(dirKnightNE, dirKnightNW),
		Silver: bits(dirN, dirNE, dirNW, dirSE, dirSW), Gold: gold, King: diag | orth,
		ProPawn: gold, ProLance: gold, ProKnight: gold, ProSilver: gold,
		Horse: orth, Dragon: diag,
	}
	slides := map[Kind]uint16{
		Lance: bits(dirN), Bishop: diag, Rook: orth, Horse: diag, Dragon: orth,
	}
	for k := Pawn; k <= Dragon; k++ {
		for _, c := range []Color{Black, White} {
			p := NewPiece(c, k)
			for d := 0; d < numDirs; d++ {
				ad := d
				if c == White {
					ad = opposite(d)
				}
				if steps[k]&(1<<d) != 0 {
					stepMask[p] |= 1 << ad
					stepDirs[p] = append(stepDirs[p], int8(ad))
				}
				if slides[k]&(1<<d) != 0 {
					slideMask[p] |= 1 << ad
					slideDirs[p] = append(slideDirs[p], int8(ad))
				}
			}
		}
	}
}

// forward returns the direction a pawn of color c moves.
func forward(c Color) int {
	if c == Black {
		return dirN
	}
	return dirS
}
