package chess

// Variant says which castling rules and notation a position follows.
type Variant uint8

const (
	// Standard chess: castling rights need the king on e1/e8 and the rook on
	// its corner; UCI writes castling as the king's two-square move (e1g1).
	Standard Variant = iota
	// Chess960 (Fischer random): the king anywhere between its rooks on the
	// back rank; FEN castling rights in X-FEN or Shredder-FEN letters; UCI
	// writes castling as the king taking its own rook (e1h1).
	Chess960
)

// String returns "standard" or "chess960".
func (v Variant) String() string {
	if v == Chess960 {
		return "chess960"
	}
	return "standard"
}

// Castling sides, indexes of Position.castle.
const (
	kingSide  = 0 // towards the h-file
	queenSide = 1 // towards the a-file
)

// MaxCounter bounds the FEN counters (halfmove clock and move number): at
// most 4 digits. Play saturates them there, so every position this package
// writes parses back.
const MaxCounter = 9999

// Position is a chess position: the board, the side to move, castling
// rights, the en-passant square and the two counters. The zero value is not
// useful; get one from ParseFEN, Startpos or Load. A Position is a plain value
// (no pointers): copy it to keep a snapshot.
type Position struct {
	board   [64]Piece
	byKind  [King + 1]Bitboard // index NoKind unused
	byColor [2]Bitboard
	king    [2]Square // NoSquare only in a position that breaks no_king
	turn    Color
	// castle[c][side] is the square of the rook c may castle with on that
	// side, or NoSquare without that right.
	castle   [2][2]Square
	ep       Square // the en-passant square, or NoSquare
	halfmove int    // plies since the last capture or pawn move
	fullmove int    // the move number, from 1, incremented after Black moves
	variant  Variant
}

// StartFEN is the standard starting position.
const StartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// Startpos returns the standard starting position.
func Startpos() *Position {
	p, err := ParseFEN(StartFEN, Standard)
	if err != nil {
		panic(err)
	}
	return p
}

// At returns the piece on square s.
func (p *Position) At(s Square) Piece { return p.board[s] }

// Turn returns the side to move.
func (p *Position) Turn() Color { return p.turn }

// Variant returns the rules the position follows.
func (p *Position) Variant() Variant { return p.variant }

// EnPassant returns the en-passant square, or NoSquare.
func (p *Position) EnPassant() Square { return p.ep }

// Halfmove returns the halfmove clock: plies since the last capture or pawn move.
func (p *Position) Halfmove() int { return p.halfmove }

// Fullmove returns the move number (from 1; it grows after Black's move).
func (p *Position) Fullmove() int { return p.fullmove }

// KingSquare returns c's king square (NoSquare if c has none, which only a
// position refused with no_king has).
func (p *Position) KingSquare(c Color) Square { return p.king[c] }

// CastlingRook returns the square of the rook c may castle with on the king
// side (kingSide true, towards h) or the queen side, or NoSquare.
func (p *Position) CastlingRook(c Color, kingSide bool) Square {
	if kingSide {
		return p.castle[c][0]
	}
	return p.castle[c][1]
}

func (p *Position) occupied() Bitboard { return p.byColor[White] | p.byColor[Black] }

func (p *Position) pieces(c Color, k Kind) Bitboard { return p.byColor[c] & p.byKind[k] }

func (p *Position) put(s Square, pc Piece) {
	p.board[s] = pc
	p.byKind[pc.Kind()] |= bb(s)
	p.byColor[pc.Color()] |= bb(s)
	if pc.Kind() == King {
		p.king[pc.Color()] = s
	}
}

func (p *Position) remove(s Square) {
	pc := p.board[s]
	p.board[s] = NoPiece
	p.byKind[pc.Kind()] &^= bb(s)
	p.byColor[pc.Color()] &^= bb(s)
}

