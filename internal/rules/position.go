package rules

import "strings"

// CodePositionSyntax is the code of a position command that is not
// "startpos|<keyword> <fields> [moves ...]"; both games use it.
const CodePositionSyntax Code = "position_syntax"

// SplitPosition splits a position in the engine protocol's syntax ("startpos
// [moves m1 m2 ...]" or "<keyword> <fields...> [moves ...]", a leading
// "position" allowed) into its start (nil fields for "startpos") and moves.
// It checks only this frame; the game's package checks the field count, the
// position and the moves.
func SplitPosition(s, keyword string) (startpos bool, fields, moves []string, err *Error) {
	toks := strings.Fields(s)
	if len(toks) > 0 && toks[0] == "position" {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return false, nil, nil, Newf(CodePositionSyntax, "empty position; want \"startpos\" or \"%s <%s>\", then optionally \"moves ...\"", keyword, keyword)
	}
	rest := toks[1:]
	switch toks[0] {
	case "startpos":
		startpos = true
	case keyword:
		i := 0
		for i < len(rest) && rest[i] != "moves" {
			i++
		}
		fields, rest = rest[:i], rest[i:]
	default:
		return false, nil, nil, Newf(CodePositionSyntax, "a position starts with \"startpos\" or %q, not %q", keyword, Clip(toks[0], 20))
	}
	if len(rest) == 0 {
		return startpos, fields, nil, nil
	}
	if rest[0] != "moves" {
		return false, nil, nil, Newf(CodePositionSyntax, "expected \"moves\" after the position, got %q", Clip(rest[0], 20))
	}
	return startpos, fields, rest[1:], nil
}

// Clip shortens s to max bytes and "..." for an error message.
func Clip(s string, max int) string {
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
