package chess

import (
	"math/bits"

	"github.com/usid/usid/internal/rules"
)

// Color is White or Black.
type Color uint8

const (
	White Color = 0
	Black Color = 1
)

// String returns "w" or "b", as FEN writes the side to move.
func (c Color) String() string {
	return rules.SideLetter(c == White)
}

// Kind is a kind of piece, without color.
type Kind uint8

const (
	NoKind Kind = iota
	Pawn
	Knight
	Bishop
	Rook
	Queen
	King
)

// kindLetters are the FEN letters of the kinds, in Kind order (upper case).
const kindLetters = " PNBRQK"

// Letter returns the upper-case FEN/SAN letter of k ('P' for a pawn).
func (k Kind) Letter() byte { return kindLetters[k] }

// Piece is a colored piece: the Kind in the low three bits, the Color in bit 3.
// NoPiece (zero) is an empty square.
type Piece uint8

const NoPiece Piece = 0

// NewPiece returns the piece of color c and kind k.
func NewPiece(c Color, k Kind) Piece { return Piece(k) | Piece(c)<<3 }

// Kind returns the piece's kind (NoKind for NoPiece).
func (p Piece) Kind() Kind { return Kind(p & 7) }

// Color returns the piece's color; meaningless for NoPiece.
func (p Piece) Color() Color { return Color(p >> 3) }

// Letter returns the FEN letter: upper case for White, lower for Black.
func (p Piece) Letter() byte {
	l := p.Kind().Letter()
	if p.Color() == Black {
		l += 'a' - 'A'
	}
	return l
}

// Square is a board square from a1 (0) to h8 (63): file + 8*rank, both from 0.
type Square int8

// NoSquare marks an absent square (no en-passant square, no castling rook).
const NoSquare Square = -1

// NewSquare returns the square of file and rank, both from 0 (a1 is 0, 0).
func NewSquare(file, rank int) Square { return Square(rank*8 + file) }

// File returns the file from 0 (a) to 7 (h).
func (s Square) File() int { return int(s) & 7 }

// Rank returns the rank from 0 (rank 1) to 7 (rank 8).
func (s Square) Rank() int { return int(s) >> 3 }

// String returns the square's name, such as "e4", or "-" for NoSquare.
func (s Square) String() string {
	if s == NoSquare {
		return "-"
	}
	return string([]byte{byte('a' + s.File()), byte('1' + s.Rank())})
}

// relativeRank returns s's rank from c's side: 0 is c's back rank.
func relativeRank(c Color, s Square) int {
	if c == White {
		return s.Rank()
	}
	return 7 - s.Rank()
}

// parseSquare reads a square name such as "e4".
func parseSquare(file, rank byte) (Square, bool) {
	if file < 'a' || file > 'h' || rank < '1' || rank > '8' {
		return NoSquare, false
	}
	return NewSquare(int(file-'a'), int(rank-'1')), true
}

// Bitboard is a set of squares: bit s is square s.
type Bitboard uint64

// bb returns the set of one square (the mask lets the compiler drop its
// check for shifts past 63).
func bb(s Square) Bitboard { return 1 << (uint(s) & 63) }

func (b Bitboard) has(s Square) bool { return b&bb(s) != 0 }

func (b Bitboard) count() int { return bits.OnesCount64(uint64(b)) }

// first returns the lowest square of a non-empty set.
func (b Bitboard) first() Square { return Square(bits.TrailingZeros64(uint64(b))) }

// last returns the highest square of a non-empty set.
func (b Bitboard) last() Square { return Square(63 - bits.LeadingZeros64(uint64(b))) }

// pop removes and returns the lowest square of a non-empty set.
func (b *Bitboard) pop() Square {
	s := b.first()
	*b &= *b - 1
	return s
}

const (
	fileA Bitboard = 0x0101010101010101
	fileH Bitboard = fileA << 7
	rank1 Bitboard = 0xff
	rank8 Bitboard = rank1 << 56
)

func rankBB(r int) Bitboard { return rank1 << (8 * uint(r)) }
func fileBB(f int) Bitboard { return fileA << uint(f) }
