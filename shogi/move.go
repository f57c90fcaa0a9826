package shogi

// Move is a USI move: a board move From→To, optionally promoting, or a drop of
// kind Drop on To (From is then NoSquare). The zero Move is not a valid move.
type Move struct {
	From    Square
	To      Square
	Drop    Kind // NoKind for board moves
	Promote bool
}

// IsDrop reports whether m drops a piece from hand.
func (m Move) IsDrop() bool { return m.Drop != NoKind }

// String returns m in USI notation: "7g7f", "8h2b+", "P*5e".
func (m Move) String() string {
	var b [5]byte
	return string(m.appendUSI(b[:0]))
}

func (m Move) appendUSI(b []byte) []byte {
	if m.Drop != NoKind {
		return append(b, m.Drop.Letter(), '*', byte('0'+m.To.File()), byte('a'+m.To.Rank()-1))
	}
	b = append(b, byte('0'+m.From.File()), byte('a'+m.From.Rank()-1), byte('0'+m.To.File()), byte('a'+m.To.Rank()-1))
	if m.Promote {
		b = append(b, '+')
	}
	return b
}

// parseSquare reads a USI square such as "7g".
func parseSquare(file, rank byte) (Square, bool) {
	if file < '1' || file > '9' || rank < 'a' || rank > 'i' {
		return NoSquare, false
	}
	return NewSquare(int(file-'0'), int(rank-'a'+1)), true
}

// ParseMove parses a move in USI notation. It checks syntax only; whether the
// move is legal depends on a position (see Position.CheckMove).
func ParseMove(s string) (Move, error) {
	bad := func(why string) (Move, error) {
		return Move{}, newError(CodeMoveSyntax, "%q is not a USI move: %s", clip(s), why)
	}
	switch {
	case len(s) == 4 && s[1] == '*':
		k := kindOfLetter(s[0])
		if k == NoKind || k == King {
			return bad("a drop names a piece P, L, N, S, G, B or R in uppercase")
		}
		to, ok := parseSquare(s[2], s[3])
		if !ok {
			return bad("the square must be a file 1-9 and a rank a-i")
		}
		return Move{From: NoSquare, To: to, Drop: k}, nil
	case len(s) == 4 || (len(s) == 5 && s[4] == '+'):
		from, ok1 := parseSquare(s[0], s[1])
		to, ok2 := parseSquare(s[2], s[3])
		if !ok1 || !ok2 {
			return bad("squares are a file 1-9 and a rank a-i, as in 7g7f")
		}
		if from == to {
			return bad("the piece does not move")
		}
		return Move{From: from, To: to, Promote: len(s) == 5}, nil
	}
	return bad("expected a form like 7g7f, 8h2b+ or P*5e")
}

// clip shortens untrusted input quoted in an error message.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
