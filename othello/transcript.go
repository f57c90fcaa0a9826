package othello

import "strings"

// ParseTranscript reads an othello move transcript, the common record
// format: the squares played, one after the other, without separators
// ("f5d6c3d3c4"), in lower or upper case (both may mix), passes left out. White
// space between squares is allowed. The moves are played from start (the
// start position if nil), and a pass is put in wherever the side to move has
// no square and the next square is its opponent's. It returns the moves,
// passes included. An error is an *Error whose MoveIndex counts the squares
// of the transcript (from 0; passes do not count): move_syntax for anything
// but a square, otherwise what CheckMove says of the square.
func ParseTranscript(start *Position, s string) ([]Move, error) {
	p := Startpos()
	if start != nil {
		p = new(Position)
		*p = *start
	}
	var moves []Move
	k := 0 // the index of the next square in the transcript
	for i := 0; i < len(s); {
		if isSpace(s[i]) {
			i++
			continue
		}
		if i+1 >= len(s) || lower(s[i]) < 'a' || lower(s[i]) > 'h' || s[i+1] < '1' || s[i+1] > '8' {
			end := min(i+2, len(s))
			e := newError(CodeMoveSyntax, "%q at byte %d of the transcript is not a square a1..h8", s[i:end], i)
			e.MoveIndex = k
			return nil, e
		}
		m := SquareMove(NewSquare(int(lower(s[i])-'a'), int(s[i+1]-'1')))
		i += 2
		if p.MustPass() {
			moves = append(moves, Pass)
			p.do(Pass)
		}
		if e := p.check(m); e != nil {
			e.MoveIndex = k
			return nil, e
		}
		p.do(m)
		moves = append(moves, m)
		k++
	}
	return moves, nil
}

// Transcript writes moves as a transcript: their squares in lower case, one
// after the other, passes left out (a reader puts them back where forced).
// ParseTranscript reads it back to the same moves but for passes at the end.
func Transcript(moves []Move) string {
	var b strings.Builder
	b.Grow(2 * len(moves))
	for _, m := range moves {
		if m != Pass {
			b.WriteString(m.String())
		}
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
