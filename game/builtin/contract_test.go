package builtin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/usid/usid/game"
	_ "github.com/usid/usid/game/builtin"
)

// legal is the start's legal moves, as the game's verdict lists them.
func legal(t *testing.T, g game.Game, p game.Position) []string {
	t.Helper()
	b, err := json.Marshal(g.Inspect(p.Text(), p.Variant(), nil, false))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Valid      bool     `json:"valid"`
		LegalMoves []string `json:"legal_moves"`
	}
	if err := json.Unmarshal(b, &v); err != nil || !v.Valid {
		t.Fatalf("%s: verdict on its own position %s: %s", g.Name(), p.Text(), b)
	}
	return v.LegalMoves
}

// TestContract: what every registered game promises the code above the
// seam, checked on each: unique names, the start position, legal moves
// that Check, Play, Match and Perft agree on, refusals with codes.
func TestContract(t *testing.T) {
	all := game.All()
	if len(all) < 3 || game.Default() != all[0] || all[0].Name() != "shogi" {
		t.Fatalf("registered: %d games, default %v", len(all), game.Default())
	}
	seen := map[string]bool{}
	for _, g := range all {
		keys := []string{"name " + g.Name(), "field " + g.Field()}
		for _, d := range g.Dialects() {
			keys = append(keys, "dialect "+d)
			if game.ForDialect(d) != g {
				t.Errorf("%s: not found by its dialect %s", g.Name(), d)
			}
		}
		for _, k := range keys {
			if seen[k] {
				t.Errorf("%s: %s twice", g.Name(), k)
			}
			seen[k] = true
		}
		if game.Named(g.Name()) != g || game.ByField(g.Field()) != g {
			t.Errorf("%s: not found by its names", g.Name())
		}
		t.Run(g.Name(), func(t *testing.T) { contract(t, g, seen) })
	}
}

func contract(t *testing.T, g game.Game, keys map[string]bool) {
	start, err := g.Check("startpos", "", nil)
	if err != nil {
		t.Fatalf("startpos: %v", err)
	}
	if start.Start() != "startpos" || start.SideToMove() != g.FirstSide() || start.Game() != g || len(start.Moves()) != 0 {
		t.Errorf("start %q side %s, want startpos and %s", start.Start(), start.SideToMove(), g.FirstSide())
	}
	if again, err := g.Check(g.StartPosition(""), "", nil); err != nil || again.Key() != start.Key() {
		t.Errorf("the start position's text: %v, key %q want %q", err, again.Key(), start.Key())
	}
	if keys["key "+start.Key()] {
		t.Errorf("cache key %q is another game's", start.Key())
	}
	keys["key "+start.Key()] = true
	moves := legal(t, g, start)
	if len(moves) == 0 {
		t.Fatal("no legal move from the start")
	}
	if n := g.Perft(start, 1); n != uint64(len(moves)) {
		t.Errorf("perft 1 = %d, %d legal moves", n, len(moves))
	}
	if start.Ending() != game.EndNone {
		t.Errorf("the start is an end: %s", start.Ending())
	}
	for _, m := range moves {
		if start.CheckMove(m) != nil || start.NoMove(m) {
			t.Errorf("legal move %s refused", m)
		}
		after, err := start.Play(m)
		if err != nil {
			t.Fatalf("play %s: %v", m, err)
		}
		checked, cerr := g.Check("startpos", "", []string{m})
		if cerr != nil || checked.Text() != after.Text() || checked.Key() != after.Key() || strings.Join(after.Moves(), " ") != m {
			t.Errorf("%s: Play %q and Check %q differ (%v)", m, after.Text(), checked.Text(), cerr)
		}
		if after.SideToMove() == start.SideToMove() {
			t.Errorf("%s: the side to move did not change", m)
		}
		match := start.Match()
		if match.Turn() != start.SideToMove() {
			t.Errorf("match turn %s", match.Turn())
		}
		if _, err := match.Check(m); err != nil {
			t.Errorf("match refuses %s: %v", m, err)
		}
		if r := match.Play(m); r != nil || match.Turn() != after.SideToMove() {
			t.Errorf("after %s: match ended %+v or turn %s", m, r, match.Turn())
		}
	}
	// A move that is no move, and a start that is no position, are
	// refused with codes, the move with its index.
	if _, err := g.Check("startpos", "", []string{moves[0], "zz9"}); err == nil || err.MoveIndex != 1 || err.Code == "" {
		t.Errorf("a bad second move: %+v", err)
	}
	if _, err := g.Check("nonsense", "", nil); err == nil || err.Code == "" {
		t.Errorf("a bad position: %+v", err)
	}
	if _, err := g.Variant("no-such-variant"); err == nil {
		t.Error("an unknown variant accepted")
	}
	// A game played out (the first legal move each time): a forced move
	// (game.Forced) is the position's only legal move.
	pos, forced := start, 0
	for ply := 0; ply < 300 && pos.Ending() == game.EndNone; ply++ {
		ms := legal(t, g, pos)
		if len(ms) == 0 {
			break
		}
		if f := game.ForcedMove(pos); f != "" {
			forced++
			if len(ms) != 1 || ms[0] != f {
				t.Fatalf("ply %d: forced %s, legal %v", ply, f, ms)
			}
		}
		next, err := pos.Play(ms[0])
		if err != nil {
			t.Fatalf("ply %d: play %s: %v", ply, ms[0], err)
		}
		pos = next
	}
	_, isForced := start.(game.Forced)
	t.Logf("played out: %d plies, %d forced (the game has forced moves: %v)", len(pos.Moves()), forced, isForced)
	p := g.Probe()
	if _, err := g.Check(p.Middle, "", nil); err != nil {
		t.Errorf("the probe's middle position: %v", err)
	}
	if _, err := g.Check("startpos", "", p.StartMoves); err != nil {
		t.Errorf("the probe's start moves: %v", err)
	}
	// The positions that tell the side an engine's scores are from: one
	// side to move in each, a move to search in both, no end yet.
	var sides []string
	for _, text := range []string{p.Won, p.Lost, p.Reversed} {
		q, err := g.Check(text, "", nil)
		if err != nil {
			t.Fatalf("the probe's decided position %q: %v", text, err)
		}
		if q.Ending() != game.EndNone || game.ForcedMove(q) != "" || len(legal(t, g, q)) == 0 {
			t.Errorf("the probe's decided position %q: ending %q, forced %q, %d moves; want a move to search", text, q.Ending(), game.ForcedMove(q), len(legal(t, g, q)))
		}
		sides = append(sides, q.SideToMove())
	}
	if sides[0] == sides[1] || sides[2] != sides[1] {
		t.Errorf("the probe's decided positions have %v to move; want the winner, the loser, the other winner", sides)
	}
	if p.MateInOne != "" {
		q, err := g.Check(p.MateInOne, "", nil)
		if err != nil {
			t.Fatalf("the probe's mate in one: %v", err)
		}
		if !slicesAny(legal(t, g, q), func(m string) bool { _, _, err := q.Mate([]string{m}, 1); return err == nil }) {
			t.Error("the probe's mate in one has no mating move")
		}
	}
}

func slicesAny(ms []string, f func(string) bool) bool {
	for _, m := range ms {
		if f(m) {
			return true
		}
	}
	return false
}
