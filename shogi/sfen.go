package shogi

import (
	"strconv"
	"strings"

	"github.com/usid/usid/internal/rules"
)

// isSpace reports whether c separates tokens; USI allows arbitrary white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// fields splits s on white space into at most len(dst) fields without
// allocating; n is the number of fields s really has (it may exceed len(dst)).
func fields(s string, dst []string) (n int) {
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return n
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if n < len(dst) {
			dst[n] = s[i:j]
		}
		n++
		i = j
	}
}

// ParseSFEN parses an SFEN string, or the word "startpos". It checks syntax
// only: the result may still break the rules (two kings, nifu, ...), which
// Validate reports. Errors are *Error with one of the sfen_* codes.
func ParseSFEN(s string) (*Position, error) {
	p := new(Position)
	if err := p.parseSFEN(s); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Position) parseSFEN(s string) *Error {
	var f [4]string
	n := fields(s, f[:])
	if n == 1 && f[0] == "startpos" {
		n = fields(StartSFEN, f[:])
	}
	if n < 3 || n > 4 {
		return newError(CodeSFENFields, "an SFEN has 3 or 4 fields (board, side to move, hands, optional move count), got %d", n)
	}
	if err := p.parseBoard(f[0]); err != nil {
		return err
	}
	switch f[1] {
	case "b":
		p.turn = Black
	case "w":
		p.turn = White
	default:
		return newError(CodeSFENSide, "the side to move is %q, want \"b\" or \"w\"", clip(f[1]))
	}
	if err := p.parseHands(f[2]); err != nil {
		return err
	}
	p.moveNumber = 1
	if n == 4 {
		v, err := strconv.Atoi(f[3])
		if err != nil || v < 1 || v > 1<<30 || f[3][0] < '0' || f[3][0] > '9' {
			return newError(CodeSFENMoveNumber, "the move count is %q, want a positive integer", clip(f[3]))
		}
		p.moveNumber = v
	}
	return nil
}

func (p *Position) parseBoard(b string) *Error {
	p.king = [2]Square{NoSquare, NoSquare}
	rank, col := 0, 0
	promoted := false
	endRank := func() *Error {
		if col != 9 {
			return newError(CodeSFENRankWidth, "rank %c describes %d squares, want 9", 'a'+rank, col)
		}
		return nil
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if promoted && (c == '+' || c == '/' || (c >= '0' && c <= '9')) {
			return newError(CodeSFENPromotion, "'+' must stand right before a piece letter (rank %c)", 'a'+rank)
		}
		switch {
		case c == '/':
			if err := endRank(); err != nil {
				return err
			}
			rank, col = rank+1, 0
			if rank > 8 {
				return newError(CodeSFENRanks, "the board has more than 9 ranks")
			}
		case c >= '1' && c <= '9':
			col += int(c - '0')
			if col > 9 {
				return newError(CodeSFENRankWidth, "rank %c describes more than 9 squares", 'a'+rank)
			}
		case c == '+':
			promoted = true
		default:
			color := Black
			if c >= 'a' && c <= 'z' {
				color, c = White, c-('a'-'A')
			}
			k := kindOfLetter(c)
			if k == NoKind {
				return newError(CodeSFENPiece, "%q is not a piece letter (PLNSGBRK, lowercase for White)", b[i])
			}
			if promoted {
				if !k.CanPromote() {
					return newError(CodeSFENPromotion, "%q cannot be promoted", "+"+string(b[i]))
				}
				k, promoted = k.Promoted(), false
			}
			if col >= 9 {
				return newError(CodeSFENRankWidth, "rank %c describes more than 9 squares", 'a'+rank)
			}
			sq := Square(rank*9 + col)
			p.board[sq] = NewPiece(color, k)
			if k == King {
				p.king[color] = sq // a second king is reported by Validate
			}
			col++
		}
	}
	if promoted {
		return newError(CodeSFENPromotion, "the board ends with '+'")
	}
	if rank != 8 {
		return newError(CodeSFENRanks, "the board has %d ranks, want 9", rank+1)
	}
	return endRank()
}

