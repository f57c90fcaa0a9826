package engine

import (
	"math/bits"

	"github.com/usid/usid/othello"
)

// Board is a position as the search sees it: the discs of the side to move
// (P) and of its opponent (O), bit i being square i (a1 = 0, h1 = 7, h8 =
// 63), as package othello numbers them. Whose colour each is, the search
// does not need to know.
type Board struct{ P, O uint64 }

const (
	notA  uint64 = 0xfefefefefefefefe // every file but a
	notH  uint64 = 0x7f7f7f7f7f7f7f7f // every file but h
	inner        = notA & notH
)

// Moves returns the squares where the side owning p may put a disc
// against o: package othello's generator (all eight directions at once by
// shift-fills over o's discs, the a and h files masked where a line would
// wrap round the edge).
func Moves(p, o uint64) uint64 { return othello.LegalSquares(p, o) }

// Flips returns the discs of o that a disc of p put on square sq turns over
// (0 when it flips nothing). Each direction grows a run of o's discs from sq
// and keeps it only if one of p's discs closes it.
func Flips(p, o uint64, sq int) uint64 {
	x := uint64(1) << uint(sq)
	m := o & inner
	return flipUp(p, m, x, 1) | flipDown(p, m, x, 1) |
		flipUp(p, o, x, 8) | flipDown(p, o, x, 8) |
		flipUp(p, m, x, 7) | flipDown(p, m, x, 7) |
		flipUp(p, m, x, 9) | flipDown(p, m, x, 9)
}

func flipUp(p, m, x uint64, d uint) uint64 {
	f := m & (x << d)
	if f == 0 {
		return 0
	}
	f |= m & (f << d)
	f |= m & (f << d)
	f |= m & (f << d)
	f |= m & (f << d)
	f |= m & (f << d)
	if p&(f<<d) == 0 {
		return 0
	}
	return f
}

func flipDown(p, m, x uint64, d uint) uint64 {
	f := m & (x >> d)
	if f == 0 {
		return 0
	}
	f |= m & (f >> d)
	f |= m & (f >> d)
	f |= m & (f >> d)
	f |= m & (f >> d)
	f |= m & (f >> d)
	if p&(f>>d) == 0 {
		return 0
	}
	return f
}

// Play returns the board after the side to move puts a disc on sq, which
// flips f (Flips), seen from the new side to move.
func (b Board) Play(sq int, f uint64) Board {
	return Board{P: b.O &^ f, O: b.P | f | 1<<uint(sq)}
}

// Pass returns the board with the other side to move.
func (b Board) Pass() Board { return Board{P: b.O, O: b.P} }

// Empties returns the empty squares.
func (b Board) Empties() uint64 { return ^(b.P | b.O) }

// NumEmpties returns the number of empty squares.
func (b Board) NumEmpties() int { return 64 - bits.OnesCount64(b.P|b.O) }

// FinalScore is the margin of the side to move in an ended game, by the
// World Othello Federation's rule: the empty squares go to the winner.
func (b Board) FinalScore() int {
	p, o := bits.OnesCount64(b.P), bits.OnesCount64(b.O)
	switch e := 64 - p - o; {
	case p > o:
		return p - o + e
	case p < o:
		return p - o - e
	}
	return 0
}

// Perft counts the move paths of depth plies, a pass being a ply and an
// ended game a single path (the published counting), with bulk counting
// at the last ply.
func Perft(b Board, depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if Moves(b.O, b.P) == 0 {
			return 1
		}
		if depth == 1 {
			return 1
		}
		return Perft(b.Pass(), depth-1)
	}
	if depth == 1 {
		return uint64(bits.OnesCount64(mv))
	}
	var n uint64
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		n += Perft(b.Play(sq, Flips(b.P, b.O, sq)), depth-1)
	}
	return n
}
