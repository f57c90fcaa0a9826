package othello

import "math/bits"

// Color is a side: Black (X, moves first) or White (O).
type Color uint8

const (
	Black Color = 0
	White Color = 1
)

// Letter returns "B" or "W", as the position token writes the side to move.
func (c Color) Letter() string { return [...]string{"B", "W"}[c&1] }

// String returns "Black" or "White".
func (c Color) String() string { return [...]string{"Black", "White"}[c&1] }

// Cell is what a square holds.
type Cell uint8

const (
	Empty     Cell = iota
	BlackDisc      // X
	WhiteDisc      // O in the USI-X token, 0 (zero) in the UOI ofen
)

// Square is a square of the board: file a–h left to right, rank 1–8 top to
// bottom, a1 (0) top left, h1 (7) top right, a2 (8) below a1, h8 (63). The
// position token lists the cells in this order.
type Square int8

// NoSquare is no square at all.
const NoSquare Square = -1

// NewSquare returns the square on file (0 = a) and rank (0 = 1); both 0..7.
func NewSquare(file, rank int) Square { return Square(rank*8 + file) }

// File returns 0 for file a ... 7 for file h.
func (s Square) File() int { return int(s) & 7 }

// Rank returns 0 for rank 1 (the top row) ... 7 for rank 8.
func (s Square) Rank() int { return int(s) >> 3 }

// String returns the USI-X name, such as "d3".
func (s Square) String() string {
	if s < 0 || s > 63 {
		return "-"
	}
	return string([]byte{'a' + byte(s.File()), '1' + byte(s.Rank())})
}

// UOI returns the square's name in the UOI draft, whose letter is the row
// and digit the column: USI-X d3 (file d, rank 3) is UOI c4.
func (s Square) UOI() string {
	if s < 0 || s > 63 {
		return "-"
	}
	return string([]byte{'a' + byte(s.Rank()), '1' + byte(s.File())})
}

// ParseSquare reads a USI-X square name: a lower-case file letter a–h and a
// rank digit 1–8.
func ParseSquare(s string) (Square, bool) {
	if len(s) != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8' {
		return NoSquare, false
	}
	return NewSquare(int(s[0]-'a'), int(s[1]-'1')), true
}

// ParseUOISquare reads a UOI square name (letter = row a–h, digit = column
// 1–8) and returns the square it names.
func ParseUOISquare(s string) (Square, bool) {
	if len(s) != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8' {
		return NoSquare, false
	}
	return NewSquare(int(s[1]-'1'), int(s[0]-'a')), true
}

// UOIToUSIX converts a UOI move ("c4", "pass") to USI-X ("d3", "pass").
func UOIToUSIX(move string) (string, bool) {
	if move == "pass" {
		return move, true
	}
	s, ok := ParseUOISquare(move)
	if !ok {
		return "", false
	}
	return s.String(), true
}

// USIXToUOI converts a USI-X move ("d3", "pass") to UOI ("c4", "pass").
func USIXToUOI(move string) (string, bool) {
	if move == "pass" {
		return move, true
	}
	s, ok := ParseSquare(move)
	if !ok {
		return "", false
	}
	return s.UOI(), true
}

// Move is a move: a square (0..63) to put a disc on, or Pass.
type Move uint8

// Pass is the move of a side that has no square while its opponent has one.
const Pass Move = 64

// MaxMoves bounds the number of legal moves of any position (60 empty
// squares at most; the move generator needs no more room).
const MaxMoves = 64

// SquareMove returns the move that puts a disc on s.
func SquareMove(s Square) Move { return Move(s) }

// Square returns the move's square, or NoSquare for Pass.
func (m Move) Square() Square {
	if m >= Pass {
		return NoSquare
	}
	return Square(m)
}

// String returns the move in USI-X notation: "d3" or "pass".
func (m Move) String() string {
	if m == Pass {
		return "pass"
	}
	return Square(m).String()
}

// UOI returns the move in the UOI draft's notation: "c4" for d3, or "pass".
func (m Move) UOI() string {
	if m == Pass {
		return "pass"
	}
	return Square(m).UOI()
}

// Bitboard sets: bit i is square i (a1 = bit 0, h8 = bit 63).
const (
	notFileA uint64 = 0xfefefefefefefefe
	notFileH uint64 = 0x7f7f7f7f7f7f7f7f
	inner    uint64 = notFileA & notFileH
	centre   uint64 = 1<<27 | 1<<28 | 1<<35 | 1<<36 // d4 e4 d5 e5
)

func popcount(b uint64) int { return bits.OnesCount64(b) }
