package othello

import (
	"strconv"
	"strings"

	"github.com/usid/usid/internal/rules"
)

// Position is an othello position: the discs of each side, the side to move
// and the move number. The zero value is not useful; get one from
// ParsePosition, ParseOFEN, ParseAny, Startpos or Load. A Position is a plain
// value (no pointers inside): copy it to keep a snapshot.
type Position struct {
	disc       [2]uint64 // disc[Black], disc[White]: bit i is square i
	turn       Color
	moveNumber int
}

// StartToken is the start position as a USI-X position token: d4 and e5
// white, e4 and d5 black, Black to move, move 1.
const StartToken = "---------------------------OX------XO---------------------------B1"

// MaxMoveNumber is the largest move number a token may carry (four digits).
const MaxMoveNumber = 9999

// Startpos returns the start position.
func Startpos() *Position {
	return &Position{disc: [2]uint64{1<<28 | 1<<35, 1<<27 | 1<<36}, turn: Black, moveNumber: 1}
}

// At returns what square s holds.
func (p *Position) At(s Square) Cell {
	if s < 0 || s > 63 {
		return Empty
	}
	bit := uint64(1) << uint(s)
	switch {
	case p.disc[Black]&bit != 0:
		return BlackDisc
	case p.disc[White]&bit != 0:
		return WhiteDisc
	}
	return Empty
}

// Turn returns the side to move.
func (p *Position) Turn() Color { return p.turn }

// WhiteToMove reports whether White is to move.
func (p *Position) WhiteToMove() bool { return p.turn == White }

// SideLetter returns "b" or "w", the side to move as usid's verdicts write
// it for every game (rules.SideLetter); the token writes "B" or "W".
func (p *Position) SideLetter() string { return rules.SideLetter(p.turn == White) }

// MoveNumber returns the move number: 1 at the start, one more after each
// move, a pass included, up to MaxMoveNumber (where it stays, so that the
// token still reads back).
func (p *Position) MoveNumber() int { return p.moveNumber }

// Discs returns how many discs side c has on the board.
func (p *Position) Discs(c Color) int { return popcount(p.disc[c&1]) }

// Empties returns the number of empty squares.
func (p *Position) Empties() int { return 64 - popcount(p.disc[Black]|p.disc[White]) }

// Token returns the USI-X position token: 64 cells from a1 to h8 (X black,
// O white, - empty), the side to move (B or W) and the move number.
func (p *Position) Token() string {
	b := p.appendCells(make([]byte, 0, 69), 'O')
	b = append(b, p.turn.Letter()...)
	return string(strconv.AppendInt(b, int64(p.moveNumber), 10))
}

// Key returns the token without its move number (65 characters): the same
// for every way of reaching the position, for a cache key.
func (p *Position) Key() string {
	return string(append(p.appendCells(make([]byte, 0, 65), 'O'), p.turn.Letter()...))
}

// OFEN returns the position as the UOI draft's ofen: the same 64 cells in
// the same order, with 0 (zero) for white, then B or W (no move number).
func (p *Position) OFEN() string {
	return string(append(p.appendCells(make([]byte, 0, 65), '0'), p.turn.Letter()...))
}

func (p *Position) appendCells(b []byte, white byte) []byte {
	for s := Square(0); s < 64; s++ {
		switch p.At(s) {
		case BlackDisc:
			b = append(b, 'X')
		case WhiteDisc:
			b = append(b, white)
		default:
			b = append(b, '-')
		}
	}
	return b
}

// ParsePosition reads a USI-X position token, or the word "startpos". It
// checks syntax only (othello_* codes); Validate checks the rules. Without a
// move number the position gets the smallest one that can reach it: one
// more than its discs beyond the four of the start (a game without passes).
func ParsePosition(s string) (*Position, error) {
	p := new(Position)
	if err := p.parse(s, 'O', true); err != nil {
		return nil, err
	}
	return p, nil
}

// ParseOFEN reads the UOI draft's ofen: exactly 65 characters, 64 cells from
// the top left, row by row (X black, 0 (zero) white, - empty), then B or W.
// The cells come in the same order as in the USI-X token: only the names of
// the squares differ (UOI's letter is the row). The move number is guessed
// as ParsePosition does without one.
func ParseOFEN(s string) (*Position, error) {
	p := new(Position)
	if err := p.parse(s, '0', false); err != nil {
		return nil, err
	}
	return p, nil
}

// ParseAny reads "startpos", a USI-X token or a UOI ofen. It takes the input
// for an ofen when its cells hold a 0 (zero), for a token otherwise. A board
// without white discs reads the same either way (the two formats list the
// cells in the same order), so the rule never misreads a board; only a move
// number after the side letter is the token's alone.
func ParseAny(s string) (*Position, error) {
	if len(s) >= 64 && strings.IndexByte(s[:64], '0') >= 0 && strings.IndexByte(s[:64], 'O') < 0 {
		return ParseOFEN(s)
	}
	return ParsePosition(s)
}

// OFENToToken converts a UOI ofen to a USI-X token (with the guessed move
// number).
func OFENToToken(ofen string) (string, error) {
	p, err := ParseOFEN(ofen)
	if err != nil {
		return "", err
	}
	return p.Token(), nil
}

