// The game a probe's positions and answers belong to: the dialect decides
// (USI: shogi, UCI: chess). Everything else the probe does is the same.

package probe

import (
	"errors"
	"time"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/shogi"
	"github.com/usid/usid/usi"
)

// game is what the probe needs of a game's rules.
type game struct {
	// middle is out of every opening book, so that an engine has to search
	// it (and print info lines); mateInOne is solved by any mate search.
	middle, mateInOne string
	mateGo            usi.Go
	plainGo           usi.Go // a plain timed search every engine of the dialect takes
	startposMoves     []string
	position          func(text string, moves []string) usi.Position
	// legal checks a best move; mates checks that a mate search's answer
	// (the line, or the best move alone) mates.
	legal func(pos, move string) error
	mates func(pos string, line []string) error
}

var shogiGame = game{
	middle:        "3g1ksnl/lrs3gb1/nppp1p+Bpp/p3p1p2/3P5/2P6/PP2PPPPP/4GG1R1/LNS1K1SNL w - 18",
	mateInOne:     "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1", // G*5b
	mateGo:        usi.Go{Mate: true, MateTime: 2 * time.Second},
	plainGo:       usi.Go{Clock: &usi.Clock{Byoyomi: baseline}},
	startposMoves: []string{"7g7f", "3c3d"},
	position:      func(t string, m []string) usi.Position { return usi.Position{SFEN: t, Moves: m} },
	legal: func(pos, move string) error {
		p, err := shogi.ParseSFEN(pos)
		if err == nil {
			_, err = p.CheckMove(move)
		}
		return err
	},
	mates: func(pos string, line []string) error {
		p, err := shogi.ParseSFEN(pos)
		if err == nil {
			_, err = p.VerifyMateLine(line)
		}
		return err
	},
}

var chessGame = game{
	middle:        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8",
	mateInOne:     "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", // Rd8#
	mateGo:        usi.Go{Mate: true, MateMoves: 1},
	plainGo:       usi.Go{MoveTime: baseline},
	startposMoves: []string{"e2e4", "e7e5"},
	position:      func(t string, m []string) usi.Position { return usi.Position{FEN: t, Moves: m} },
	legal: func(pos, move string) error {
		_, errs := chess.Load(pos, []string{move}, chess.Standard)
		if errs != nil {
			return errs[0]
		}
		return nil
	},
	mates: func(pos string, line []string) error {
		p, errs := chess.Load(pos, line, chess.Standard)
		switch {
		case errs != nil:
			return errs[0]
		case !p.IsCheckmate():
			return errors.New("the line does not end in checkmate")
		}
		return nil
	},
}

// gameOf is the game an engine of dialect d plays.
func gameOf(d *usi.Dialect) *game {
	if d == usi.DialectUCI {
		return &chessGame
	}
	return &shogiGame
}
