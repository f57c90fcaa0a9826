package chess

import (
	"strconv"
	"strings"

	"github.com/usid/usid/internal/rules"
)

// ParseFEN parses a FEN position for the given variant. It checks syntax and
// reads the castling letters; whether the position obeys the rules is
// Validate's job (Load does both).
//
// Accepted: the six FEN fields, or the first four alone (EPD style, as
// positions are often pasted); the counters then default to "0 1". Castling
// letters are KQkq, or in Chess960 also X-FEN and Shredder-FEN file letters
// (A-H, a-h: the file of the castling rook; K and Q name the outermost rook on
// that side of the king). In standard chess a file letter is accepted for the
// corner rooks only (H, A, h, a mean K, Q, k, q). Fields are separated by
// whitespace; anything else is refused with a fen_* code.
func ParseFEN(s string, v Variant) (*Position, error) {
	f := strings.Fields(s)
	if len(f) != 6 && len(f) != 4 {
		return nil, newError(CodeFENFields, "a FEN has 6 fields (board, side, castling, en passant, halfmove clock, move number) or the first 4; got %d", len(f))
	}
	p := &Position{variant: v, king: [2]Square{NoSquare, NoSquare}, ep: NoSquare,
		castle: [2][2]Square{{NoSquare, NoSquare}, {NoSquare, NoSquare}}}
	if err := p.parseBoard(f[0]); err != nil {
		return nil, err
	}
	switch f[1] {
	case "w":
		p.turn = White
	case "b":
		p.turn = Black
	default:
		return nil, newError(CodeFENSide, "side to move %q is not w or b", clip(f[1]))
	}
	if err := p.parseCastling(f[2]); err != nil {
		return nil, err
	}
	if f[3] != "-" {
		sq, ok := Square(NoSquare), false
		if len(f[3]) == 2 {
			sq, ok = parseSquare(f[3][0], f[3][1])
		}
		if !ok {
			return nil, newError(CodeFENEnPassant, "en-passant field %q is not - or a square", clip(f[3]))
		}
		p.ep = sq
	}
	p.fullmove = 1
	if len(f) == 6 {
		var ok bool
		if p.halfmove, ok = parseCounter(f[4]); !ok {
			return nil, newError(CodeFENHalfmove, "halfmove clock %q is not a count of at most 4 digits", clip(f[4]))
		}
		if p.fullmove, ok = parseCounter(f[5]); !ok || p.fullmove == 0 {
			return nil, newError(CodeFENFullmove, "move number %q is not a positive count of at most 4 digits", clip(f[5]))
		}
	}
	return p, nil
}

// clip shortens a bad field quoted in a message, so a message stays small
// whatever the input.
func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// parseCounter reads 0..MaxCounter written without sign or leading zeros.
func parseCounter(s string) (int, bool) {
	if len(s) == 0 || len(s) > 4 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func (p *Position) parseBoard(s string) error {
	rank, file := 7, 0
	prevDigit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/':
			if file != 8 {
				return newError(CodeFENRankWidth, "rank %d describes %d squares, not 8", rank+1, file)
			}
			if rank == 0 {
				return newError(CodeFENRanks, "the board has more than 8 ranks")
			}
			rank, file, prevDigit = rank-1, 0, false
			continue
		case c >= '1' && c <= '8':
			if prevDigit {
				return newError(CodeFENRankWidth, "rank %d has two digits in a row", rank+1)
			}
			file += int(c - '0')
			prevDigit = true
		default:
			k, col := NoKind, White
			switch {
			case c >= 'A' && c <= 'Z':
				k = kindOfLetter(c)
			case c >= 'a' && c <= 'z':
				k, col = kindOfLetter(c-('a'-'A')), Black
			}
			if k == NoKind {
				return newError(CodeFENPiece, "%q is not a piece letter (PNBRQK, pnbrqk) or a digit 1-8", string(rune(c)))
			}
			if file >= 8 {
				return newError(CodeFENRankWidth, "rank %d describes more than 8 squares", rank+1)
			}
			sq := NewSquare(file, rank)
			if k == King && p.king[col] == NoSquare || k != King {
				p.put(sq, NewPiece(col, k))
			} else {
				p.putSecondKing(sq, NewPiece(col, k))
			}
			file++
			prevDigit = false
		}
		if file > 8 {
			return newError(CodeFENRankWidth, "rank %d describes more than 8 squares", rank+1)
		}
	}
	if file != 8 {
		return newError(CodeFENRankWidth, "rank %d describes %d squares, not 8", rank+1, file)
	}
	if rank != 0 {
		return newError(CodeFENRanks, "the board has %d ranks, not 8", 8-rank)
	}
	return nil
}

// putSecondKing places an extra king without moving the king square, so a
// position with two kings of a side still names its first one (Validate
// refuses it with two_kings).
func (p *Position) putSecondKing(s Square, pc Piece) {
	k := p.king[pc.Color()]
	p.put(s, pc)
	p.king[pc.Color()] = k
}

