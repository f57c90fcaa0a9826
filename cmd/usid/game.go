package main

import (
	"fmt"
	"strings"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
)

// gameFlags are the flags of `usid perft` and `usid validate` that choose
// the game where a position does not say which it is: --game NAME (any
// game usid serves: shogi, chess, othello), or --chess and --chess960.
type gameFlags struct {
	chess, chess960 bool
	name            string
}

// other is the game --game names when it is neither shogi nor chess (which
// keep their own paths below), or nil.
func (g gameFlags) other() (game.Game, error) {
	switch g.name {
	case "", "shogi", "chess":
		return nil, nil
	}
	if gm := game.Named(g.name); gm != nil {
		return gm, nil
	}
	return nil, fmt.Errorf("no game %q", g.name)
}

// split reads a position in gm's engine syntax ("startpos" or "<keyword>
// <text>", then "moves ..."): its start and moves.
func split(gm game.Game, line string) (string, []string, *rules.Error) {
	startpos, fields, moves, err := rules.SplitPosition(line, gm.Keyword())
	if err != nil {
		return "", nil, err
	}
	if startpos {
		return "startpos", moves, nil
	}
	return strings.Join(fields, " "), moves, nil
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
	return g.chess || g.chess960 || g.name == "chess"
}
