package play

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

// A game for levelGame: its engine, start, clock and the human's legal
// moves in a state.
type levelSetup struct {
	engine string
	start  *session.Position
	clock  string // play_start's "clock"
	legal  func(tb testing.TB, v *stateView) []string
}

// shogiLevels: fairy with 1 min + 5 s byoyomi.
var shogiLevels = levelSetup{"fairy", nil, `{"b":{"main_ms":60000,"byoyomi_ms":5000},"w":{"main_ms":60000,"byoyomi_ms":5000}}`,
	func(tb testing.TB, v *stateView) (out []string) {
		pos, err := shogi.Load(v.SFEN, v.Moves)
		if err != nil {
			tb.Fatal(err)
		}
		for _, mv := range pos.LegalMoves() {
			out = append(out, mv.String())
		}
		return out
	}}

// chessLevels: stockfish with 1 min + 5 s a move.
var chessLevels = levelSetup{"stockfish", &session.Position{Game: "chess", Start: "startpos"}, `{"b":{"main_ms":60000,"inc_ms":5000},"w":{"main_ms":60000,"inc_ms":5000}}`,
	func(tb testing.TB, v *stateView) (out []string) {
		pos, errs := chess.Load(v.FEN, v.Moves, chess.Standard)
		if errs != nil {
			tb.Fatal(errs)
		}
		for _, mv := range pos.LegalMoves() {
			out = append(out, mv.String())
		}
		return out
	}}

// levelGame plays plies of a game of g at level (play_start's "level"
// JSON, "" for none), the human on Black (in chess White) playing at once
// (random legal moves, seeded); it returns the engine's time per move as
// the server counted it, and the game's last state.
func levelGame(tb testing.TB, m *Manager, client string, g levelSetup, level string, plies int) ([]int64, *stateView) {
	tb.Helper()
	c := newConnAs(tb, m, session.Caller{Client: client})
	side := "b"
	if g.start != nil {
		side = "w"
	}
	opts := `{"side":"` + side + `","clock":` + g.clock
	if level != "" {
		opts += `,"level":` + level
	}
	c.send(startReq("g", g.engine, opts+`}`, g.start))
	v := c.state()
	seed := fnv.New64a()
	seed.Write([]byte(client + level))
	rng := rand.New(rand.NewPCG(37, seed.Sum64()))
	var engine []int64
	for len(v.Moves) < plies && v.Status == statusPlaying {
		legal := g.legal(tb, v)
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: legal[rng.IntN(len(legal))]})
		if v = c.state(); v.Status != statusPlaying {
			break
		}
		v = c.state()
		if v.Status == statusPlaying || (v.Result != nil && v.Result.Reason != "time") {
			engine = append(engine, v.TimesMS[len(v.TimesMS)-1])
		}
	}
	if v.Status == statusPlaying {
		c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
		v = c.until(ended)
	}
	if v.Result != nil && v.Result.Reason == "time" {
		tb.Errorf("level %s: the game was lost on time: %+v", level, v.Result)
	}
	return engine, v
}

func mean(ms []int64) float64 {
	if len(ms) == 0 {
		return 0
	}
	var sum int64
	for _, x := range ms {
		sum += x
	}
	return float64(sum) / float64(len(ms))
}

