package usi

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the syntactic checks shared by commands and the parser.
// They check shape only: whether a move is legal, or a position possible, is
// the shogi package's business, and usi must not depend on it.

// IsMove reports whether s is a USI move in form: a board move "7g7f", a
// promotion "8h2b+" or a drop "P*5e". It does not check legality.
func IsMove(s string) bool {
	switch len(s) {
	case 4:
		if s[1] == '*' {
			return strings.IndexByte("RBGSNLP", s[0]) >= 0 && isFile(s[2]) && isRank(s[3])
		}
		return isFile(s[0]) && isRank(s[1]) && isFile(s[2]) && isRank(s[3])
	case 5:
		return isFile(s[0]) && isRank(s[1]) && isFile(s[2]) && isRank(s[3]) && s[4] == '+'
	}
	return false
}

func isFile(c byte) bool  { return '1' <= c && c <= '9' }
func isRank(c byte) bool  { return 'a' <= c && c <= 'i' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// CheckSFEN returns an error wrapping ErrBadCommand unless sfen has the form of
// an SFEN: a 9x9 board of piece letters, digits, '+' and '/', the side to move
// "b" or "w", the hands ("-" or counts and piece letters), and an optional
// move number, separated by single spaces. It does not check legality.
func CheckSFEN(sfen string) error {
	fields := strings.Split(sfen, " ")
	if len(fields) != 3 && len(fields) != 4 {
		return fmt.Errorf("%w: SFEN %q: want 3 or 4 space-separated fields", ErrBadCommand, clip(sfen))
	}
	if err := checkBoard(fields[0]); err != nil {
		return fmt.Errorf("%w: SFEN %q: %s", ErrBadCommand, clip(sfen), err)
	}
	if fields[1] != "b" && fields[1] != "w" {
		return fmt.Errorf("%w: SFEN %q: side to move must be b or w", ErrBadCommand, clip(sfen))
	}
	if !isHands(fields[2]) {
		return fmt.Errorf("%w: SFEN %q: bad pieces in hand", ErrBadCommand, clip(sfen))
	}
	if len(fields) == 4 && !isNumber(fields[3]) {
		return fmt.Errorf("%w: SFEN %q: bad move number", ErrBadCommand, clip(sfen))
	}
	return nil
}

// checkBoard checks the board field: 9 ranks of 9 squares each.
func checkBoard(b string) error {
	ranks := 0
	for rank := range strings.SplitSeq(b, "/") {
		ranks++
		squares := 0
		for i := 0; i < len(rank); i++ {
			c := rank[i]
			switch {
			case '1' <= c && c <= '9':
				squares += int(c - '0')
			case strings.IndexByte("PLNSGBRKplnsgbrk", c) >= 0:
				squares++
			case c == '+' && i+1 < len(rank) && strings.IndexByte("PLNSBRplnsbr", rank[i+1]) >= 0:
				// A promoted piece: the letter is counted on the next turn.
			default:
				return fmt.Errorf("bad character %q on the board", c)
			}
		}
		if squares != 9 {
			return fmt.Errorf("rank %d has %d squares, want 9", ranks, squares)
		}
	}
	if ranks != 9 {
		return fmt.Errorf("%d ranks, want 9", ranks)
	}
	return nil
}

// isHands checks the pieces-in-hand field: "-" or (count? piece)+ with a count
// of 1 or 2 digits not starting with 0.
func isHands(h string) bool {
	if h == "-" {
		return true
	}
	if h == "" {
		return false
	}
	for i := 0; i < len(h); {
		digits := 0
		for i < len(h) && isDigit(h[i]) {
			if digits == 0 && h[i] == '0' {
				return false
			}
			digits++
			i++
		}
		if digits > 2 || i == len(h) || strings.IndexByte("RBGSNLPrbgsnlp", h[i]) < 0 {
			return false
		}
		i++
	}
	return true
}

// isNumber reports whether s is a non-negative decimal integer of at most 18
// digits (so that it always fits an int64).
func isNumber(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// checkText accepts free text for option names and values: valid UTF-8, no
// control character (Unicode categories Cc, Cf, Zl and Zp: C0, DEL, C1 such
// as NEL, BOM and bidi controls, line and paragraph separators), not
// empty, and no leading
// or trailing space (engines trim them, so they would not mean what they say).
func checkText(what, s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrBadCommand, what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrBadCommand, what)
	}
	for _, c := range s {
		if unicode.In(c, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("%w: control character %U in %s", ErrBadCommand, c, what)
		}
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return fmt.Errorf("%w: %s %q begins or ends with a space", ErrBadCommand, what, s)
	}
	return nil
}

// hasWord reports whether word occurs in s as a whole space-separated token.
func hasWord(s, word string) bool {
	for tok := range strings.FieldsSeq(s) {
		if tok == word {
			return true
		}
	}
	return false
}

// clip shortens s for error messages so that a huge client string does not end
// up in a log line whole.
func clip(s string) string {
	const max = 100
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
