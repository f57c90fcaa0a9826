// Package builtin registers the games usid ships with package game: shogi
// (the default game: a position that names none is shogi), chess and
// othello. The
// wiring (internal/app, cmd/usid) and tests import it for its side effect.
package builtin

import (
	"github.com/usid/usid/game"
	"github.com/usid/usid/game/chessgame"
	"github.com/usid/usid/game/othellogame"
	"github.com/usid/usid/game/shogigame"
)

func init() {
	game.Register(shogigame.Game)
	game.Register(chessgame.Game)
	game.Register(othellogame.Game)
}