func (p *Position) parseHands(h string) *Error {
	if h == "-" {
		return nil
	}
	for i := 0; i < len(h); {
		count := 1
		if h[i] >= '0' && h[i] <= '9' {
			j := i
			for j < len(h) && h[j] >= '0' && h[j] <= '9' {
				j++
			}
			if h[i] == '0' || j-i > 2 {
				return newError(CodeSFENHand, "hand count %q: want a number from 1 to 99 (18 pawns at most)", clip(h[i:j]))
			}
			count, _ = strconv.Atoi(h[i:j])
			i = j
			if i == len(h) {
				return newError(CodeSFENHand, "hand count %d is not followed by a piece letter", count)
			}
		}
		c := h[i]
		color := Black
		if c >= 'a' && c <= 'z' {
			color, c = White, c-('a'-'A')
		}
		k := kindOfLetter(c)
		if k == NoKind {
			return newError(CodeSFENHand, "%q in the hands field is not a piece letter (or \"-\" for empty hands)", h[i])
		}
		// A letter may repeat ("pppp" is four pawns, as some published SFENs write).
		total := int(p.hand[color][k]) + count
		if total > 99 {
			return newError(CodeSFENHand, "%s holds more than 99 of %q", colorName(color), h[i])
		}
		p.hand[color][k] = uint8(total) // a king here is reported by Validate
		i++
	}
	return nil
}

func colorName(c Color) string { return rules.SideName(c == White) }

// SFEN returns the position in canonical SFEN: hands in R B G S N L P order,
// Black's first, "-" for empty hands, and the move count.
func (p *Position) SFEN() string {
	b := make([]byte, 0, 96)
	return string(p.AppendSFEN(b))
}

// AppendSFEN appends the canonical SFEN of p to b.
func (p *Position) AppendSFEN(b []byte) []byte {
	for r := 0; r < 9; r++ {
		if r > 0 {
			b = append(b, '/')
		}
		empty := 0
		for c := 0; c < 9; c++ {
			pc := p.board[r*9+c]
			if pc == NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b = append(b, byte('0'+empty))
				empty = 0
			}
			k := pc.Kind()
			if k.IsPromoted() {
				b = append(b, '+')
			}
			l := k.Letter()
			if pc.Color() == White {
				l += 'a' - 'A'
			}
			b = append(b, l)
		}
		if empty > 0 {
			b = append(b, byte('0'+empty))
		}
	}
	b = append(b, ' ', p.turn.String()[0], ' ')
	any := false
	for _, c := range []Color{Black, White} {
		// A king in hand breaks the rules, but printing it keeps ParseSFEN and
		// SFEN inverse for every parsed position.
		for _, k := range printKinds {
			n := p.hand[c][k]
			if n == 0 {
				continue
			}
			any = true
			if n > 1 {
				b = strconv.AppendInt(b, int64(n), 10)
			}
			l := k.Letter()
			if c == White {
				l += 'a' - 'A'
			}
			b = append(b, l)
		}
	}
	if !any {
		b = append(b, '-')
	}
	b = append(b, ' ')
	return strconv.AppendInt(b, int64(p.moveNumber), 10)
}

// ParsePositionCommand splits a position in USI syntax, "startpos [moves
// m1 m2 ...]" or "sfen <sfen> [moves ...]" (a leading "position" is allowed),
// into the SFEN (or "startpos") and the move list. It checks only this frame;
// Load checks the SFEN and the moves.
func ParsePositionCommand(s string) (sfen string, moves []string, err error) {
	startpos, fields, moves, e := rules.SplitPosition(s, "sfen")
	switch {
	case e != nil:
		return "", nil, e
	case startpos:
		return "startpos", moves, nil
	case len(fields) < 3 || len(fields) > 4:
		return "", nil, newError(CodeSFENFields, "an SFEN has 3 or 4 fields (board, side to move, hands, optional move count), got %d", len(fields))
	}
	return strings.Join(fields, " "), moves, nil
}
