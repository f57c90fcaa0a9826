package othello

import (
	"math/bits"

	"github.com/usid/usid/internal/rules"
)

// Validate checks the rules a position must obey and returns every broken
// rule (nil when the position is legal). Discs are never removed, and each
// disc is put next to one of the other side, so every position of a game
// keeps the four centre squares occupied and all its discs linked to them
// through touching discs (in any of the eight directions). A board that
// breaks either is no position of a game (usually a cell lost or shifted in
// the writing) and is refused. Nothing else is: the side to move may have to
// pass, the game may be over, one side may have no disc left.
func (p *Position) Validate() []*Error {
	var errs []*Error
	occ := p.disc[Black] | p.disc[White]
	if miss := centre &^ occ; miss != 0 {
		errs = append(errs, newError(CodeCentreEmpty, "%s empty; the four centre squares d4 e4 d5 e5 are occupied in every position of a game", squareList(miss)))
	}
	// Flood the occupied squares from the occupied centre squares, one
	// king step at a time (a step towards the h-file must not land on the
	// a-file, which would be a wrap round the edge, and the other way round).
	linked := centre & occ
	for {
		east := linked<<1 | linked>>7 | linked<<9
		west := linked>>1 | linked<<7 | linked>>9
		grown := linked | (linked<<8|linked>>8|east&notFileA|west&notFileH)&occ
		if grown == linked {
			break
		}
		linked = grown
	}
	if lost := occ &^ linked; lost != 0 && occ&centre != 0 {
		errs = append(errs, newError(CodeIsolatedDisc, "%s not linked to the centre through touching discs; every disc of a game is put next to another", squareList(lost)))
	}
	return errs
}

// squareList writes the squares of set, "d4 e5 are" style.
func squareList(set uint64) string {
	var b []byte
	n := 0
	for s := Square(0); s < 64; s++ {
		if set&(1<<uint(s)) != 0 {
			if n > 0 {
				b = append(b, ' ')
			}
			b = append(b, s.String()...)
			n++
		}
	}
	if n == 1 {
		return string(b) + " is"
	}
	return string(b) + " are"
}

// CheckMove reads s, a USI-X move (a lower-case square such as "d3", or
// "pass"), and returns it if it is legal in p; otherwise an *Error naming
// the rule it breaks, checked in this order: move_syntax, game_over,
// pass_not_allowed, occupied, wrong_side, flips_nothing.
func (p *Position) CheckMove(s string) (Move, error) {
	m, err := parseMove(s)
	if err != nil {
		return 0, err
	}
	if e := p.check(m); e != nil {
		return 0, e // not p.check's typed nil as an error
	}
	return m, nil
}

// ParseMove reads a USI-X move ("d3", "pass") without asking whether a
// position allows it; a refusal is an *Error with code move_syntax.
func ParseMove(s string) (Move, error) {
	m, err := parseMove(s)
	if err != nil {
		return 0, err
	}
	return m, nil
}

func parseMove(s string) (Move, *Error) {
	if s == "pass" {
		return Pass, nil
	}
	sq, ok := ParseSquare(s)
	if !ok {
		hint := ""
		if len(s) == 2 && s[0] >= 'A' && s[0] <= 'H' {
			hint = " (squares are lower case in USI-X: d3)"
		}
		return 0, newError(CodeMoveSyntax, "%q is not a move; want a square a1..h8 or \"pass\"%s", rules.Clip(s, 10), hint)
	}
	return SquareMove(sq), nil
}

// check says why m is not legal in p, or nil.
func (p *Position) check(m Move) *Error {
	us, them := p.turn, p.turn^1
	own, opp := p.disc[us], p.disc[them]
	mine, theirs := legalSet(own, opp), legalSet(opp, own)
	if mine == 0 && theirs == 0 {
		return newError(CodeGameOver, "the game is over (neither side can move; Black %d, White %d); no %s may follow", p.Discs(Black), p.Discs(White), m)
	}
	if m == Pass {
		if mine != 0 {
			return newError(CodePassNotAllowed, "%s may not pass: %s has %d moves (%s first)", us, us, popcount(mine), Square(bits.TrailingZeros64(mine)))
		}
		return nil
	}
	bit := uint64(1) << uint(m)
	switch {
	case mine&bit != 0:
		return nil
	case (own|opp)&bit != 0:
		return newError(CodeOccupied, "%s already holds a disc", m)
	case mine == 0 && theirs&bit != 0:
		return newError(CodeWrongSide, "%s has no move and must pass; %s is %s's move (a \"pass\" is missing before it)", us, m, them)
	}
	return newError(CodeFlipsNothing, "a %s disc on %s turns over no disc", us, m)
}

// Load builds a position from "startpos", a USI-X token or a UOI ofen
// (ParseAny) and a list of USI-X moves, checking everything: syntax, the
// rules of the position, and each move in turn. On success it returns the
// final position and nil. Otherwise it returns the errors — a syntax error
// alone, all rule errors of the start position, or the first refused move
// with its MoveIndex — and the last position it reached (nil if the position
// did not parse; the start position if it broke a rule; the position before
// the refused move).
func Load(position string, moves []string) (*Position, []*Error) {
	p, err := ParseAny(position)
	if err != nil {
		return nil, []*Error{err.(*Error)}
	}
	if errs := p.Validate(); errs != nil {
		return p, errs
	}
	return p, rules.PlayMoves(moves, p.CheckMove, p.do)
}
