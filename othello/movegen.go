package othello

import "math/bits"

// legalSet returns the squares where the side owning own may put a disc: an
// empty square from which a line of opp's discs runs, in one of the eight
// directions, to one of own's discs. Each line direction is filled both ways
// at once (see fill); a move flips at most six discs in a line.
func legalSet(own, opp uint64) uint64 {
	o := opp & inner
	return (fill(own, o, 1) | fill(own, opp, 8) | fill(own, o, 7) | fill(own, o, 9)) &^ (own | opp)
}

// LegalSquares returns the squares where the side owning the discs own may
// put a disc against the discs opp (bit i is square i, a1 = bit 0): the
// bitboard form of LegalMoves, for a search with boards of its own
// (usid's othello engine).
func LegalSquares(own, opp uint64) uint64 { return legalSet(own, opp) }

// fill returns the squares one step beyond a line of m's discs that starts
// next to a disc of own, in the directions +d and −d. Doubling steps (pre
// marks the discs of m whose neighbour at −d is in m too) reach the six discs
// in three rounds after the first two single steps. m must leave out the a
// and h files for the shifts that change the file (1, 7, 9), so that no line
// wraps round the board's edge.
func fill(own, m uint64, d uint) uint64 {
	f1 := m & (own << d)
	f2 := m & (own >> d)
	f1 |= m & (f1 << d)
	f2 |= m & (f2 >> d)
	pre1 := m & (m << d)
	pre2 := pre1 >> d
	f1 |= pre1 & (f1 << (2 * d))
	f2 |= pre2 & (f2 >> (2 * d))
	f1 |= pre1 & (f1 << (2 * d))
	f2 |= pre2 & (f2 >> (2 * d))
	return f1<<d | f2>>d
}

// flipsOf returns the discs of opp that a disc of own's side put on s turns
// over (none when s flips nothing; s itself is not checked to be empty).
func flipsOf(own, opp uint64, s Square) uint64 {
	from := uint64(1) << uint(s)
	o := opp & inner
	return flipsUp(own, o, from, 1) | flipsDown(own, o, from, 1) |
		flipsUp(own, opp, from, 8) | flipsDown(own, opp, from, 8) |
		flipsUp(own, o, from, 7) | flipsDown(own, o, from, 7) |
		flipsUp(own, o, from, 9) | flipsDown(own, o, from, 9)
}

// flipsUp walks from towards h8 in steps of d over m's discs and returns
// them if a disc of own ends the line.
func flipsUp(own, m, from uint64, d uint) uint64 {
	var line uint64
	x := from << d
	for x&m != 0 {
		line |= x
		x <<= d
	}
	if x&own != 0 {
		return line
	}
	return 0
}

// flipsDown is flipsUp towards a1.
func flipsDown(own, m, from uint64, d uint) uint64 {
	var line uint64
	x := from >> d
	for x&m != 0 {
		line |= x
		x >>= d
	}
	if x&own != 0 {
		return line
	}
	return 0
}

// do plays m, a legal move of p, without checking it.
func (p *Position) do(m Move) {
	if m != Pass {
		us, them := p.turn, p.turn^1
		f := flipsOf(p.disc[us], p.disc[them], Square(m))
		p.disc[us] |= f | 1<<uint(m)
		p.disc[them] &^= f
	}
	p.turn ^= 1
	if p.moveNumber < MaxMoveNumber { // stays where a token can write it
		p.moveNumber++
	}
}

// appendLegal appends the legal moves of p in square order: its squares,
// or Pass alone when it has none and the opponent has one, or nothing when
// the game is over.
func (p *Position) appendLegal(buf []Move) []Move {
	own, opp := p.disc[p.turn], p.disc[p.turn^1]
	set := legalSet(own, opp)
	if set == 0 {
		if legalSet(opp, own) != 0 {
			buf = append(buf, Pass)
		}
		return buf
	}
	for set != 0 {
		buf = append(buf, Move(bits.TrailingZeros64(set)))
		set &= set - 1
	}
	return buf
}

// Perft counts the move paths of depth plies from p. A pass is a ply like a
// square; a game that ends before depth is one path (a leaf), as in the
// published counts (4, 12, 56, 244, 1396, 8200, 55092, 390216 from the start).
func (p *Position) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	return perft(p.disc[p.turn], p.disc[p.turn^1], depth)
}

// perft counts with bulk counting: at the last ply the moves are counted,
// not played.
func perft(own, opp uint64, depth int) uint64 {
	set := legalSet(own, opp)
	if set == 0 {
		if legalSet(opp, own) == 0 {
			return 1 // the game is over: a leaf
		}
		if depth == 1 {
			return 1
		}
		return perft(opp, own, depth-1)
	}
	if depth == 1 {
		return uint64(popcount(set))
	}
	var n uint64
	for set != 0 {
		s := Square(bits.TrailingZeros64(set))
		set &= set - 1
		f := flipsOf(own, opp, s)
		n += perft(opp&^f, own|f|1<<uint(s), depth-1)
	}
	return n
}
