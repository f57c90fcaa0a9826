package main

import (
	"strings"

	"github.com/usid/usid/chess"
)

// gameFlags are the flags of `usid perft` and `usid validate` that choose
// chess where a position does not say which game it is.
type gameFlags struct {
	chess, chess960 bool
}

// variant is the chess variant the flags ask for.
func (g gameFlags) variant() chess.Variant {
	if g.chess960 {
		return chess.Chess960
	}
	return chess.Standard
}

// isChess tells a chess position from a shogi one by its first word (after
// an optional "position"): "fen" is chess (UCI), "sfen" is shogi (USI);
// "startpos", and anything else, is shogi unless --chess or --chess960 was
// given. The two syntaxes share no keyword but startpos, so nothing is
// guessed from the board itself.
func (g gameFlags) isChess(pos string) bool {
	toks := strings.Fields(pos)
	if len(toks) > 0 && toks[0] == "position" {
		toks = toks[1:]
	}
	if len(toks) > 0 {
		switch toks[0] {
		case "fen":
			return true
		case "sfen":
			return false
		}
	}
	return g.chess || g.chess960
}