// parseCastling reads the castling field into castle. A letter names a rook:
// K/Q (k/q) the h-/a-file rook in standard chess, the outermost rook on
// that side of the king in Chess960; a file letter that rook directly. A
// letter whose side cannot be told (no king of that color on its back rank)
// or whose rook does not exist is a castling_rights error here already,
// since the position could not even hold it.
func (p *Position) parseCastling(s string) error {
	if s == "-" {
		return nil
	}
	if len(s) > 4 {
		return newError(CodeFENCastling, "castling field %q has more than 4 letters", clip(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		col, up := White, c
		if c >= 'a' && c <= 'z' {
			col, up = Black, c-('a'-'A')
		}
		if !(up == 'K' || up == 'Q' || (up >= 'A' && up <= 'H')) || strings.IndexByte(s[:i], c) >= 0 {
			return newError(CodeFENCastling, "castling field %q: %q is not K, Q, a file letter, or is repeated", clip(s), string(rune(c)))
		}
		back := 0
		if col == Black {
			back = 7
		}
		ksq := p.king[col]
		if ksq == NoSquare || ksq.Rank() != back || p.pieces(col, King).count() != 1 {
			return newError(CodeCastlingRights, "castling right %q, but %s has no single king on its back rank", string(rune(c)), colorName(col))
		}
		var rook Square = NoSquare
		switch {
		case up == 'K' || up == 'Q':
			dir, corner := 1, 7
			if up == 'Q' {
				dir, corner = -1, 0
			}
			if p.variant == Standard {
				rook = NewSquare(corner, back)
				break
			}
			for f := ksq.File() + dir; f >= 0 && f < 8; f += dir {
				if sq := NewSquare(f, back); p.board[sq] == NewPiece(col, Rook) {
					rook = sq // keep going: the outermost rook counts
				}
			}
			if rook == NoSquare {
				return newError(CodeCastlingRights, "castling right %q, but %s has no rook on that side of its king", string(rune(c)), colorName(col))
			}
		default:
			rook = NewSquare(int(up-'A'), back)
		}
		side := kingSide
		switch {
		case rook.File() < ksq.File():
			side = queenSide
		case rook.File() == ksq.File():
			return newError(CodeCastlingRights, "castling right %q names the king's own file", string(rune(c)))
		}
		if p.castle[col][side] != NoSquare {
			return newError(CodeFENCastling, "castling field %q gives %s two rights on one side", clip(s), colorName(col))
		}
		p.castle[col][side] = rook
	}
	return nil
}

// kindOfLetter returns the kind of an upper-case piece letter, or NoKind.
func kindOfLetter(c byte) Kind {
	if i := strings.IndexByte(kindLetters[1:], c); i >= 0 {
		return Kind(i + 1)
	}
	return NoKind
}

func colorName(c Color) string { return rules.SideName(c == White) }

// FEN returns the position in FEN, six fields. Castling is written KQkq
// where that names the rook (the corner rook in standard chess, the
// outermost rook on that side in Chess960, i.e. X-FEN), else with the rook's
// file letter (Shredder-FEN style).
func (p *Position) FEN() string {
	b := make([]byte, 0, 90)
	for r := 7; r >= 0; r-- {
		empty := 0
		for f := 0; f < 8; f++ {
			pc := p.board[NewSquare(f, r)]
			if pc == NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b = append(b, byte('0'+empty))
				empty = 0
			}
			b = append(b, pc.Letter())
		}
		if empty > 0 {
			b = append(b, byte('0'+empty))
		}
		if r > 0 {
			b = append(b, '/')
		}
	}
	b = append(b, ' ')
	b = append(b, p.turn.String()...)
	b = append(b, ' ')
	n := len(b)
	for _, c := range [2]Color{White, Black} {
		for side, rsq := range p.castle[c] {
			if rsq != NoSquare {
				b = append(b, p.castlingLetter(c, side, rsq))
			}
		}
	}
	if len(b) == n {
		b = append(b, '-')
	}
	b = append(b, ' ')
	b = append(b, p.ep.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(p.halfmove), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(p.fullmove), 10)
	return string(b)
}

// castlingLetter is the letter FEN writes for c's right to castle with the
// rook on rsq.
func (p *Position) castlingLetter(c Color, side int, rsq Square) byte {
	letter := byte('K')
	if side == queenSide {
		letter = 'Q'
	}
	plain := false
	if p.variant == Standard {
		plain = rsq.File() == 7 && side == kingSide || rsq.File() == 0 && side == queenSide
	} else {
		// X-FEN: K/Q when no other rook of c stands further out on that side.
		plain = p.board[rsq] == NewPiece(c, Rook)
		dir := 1
		if side == queenSide {
			dir = -1
		}
		for f := rsq.File() + dir; f >= 0 && f < 8; f += dir {
			if p.board[NewSquare(f, rsq.Rank())] == NewPiece(c, Rook) {
				plain = false
			}
		}
	}
	if !plain {
		letter = byte('A' + rsq.File())
	}
	if c == Black {
		letter += 'a' - 'A'
	}
	return letter
}

// ParsePositionCommand splits a UCI position ("[position] startpos [moves
// ...]" or "[position] fen <fen> [moves ...]") into the FEN ("startpos" for
// the start position) and the moves. It checks the shape only; Load checks
// the rest.
func ParsePositionCommand(s string) (fen string, moves []string, err error) {
	startpos, fields, moves, e := rules.SplitPosition(s, "fen")
	switch {
	case e != nil:
		return "", nil, e
	case startpos:
		return "startpos", moves, nil
	case len(fields) != 4 && len(fields) != 6:
		return "", nil, newError(CodeFENFields, "a FEN has 6 fields (board, side, castling, en passant, halfmove clock, move number) or the first 4; got %d", len(fields))
	}
	return strings.Join(fields, " "), moves, nil
}