// attackersTo returns the pieces of both colors that attack s, sliders seen
// through the occupancy occ.
func (p *Position) attackersTo(s Square, occ Bitboard) Bitboard {
	return pawnAttacks[Black][s]&p.pieces(White, Pawn) |
		pawnAttacks[White][s]&p.pieces(Black, Pawn) |
		knightAttacks[s]&p.byKind[Knight] |
		kingAttacks[s]&p.byKind[King] |
		bishopAttacks(s, occ)&(p.byKind[Bishop]|p.byKind[Queen]) |
		rookAttacks(s, occ)&(p.byKind[Rook]|p.byKind[Queen])
}

// attacked reports whether a piece of color by attacks s, sliders seen
// through occ.
func (p *Position) attacked(s Square, by Color, occ Bitboard) bool {
	them := p.byColor[by]
	return pawnAttacks[by^1][s]&p.byKind[Pawn]&them != 0 ||
		knightAttacks[s]&p.byKind[Knight]&them != 0 ||
		kingAttacks[s]&p.byKind[King]&them != 0 ||
		bishopAttacks(s, occ)&(p.byKind[Bishop]|p.byKind[Queen])&them != 0 ||
		rookAttacks(s, occ)&(p.byKind[Rook]|p.byKind[Queen])&them != 0
}

// checkers returns the pieces giving check to the side to move.
func (p *Position) checkers() Bitboard {
	k := p.king[p.turn]
	if k == NoSquare {
		return 0
	}
	return p.attackersTo(k, p.occupied()) & p.byColor[p.turn^1]
}

// InCheck reports whether the side to move's king is attacked.
func (p *Position) InCheck() bool { return p.checkers() != 0 }

// castlingTargets returns where the king and the rook of c stand after
// castling on side.
func castlingTargets(c Color, side int) (king, rook Square) {
	r := 0
	if c == Black {
		r = 7
	}
	if side == kingSide {
		return NewSquare(6, r), NewSquare(5, r)
	}
	return NewSquare(2, r), NewSquare(3, r)
}

// Play plays m, which must be legal in p (a move from LegalMoves, or one that
// CheckMove or ParseSAN accepted); anything else leaves p meaningless.
func (p *Position) Play(m Move) {
	us, them := p.turn, p.turn^1
	from, to := m.From(), m.To()
	pc := p.board[from]
	p.ep = NoSquare
	p.halfmove++
	switch m.flag() {
	case flagCastle:
		side := queenSide
		if to > from {
			side = kingSide
		}
		kTo, rTo := castlingTargets(us, side)
		rook := p.board[to]
		p.remove(from)
		p.remove(to)
		p.put(kTo, pc)
		p.put(rTo, rook)
		p.castle[us] = [2]Square{NoSquare, NoSquare}
	case flagEnPassant:
		capSq := NewSquare(to.File(), from.Rank())
		p.remove(capSq)
		p.remove(from)
		p.put(to, pc)
		p.halfmove = 0
	default:
		if cap := p.board[to]; cap != NoPiece {
			p.remove(to)
			p.halfmove = 0
			for side, r := range p.castle[them] {
				if r == to {
					p.castle[them][side] = NoSquare
				}
			}
		}
		p.remove(from)
		moved := pc.Kind()
		if k := m.Promotion(); k != NoKind {
			pc = NewPiece(us, k)
		}
		p.put(to, pc)
		switch moved {
		case Pawn:
			p.halfmove = 0
			if to-from == 16 || from-to == 16 {
				p.ep = (from + to) / 2
			}
		case King:
			p.castle[us] = [2]Square{NoSquare, NoSquare}
		}
		for side, r := range p.castle[us] {
			if r == from {
				p.castle[us][side] = NoSquare
			}
		}
	}
	if us == Black && p.fullmove < MaxCounter {
		p.fullmove++
	}
	if p.halfmove > MaxCounter {
		p.halfmove = MaxCounter
	}
	p.turn = them
}
