package probe

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/usi"
)

// TestUSIXLimitsTried: depth and movetime are not among USI-X's go words,
// but an engine that takes them (usid's own othello engine, run as a
// process the way the pool runs it) is found to take them natively, so
// usid sends them rather than emulating them; an engine that takes the
// word yet ignores the time (it answers only at stop) is found out, and
// movetime is emulated for it.
func TestUSIXLimitsTried(t *testing.T) {
	usix := func(path string, args, env []string) func(context.Context) (*usi.Engine, error) {
		return func(ctx context.Context) (*usi.Engine, error) {
			return usi.Start(ctx, usi.Config{Path: path, Args: args, Env: env, Dialect: usi.DialectUSIX,
				StopTimeout: 3 * time.Second, QuitTimeout: time.Second, USIOKTimeout: 30 * time.Second})
		}
	}
	own, err := Run(t.Context(), Config{Start: usix(os.Args[0], []string{"othello-engine"}, nil), Dialect: usi.DialectUSIX})
	if err != nil {
		t.Fatal(err)
	}
	if own.Identity.Name != "usid-othello" {
		t.Fatalf("probed %q, want usid's othello engine", own.Identity.Name)
	}
	for _, param := range []string{"depth", "movetime", "nodes"} {
		if own.Goes(param) != Native {
			t.Errorf("usid-othello: %s %s (%s), want native", param, own.Goes(param), own.Notes[param])
		}
	}
	// Its scores are from the side to move, as USI-X says: the probe's
	// decided positions must be decided for an engine that searches (one
	// of 28 empties, "won" by 35 discs to 1, was +28 for the loser to move).
	if own.ScoreSide != ScoreSideToMove {
		t.Errorf("usid-othello: score side %s (%s), want %s", own.ScoreSide, own.Notes["score_side"], ScoreSideToMove)
	}

	fake, err := Run(t.Context(), Config{Start: usix(fakeengine.Path(), nil, fakeengine.Env(fakeengine.USIXIgnoreMoveTime)), Dialect: usi.DialectUSIX})
	if err != nil {
		t.Fatal(err)
	}
	if fake.Goes("movetime") != Emulated || !strings.Contains(fake.Notes["movetime"], "go movetime 500: it did not end the search by itself") {
		t.Errorf("%s: movetime %s (%s), want emulated: it answers only at stop", fakeengine.USIXIgnoreMoveTime, fake.Goes("movetime"), fake.Notes["movetime"])
	}
}
