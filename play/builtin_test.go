package play

import (
	"testing"

	gameseam "github.com/usid/usid/game"
	// The games usid ships, registered as the wiring registers them.
	_ "github.com/usid/usid/game/builtin"
)

// boardFrom is the board of a game from start, for tests of the rules.
func boardFrom(t testing.TB, name, start string) *board {
	t.Helper()
	p, err := gameseam.Named(name).Check(start, "", nil)
	if err != nil {
		t.Fatalf("%s %s: %v", name, start, err)
	}
	return newBoard(p)
}
