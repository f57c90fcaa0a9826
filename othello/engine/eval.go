package engine

import "math/bits"

// The evaluation scores a position for the side to move in hundredths of a
// disc (100 = one disc of final margin, roughly). Its terms are those an
// othello player weighs, with hand-set weights that move from the opening
// (60 empties) to the end (0 empties): see Weights. It is not trained: the
// weights were set by hand from the usual advice (corners and stable discs
// win, mobility matters most in the middle game, X and C squares beside an
// empty corner lose it), then checked, not tuned, by the matches of
// BENCHMARKS.md.

// Weights are the evaluation's weights at the start of the game (Open) and
// at its end (End), in hundredths of a disc per unit of each term; the
// evaluation interpolates them by the number of empty squares.
type Weights struct {
	Corner, XSquare, CSquare, Mobility, Potential, Frontier, Stable, Edge, Disc, Parity int
}

// The weights used (see the comment above).
var (
	openWeights = Weights{Corner: 900, XSquare: -350, CSquare: -120, Mobility: 90, Potential: 25, Frontier: -20, Stable: 120, Edge: 15, Disc: -5, Parity: 0}
	endWeights  = Weights{Corner: 450, XSquare: -150, CSquare: -40, Mobility: 60, Potential: 10, Frontier: -10, Stable: 150, Edge: 30, Disc: 100, Parity: 200}
)

const (
	corners uint64 = 1<<0 | 1<<7 | 1<<56 | 1<<63
	// border is the board's outer ring, edges the same without corners.
	border uint64 = 0xff818181818181ff
	edges         = border &^ corners
)

// xOf and cOf are, for each corner (in the order a1, h1, a8, h8), its X
// square and its two C squares.
var cornerSq = [4]int{0, 7, 56, 63}
var xOf = [4]uint64{1 << 9, 1 << 14, 1 << 49, 1 << 54}
var cOf = [4]uint64{1<<1 | 1<<8, 1<<6 | 1<<15, 1<<48 | 1<<57, 1<<55 | 1<<62}

func count(x uint64) int { return bits.OnesCount64(x) }

// Shifts by one square in each direction, dropping what leaves the board.
func east(x uint64) uint64  { return (x << 1) & notA }
func west(x uint64) uint64  { return (x >> 1) & notH }
func south(x uint64) uint64 { return x << 8 }
func north(x uint64) uint64 { return x >> 8 }
func se(x uint64) uint64    { return (x << 9) & notA }
func nw(x uint64) uint64    { return (x >> 9) & notH }
func sw(x uint64) uint64    { return (x << 7) & notH }
func ne(x uint64) uint64    { return (x >> 7) & notA }

// neighbours returns the squares next to x's in any of the eight directions.
func neighbours(x uint64) uint64 {
	return east(x) | west(x) | south(x) | north(x) | se(x) | nw(x) | sw(x) | ne(x)
}

// Evaluate scores b for the side to move, in hundredths of a disc.
func Evaluate(b Board) int {
	return evaluate(b, Moves(b.P, b.O), Moves(b.O, b.P))
}

func evaluate(b Board, myMoves, oppMoves uint64) int {
	empty := b.Empties()
	n := count(empty)
	w := phase(n)
	score := 0

	score += w.Corner * (count(b.P&corners) - count(b.O&corners))
	for i, c := range cornerSq {
		if empty&(1<<uint(c)) == 0 {
			continue
		}
		score += w.XSquare * (count(b.P&xOf[i]) - count(b.O&xOf[i]))
		score += w.CSquare * (count(b.P&cOf[i]) - count(b.O&cOf[i]))
	}

	// Mobility, with a side that must pass counted as a heavy loss of it.
	mp, mo := count(myMoves), count(oppMoves)
	score += w.Mobility * (mp - mo)
	if mp == 0 {
		score -= 3 * w.Mobility
	}
	if mo == 0 {
		score += 3 * w.Mobility
	}

	// Potential mobility: empty squares next to the opponent's discs are
	// where one may play later; frontier discs (next to an empty square) are
	// the ones that give the opponent moves.
	score += w.Potential * (count(neighbours(b.O)&empty) - count(neighbours(b.P)&empty))
	ne := neighbours(empty)
	score += w.Frontier * (count(b.P&ne) - count(b.O&ne))

	if (b.P|b.O)&corners != 0 {
		sp, so := stable(b.P, b.O), stable(b.O, b.P)
		score += w.Stable * (count(sp) - count(so))
	}
	score += w.Edge * (count(b.P&edges) - count(b.O&edges))
	score += w.Disc * (count(b.P) - count(b.O)) / 10

	// Parity: with an odd number of empty squares the side to move plays
	// the last one (if nobody passes).
	if n&1 == 1 {
		score += w.Parity
	} else {
		score -= w.Parity
	}
	return score
}

// phase interpolates the weights for n empty squares.
func phase(n int) Weights {
	if n > 60 {
		n = 60
	}
	mix := func(a, b int) int { return (a*n + b*(60-n)) / 60 }
	o, e := openWeights, endWeights
	return Weights{
		Corner: mix(o.Corner, e.Corner), XSquare: mix(o.XSquare, e.XSquare), CSquare: mix(o.CSquare, e.CSquare),
		Mobility: mix(o.Mobility, e.Mobility), Potential: mix(o.Potential, e.Potential), Frontier: mix(o.Frontier, e.Frontier),
		Stable: mix(o.Stable, e.Stable), Edge: mix(o.Edge, e.Edge), Disc: mix(o.Disc, e.Disc), Parity: mix(o.Parity, e.Parity),
	}
}

// Squares with no neighbour in a direction: the board's edges.
const (
	rank1 uint64 = 0xff
	rank8 uint64 = 0xff << 56
	fileA uint64 = 0x0101010101010101
	fileH uint64 = fileA << 7
)

// fullLines returns, for the four line directions (horizontal, vertical,
// and the two diagonals), the squares whose whole line is occupied.
func fullLines(occ uint64) (h, v, d1, d2 uint64) {
	for r := 0; r < 8; r++ {
		if row := rank1 << (8 * r); occ&row == row {
			h |= row
		}
	}
	for f := 0; f < 8; f++ {
		if col := fileA << f; occ&col == col {
			v |= col
		}
	}
	d1 = reach(occ, rank8|fileH, nw) & reach(occ, rank1|fileA, se)
	d2 = reach(occ, rank8|fileA, ne) & reach(occ, rank1|fileH, sw)
	return
}

// reach returns the occupied squares from which the occupied squares run
// without a gap to the board's edge in one direction: edge are the squares
// with no neighbour that way, back the shift the other way.
func reach(occ, edge uint64, back func(uint64) uint64) uint64 {
	r := occ & edge
	for i := 0; i < 7; i++ {
		r |= occ & back(r)
	}
	return r
}

// stable returns the discs of p that can never be turned over, found as
// the fixed point of: a disc is stable when, along each of the four lines
// through it, its line is full or one of its two neighbours on the line is
// off the board or a stable disc of its own colour. This finds every disc
// anchored to a corner through edges and filled lines, a lower bound of
// the truly stable discs.
func stable(p, o uint64) uint64 {
	h, v, d1, d2 := fullLines(p | o)
	h |= fileA | fileH
	v |= rank1 | rank8
	d1 |= border
	d2 |= border
	var s uint64
	for {
		n := p & (h | east(s) | west(s)) & (v | north(s) | south(s)) &
			(d1 | se(s) | nw(s)) & (d2 | sw(s) | ne(s))
		if n == s {
			return s
		}
		s = n
	}
}
