package rules

// PlayMoves checks and plays moves in order; the first refused move ends the
// loop and comes back as one Error carrying its index. check must return an
// *Error when it refuses.
func PlayMoves[M any](moves []string, check func(string) (M, error), play func(M)) []*Error {
	for i, s := range moves {
		m, err := check(s)
		if err != nil {
			e := err.(*Error)
			e.MoveIndex = i
			return []*Error{e}
		}
		play(m)
	}
	return nil
}

// Strings writes moves in their notation.
func Strings[M interface{ String() string }](moves []M) []string {
	out := make([]string, len(moves))
	for i, m := range moves {
		out[i] = m.String()
	}
	return out
}
