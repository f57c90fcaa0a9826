package chess

// Precomputed attack tables, filled once at package init (a few
// milliseconds; nothing is random, so every run builds the same tables).

// The eight directions: the first four point up the board (towards higher
// square numbers), the last four down; sliding attacks use that split to
// find the nearest blocker with one bit scan.
const (
	dirN = iota
	dirE
	dirNE
	dirNW
	dirS
	dirW
	dirSW
	dirSE
	numDirs
)

var (
	dirFile = [numDirs]int{0, 1, 1, -1, 0, -1, -1, 1}
	dirRank = [numDirs]int{1, 0, 1, 1, -1, 0, -1, -1}

	knightAttacks [64]Bitboard
	kingAttacks   [64]Bitboard
	pawnAttacks   [2][64]Bitboard // the squares a pawn of that color on s attacks
	rays          [numDirs][64]Bitboard
	// between[a][b]: the squares strictly between a and b when they share a
	// line, else empty. line[a][b]: the whole line through both, else empty.
	between [64][64]Bitboard
	line    [64][64]Bitboard
)

func init() {
	onBoard := func(f, r int) bool { return f >= 0 && f < 8 && r >= 0 && r < 8 }
	for s := Square(0); s < 64; s++ {
		f, r := s.File(), s.Rank()
		for _, d := range [8][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}} {
			if onBoard(f+d[0], r+d[1]) {
				knightAttacks[s] |= bb(NewSquare(f+d[0], r+d[1]))
			}
		}
		for d := 0; d < numDirs; d++ {
			if onBoard(f+dirFile[d], r+dirRank[d]) {
				kingAttacks[s] |= bb(NewSquare(f+dirFile[d], r+dirRank[d]))
			}
			for i := 1; onBoard(f+i*dirFile[d], r+i*dirRank[d]); i++ {
				rays[d][s] |= bb(NewSquare(f+i*dirFile[d], r+i*dirRank[d]))
			}
		}
		for _, df := range []int{-1, 1} {
			if onBoard(f+df, r+1) {
				pawnAttacks[White][s] |= bb(NewSquare(f+df, r+1))
			}
			if onBoard(f+df, r-1) {
				pawnAttacks[Black][s] |= bb(NewSquare(f+df, r-1))
			}
		}
	}
	for a := Square(0); a < 64; a++ {
		for d := 0; d < numDirs; d++ {
			opp := (d + 4) % numDirs
			for b := rays[d][a]; b != 0; {
				t := b.pop()
				between[a][t] = rays[d][a] &^ rays[d][t] &^ bb(t)
				line[a][t] = rays[d][a] | rays[opp][a] | bb(a)
			}
		}
	}
	initMagics()
}

// slide returns the squares a slider on s reaches in direction d, up to and
// including the first occupied square. The magic tables are built with it.
func slide(d int, s Square, occ Bitboard) Bitboard {
	r := rays[d][s]
	if blockers := r & occ; blockers != 0 {
		if d < dirS {
			return r &^ rays[d][blockers.first()]
		}
		return r &^ rays[d][blockers.last()]
	}
	return r
}

// attacksFrom returns the squares a piece of kind k and color c on s attacks.
func attacksFrom(k Kind, c Color, s Square, occ Bitboard) Bitboard {
	switch k {
	case Pawn:
		return pawnAttacks[c][s]
	case Knight:
		return knightAttacks[s]
	case Bishop:
		return bishopAttacks(s, occ)
	case Rook:
		return rookAttacks(s, occ)
	case Queen:
		return bishopAttacks(s, occ) | rookAttacks(s, occ)
	case King:
		return kingAttacks[s]
	}
	return 0
}