// TestWeakestLevelMovesAtOnce (issue 37): an engine's level bounds its
// time too. At the weakest level the play panel offers (fairy's Skill
// Level at the bottom of its client range, -20) with 1 min + 5 s
// byoyomi, the engine moved after 35 s for its first move and spent its
// whole minute by its fifth, then nearly every byoyomi: the level set the
// option only, and the engine was told the whole clock. Now the level
// caps the engine's time per move (the game's level reports the cap as
// movetime_ms): its mean time per move over a 40-ply game is at most 1 s.
func TestWeakestLevelMovesAtOnce(t *testing.T) {
	m := New(Config{Service: svc, Lag: 5 * time.Second})
	defer m.Close(context.Background())
	for _, c := range []struct {
		name, what string
		levels     levelSetup
		level      string
	}{
		{"weak", "Skill Level -20, 1 min + 5 s byoyomi", shogiLevels, `{"option":"Skill Level","value":"-20"}`},
		// The same for a chess engine: stockfish at Skill
		// Level 0, the bottom of the engine's own range (no bounds in
		// client_options), with 1 min + 5 s a move, is told a time for one
		// move (movestogo 1) of the level's.
		{"weakchess", "stockfish Skill Level 0, 1 min + 5 s", chessLevels, `{"option":"Skill Level","value":"0"}`},
		// Issue 42: stockfish's weakest level as GET /v1/engines lists it
		// (UCI_LimitStrength, UCI_Elo at its minimum), named by its id.
		{"weakelo", "stockfish's weakest Elo level, 1 min + 5 s", chessLevels, weakestLevel(t, "stockfish", true)},
		// Below it, stockfish's weakest level: beginner 1 (Skill Level 0,
		// depth 1, 60% of its moves drawn at random).
		{"weakbeginner", "stockfish's beginner 1, 1 min + 5 s", chessLevels, weakestLevel(t, "stockfish", false)},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A random mover can be mated within ten moves even by a weak
			// engine: games until ten of the engine's moves are timed.
			var times []int64
			var v *stateView
			for game := 0; len(times) < 10 && game < 5; game++ {
				var more []int64
				more, v = levelGame(t, m, fmt.Sprintf("%s-%d", c.name, game), c.levels, c.level, 40)
				times = append(times, more...)
			}
			avg := mean(times)
			t.Logf("%s: %d engine moves, mean %.0f ms, times %v", c.what, len(times), avg, times)
			if len(times) < 10 {
				t.Fatalf("five games gave %d engine moves; the last ended %+v", len(times), v.Result)
			}
			if avg > 1000 {
				t.Errorf("the engine's mean time per move at the weakest level: %.0f ms, want at most 1000", avg)
			}
			if v.Level == nil || v.Level.MoveTimeMS <= 0 || v.Level.MoveTimeMS > 1000 {
				t.Errorf("the game's level %+v does not report its time per move (movetime_ms 1..1000)", v.Level)
			}
			waitIdle(t)
		})
	}
}

// weakestLevel is play_start's level naming engine's weakest level (by
// id) of a kind: an Elo level (elo) or a beginner level (!elo), which it
// must have.
func weakestLevel(tb testing.TB, engine string, elo bool) string {
	tb.Helper()
	for _, k := range shared.Status() {
		if k.Name != engine {
			continue
		}
		for _, l := range k.Levels {
			if elo && l.Elo != 0 && l.Options["UCI_LimitStrength"] == "true" || !elo && l.Beginner == 1 {
				return `{"id":"` + l.ID + `"}`
			}
		}
		tb.Fatalf("%s's levels %+v: want an Elo level (%v), or beginner 1", engine, k.Levels, elo)
	}
	tb.Fatalf("engine %s has no levels", engine)
	return ""
}

// BenchmarkLevels measures the engine's mean time per move over a 40-ply
// game at each level the play panel offers (ms/move; one game per
// iteration): fairy's Skill Level with 1 min + 5 s byoyomi, a time per
// move, stockfish's Skill Level and its Elo levels (issue 42) with 1 min
// + 5 s a move:
//
//	go test -run '^$' -bench BenchmarkLevels -benchtime 1x ./play/
//	go test -run '^$' -bench 'BenchmarkLevels/stockfish/elo' -benchtime 3x ./play/
func BenchmarkLevels(b *testing.B) {
	m := New(Config{Service: svc, Lag: 5 * time.Second})
	defer m.Close(context.Background())
	skill := func(v string) string { return `{"option":"Skill Level","value":"` + v + `"}` }
	for _, l := range []struct {
		name  string
		g     levelSetup
		level string
	}{
		{"fairy/skill-20", shogiLevels, skill("-20")}, {"fairy/skill-12", shogiLevels, skill("-12")},
		{"fairy/skill-4", shogiLevels, skill("-4")}, {"fairy/skill4", shogiLevels, skill("4")},
		{"fairy/skill12", shogiLevels, skill("12")}, {"fairy/skill20", shogiLevels, skill("20")},
		{"fairy/ms100", shogiLevels, `{"movetime_ms":100}`}, {"fairy/ms1000", shogiLevels, `{"movetime_ms":1000}`},
		{"stockfish/skill0", chessLevels, skill("0")}, {"stockfish/skill8", chessLevels, skill("8")},
		{"stockfish/skill16", chessLevels, skill("16")},
		{"stockfish/beginner1", chessLevels, weakestLevel(b, "stockfish", false)},
		{"stockfish/elo-weakest", chessLevels, weakestLevel(b, "stockfish", true)},
		{"stockfish/elo1900", chessLevels, `{"id":"elo1900"}`},
	} {
		b.Run(l.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				times, _ := levelGame(b, m, fmt.Sprint("bench", l.name, i), l.g, l.level, 40)
				b.ReportMetric(mean(times), "ms/move")
				b.ReportMetric(float64(len(times)), "moves")
			}
		})
	}
}
