package chess

// Move is a chess move: From, To, the promotion kind, and whether it castles
// or captures en passant. A castling move is stored as the king taking its
// own rook (To is the rook's square) in both variants; String writes it the
// way UCI wants for the move's variant. The zero Move is not a valid move.
type Move uint32

const (
	flagNormal    = 0
	flagCastle    = 1
	flagEnPassant = 2

	moveFromShift  = 0
	moveToShift    = 6
	movePromoShift = 12
	moveFlagShift  = 15
	move960Bit     = 1 << 17 // castling written king-takes-rook
)

func newMove(from, to Square, promo Kind, flag int) Move {
	return Move(uint32(from)<<moveFromShift | uint32(to)<<moveToShift | uint32(promo)<<movePromoShift | uint32(flag)<<moveFlagShift)
}

// From returns the square the moving piece (the king, for castling) leaves.
func (m Move) From() Square { return Square(m >> moveFromShift & 63) }

// To returns the destination square; for castling, the castling rook's square.
func (m Move) To() Square { return Square(m >> moveToShift & 63) }

// Promotion returns the kind a pawn promotes to, or NoKind.
func (m Move) Promotion() Kind { return Kind(m >> movePromoShift & 7) }

func (m Move) flag() int { return int(m >> moveFlagShift & 3) }

// IsCastling reports whether m castles.
func (m Move) IsCastling() bool { return m.flag() == flagCastle }

// IsEnPassant reports whether m captures en passant.
func (m Move) IsEnPassant() bool { return m.flag() == flagEnPassant }

// KingTo returns where the king lands when m castles, else To.
func (m Move) KingTo() Square {
	if !m.IsCastling() {
		return m.To()
	}
	r := m.From().Rank()
	if m.To() > m.From() {
		return NewSquare(6, r)
	}
	return NewSquare(2, r)
}

// String returns m in UCI long algebraic notation: "e2e4", "e7e8q"; castling
// as "e1g1" in standard chess and as the king taking its rook ("e1h1") in
// Chess960.
func (m Move) String() string {
	var b [5]byte
	return string(m.appendUCI(b[:0]))
}

func (m Move) appendUCI(b []byte) []byte {
	from, to := m.From(), m.To()
	if m.IsCastling() && m&move960Bit == 0 {
		to = m.KingTo()
	}
	b = append(b, byte('a'+from.File()), byte('1'+from.Rank()), byte('a'+to.File()), byte('1'+to.Rank()))
	if k := m.Promotion(); k != NoKind {
		b = append(b, k.Letter()+'a'-'A')
	}
	return b
}

// uciMove is a UCI move as written, before the position gives it meaning.
type uciMove struct {
	from, to Square
	promo    Kind
}

// parseUCI reads the syntax of a UCI move: two squares and an optional
// promotion letter (q, r, b or n, lower case as UCI writes it).
func parseUCI(s string) (uciMove, bool) {
	if len(s) != 4 && len(s) != 5 {
		return uciMove{}, false
	}
	from, ok1 := parseSquare(s[0], s[1])
	to, ok2 := parseSquare(s[2], s[3])
	if !ok1 || !ok2 || from == to {
		return uciMove{}, false
	}
	u := uciMove{from: from, to: to}
	if len(s) == 5 {
		switch s[4] {
		case 'q':
			u.promo = Queen
		case 'r':
			u.promo = Rook
		case 'b':
			u.promo = Bishop
		case 'n':
			u.promo = Knight
		default:
			return uciMove{}, false
		}
	}
	return u, true
}
