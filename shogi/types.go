package shogi

import "github.com/usid/usid/internal/rules"

// Color is a side: Black (sente, moves first, "b" in SFEN) or White (gote, "w").
type Color uint8

const (
	Black Color = 0
	White Color = 1
)

// String returns "b" or "w", as SFEN writes the side to move.
func (c Color) String() string {
	return rules.SideLetter(c == White)
}

// Kind is a piece type without color. The unpromoted kinds that can be held in
// hand come first (Pawn..Gold), then King, then the promoted kinds, each
// Promoted+8 of its base kind, so that promotion is a single addition.
type Kind uint8

const (
	NoKind    Kind = 0
	Pawn      Kind = 1
	Lance     Kind = 2
	Knight    Kind = 3
	Silver    Kind = 4
	Bishop    Kind = 5
	Rook      Kind = 6
	Gold      Kind = 7
	King      Kind = 8
	ProPawn   Kind = 9  // tokin
	ProLance  Kind = 10 // narikyo
	ProKnight Kind = 11 // narikei
	ProSilver Kind = 12 // narigin
	Horse     Kind = 13 // promoted bishop (uma)
	Dragon    Kind = 14 // promoted rook (ryu)

	promoteOffset = 8
)

// CanPromote reports whether a piece of kind k may promote.
func (k Kind) CanPromote() bool { return k >= Pawn && k <= Rook }

// Promoted returns the promoted kind of k; k must satisfy CanPromote.
func (k Kind) Promoted() Kind { return k + promoteOffset }

// IsPromoted reports whether k is a promoted kind.
func (k Kind) IsPromoted() bool { return k > King }

// Base returns the unpromoted kind of k (the kind it becomes when captured).
func (k Kind) Base() Kind {
	if k > King {
		return k - promoteOffset
	}
	return k
}

// kindLetters maps a base kind to its SFEN letter (uppercase).
var kindLetters = [...]byte{Pawn: 'P', Lance: 'L', Knight: 'N', Silver: 'S', Bishop: 'B', Rook: 'R', Gold: 'G', King: 'K'}

// Letter returns the uppercase SFEN letter of k's base kind ('P' for ProPawn too).
func (k Kind) Letter() byte {
	b := k.Base()
	if b == NoKind || int(b) >= len(kindLetters) {
		return '?'
	}
	return kindLetters[b]
}

// kindOfLetter maps an uppercase SFEN letter to its kind, NoKind if unknown.
func kindOfLetter(c byte) Kind {
	switch c {
	case 'P':
		return Pawn
	case 'L':
		return Lance
	case 'N':
		return Knight
	case 'S':
		return Silver
	case 'B':
		return Bishop
	case 'R':
		return Rook
	case 'G':
		return Gold
	case 'K':
		return King
	}
	return NoKind
}

// handKinds lists the kinds a hand can hold, in canonical SFEN order (R B G S N L P).
var handKinds = [...]Kind{Rook, Bishop, Gold, Silver, Knight, Lance, Pawn}

// printKinds is handKinds plus King, which SFEN prints only for positions
// that break the rules, so that printing a parsed position loses nothing.
var printKinds = [...]Kind{Rook, Bishop, Gold, Silver, Knight, Lance, Pawn, King}

// maxPieces is how many pieces of each base kind exist in a set.
var maxPieces = [...]int{Pawn: 18, Lance: 4, Knight: 4, Silver: 4, Bishop: 2, Rook: 2, Gold: 4, King: 2}

// Piece is a colored piece on a square; 0 is an empty square. The low four bits
// hold the Kind and bit 4 the Color.
type Piece uint8

// NoPiece is an empty square.
const NoPiece Piece = 0

// NewPiece returns the piece of kind k and color c.
func NewPiece(c Color, k Kind) Piece { return Piece(k) | Piece(c)<<4 }

// Kind returns the piece's kind.
func (p Piece) Kind() Kind { return Kind(p & 15) }

// Color returns the piece's color; meaningless for NoPiece.
func (p Piece) Color() Color { return Color(p >> 4) }

// String returns the piece in SFEN ("+B", "p"), or "." for an empty square.
func (p Piece) String() string {
	if p == NoPiece {
		return "."
	}
	k := p.Kind()
	c := k.Letter()
	if p.Color() == White {
		c += 'a' - 'A'
	}
	if k.IsPromoted() {
		return "+" + string(c)
	}
	return string(c)
}

// Square is a board square, 0..80, numbered in SFEN reading order: rank a
// (index 0..8) to rank i, and within a rank from file 9 to file 1. So 9a is
// 0, 1a is 8, 5e is 40 and 1i is 80.
type Square int8

// NoSquare marks an absent square (for example a side without a king).
const NoSquare Square = -1

// NewSquare returns the square of file 1..9 and rank 1..9 (rank 1 is "a").
func NewSquare(file, rank int) Square { return Square((rank-1)*9 + (9 - file)) }

// File returns the square's file, 1..9.
func (s Square) File() int { return 9 - int(s)%9 }

// Rank returns the square's rank, 1..9 (1 is "a", Black's far side).
func (s Square) Rank() int { return int(s)/9 + 1 }

// String returns the square in USI coordinates, such as "7g".
func (s Square) String() string {
	if s < 0 || s > 80 {
		return "--"
	}
	return string([]byte{byte('0' + s.File()), byte('a' + s.Rank() - 1)})
}

// inZone reports whether a square lies in c's promotion zone (the three far ranks).
func inZone(c Color, s Square) bool {
	if c == Black {
		return s < 27
	}
	return s >= 54
}

// deadSquare reports whether a piece of kind k and color c standing on s
// could never move again, which makes the square illegal for it unpromoted.
func deadSquare(c Color, k Kind, s Square) bool {
	var last int // how many far ranks are dead for k
	switch k {
	case Pawn, Lance:
		last = 1
	case Knight:
		last = 2
	default:
		return false
	}
	if c == Black {
		return int(s) < 9*last
	}
	return int(s) >= 81-9*last
}