// TokenToOFEN converts a USI-X token (or "startpos") to a UOI ofen; the move
// number, which an ofen lacks, is dropped.
func TokenToOFEN(token string) (string, error) {
	p, err := ParsePosition(token)
	if err != nil {
		return "", err
	}
	return p.OFEN(), nil
}

func (p *Position) parse(s string, white byte, token bool) *Error {
	format := "a USI-X position token"
	if !token {
		format = "a UOI ofen"
	}
	if token && s == "startpos" {
		*p = *Startpos()
		return nil
	}
	if len(s) < 65 {
		return newError(CodeLength, "%s has 64 cells and a side letter (65 characters), got %d characters", format, len(s))
	}
	if !token && len(s) > 65 {
		return newError(CodeLength, "%s is exactly 65 characters (64 cells and a side letter, no move number), got %d", format, len(s))
	}
	*p = Position{}
	for i := 0; i < 64; i++ {
		switch c := s[i]; c {
		case 'X':
			p.disc[Black] |= 1 << uint(i)
		case white:
			p.disc[White] |= 1 << uint(i)
		case '-':
		default:
			hint := ""
			switch {
			case token && c == '0':
				hint = " (0, zero, is white in the UOI ofen; the token writes the letter O)"
			case !token && c == 'O':
				hint = " (the letter O is white in the USI-X token; the ofen writes 0, zero)"
			case c == 'x' || c == 'o':
				hint = " (cells are upper case)"
			}
			return newError(CodeCell, "cell %d (%s) of %s is %q; want X (black), %c (white) or - (empty)%s", i+1, Square(i), format, rules.Clip(s[i:i+1], 4), white, hint)
		}
	}
	switch s[64] {
	case 'B':
		p.turn = Black
	case 'W':
		p.turn = White
	default:
		return newError(CodeSide, "the side to move (character 65) of %s is %q; want B or W", format, rules.Clip(s[64:65], 4))
	}
	p.moveNumber = popcount(p.disc[Black]|p.disc[White]) - 3
	if p.moveNumber < 1 {
		p.moveNumber = 1
	}
	if num := s[65:]; len(num) > 0 {
		v, err := strconv.Atoi(num)
		if err != nil || num[0] < '1' || num[0] > '9' || v > MaxMoveNumber {
			hint := ""
			if strings.TrimSpace(num) != num {
				hint = "; the token is one word: write B1, not B 1"
			}
			return newError(CodeMoveNumber, "the move number after the side letter is %q; want 1..%d without sign or leading zero%s", rules.Clip(num, 10), MaxMoveNumber, hint)
		}
		p.moveNumber = v
	}
	return nil
}

// ParsePositionCommand splits a USI-X position ("[position] startpos [moves
// ...]" or "[position] sfen <token> [moves ...]", as USI-X engines are sent
// it) into the token ("startpos" for the start position) and the moves. It
// checks the shape only; Load checks the rest.
func ParsePositionCommand(s string) (token string, moves []string, err error) {
	startpos, fields, moves, e := rules.SplitPosition(s, "sfen")
	switch {
	case e != nil:
		return "", nil, e
	case startpos:
		return "startpos", moves, nil
	case len(fields) != 1:
		return "", nil, newError(CodeLength, "a USI-X position is one token without spaces (64 cells, B or W, a move number); got %d words", len(fields))
	}
	return fields[0], moves, nil
}

// LegalMoves lists the legal moves in square order: the squares of the side
// to move, or Pass alone when it has none but the opponent has one, or none
// when the game is over.
func (p *Position) LegalMoves() []Move {
	var buf [MaxMoves]Move
	return append([]Move(nil), p.appendLegal(buf[:0])...)
}

// LegalMoveStrings lists the legal moves in USI-X notation: ["pass"] when the
// side to move must pass, [] (not nil) when the game is over.
func (p *Position) LegalMoveStrings() []string {
	var buf [MaxMoves]Move
	return rules.Strings(p.appendLegal(buf[:0]))
}

// MustPass reports whether the side to move has no square while the
// opponent has one.
func (p *Position) MustPass() bool {
	own, opp := p.disc[p.turn], p.disc[p.turn^1]
	return legalSet(own, opp) == 0 && legalSet(opp, own) != 0
}

// IsOver reports whether the game is over: neither side can put a disc.
func (p *Position) IsOver() bool {
	return legalSet(p.disc[Black], p.disc[White]) == 0 && legalSet(p.disc[White], p.disc[Black]) == 0
}

// IsLegal reports whether m is a legal move of p.
func (p *Position) IsLegal(m Move) bool {
	own, opp := p.disc[p.turn], p.disc[p.turn^1]
	if m == Pass {
		return legalSet(own, opp) == 0 && legalSet(opp, own) != 0
	}
	return m < Pass && legalSet(own, opp)&(1<<uint(m)) != 0
}

// Notate writes m as othello records do: the square itself ("d3"), or
// "pass". It is m.String(); it exists so that every game's package offers it.
func (p *Position) Notate(m Move) string { return m.String() }

// Play plays m if it is legal and reports the refusal (as CheckMove words it)
// otherwise.
func (p *Position) Play(m Move) error {
	if !p.IsLegal(m) {
		_, err := p.CheckMove(m.String())
		if err == nil { // cannot happen: CheckMove and IsLegal agree
			err = newError(CodeFlipsNothing, "%s is not a legal move", m)
		}
		return err
	}
	p.do(m)
	return nil
}
