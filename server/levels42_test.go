package server

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/testwait"
)

// engineOf is engine name's entry in GET /v1/engines.
func engineOf(t *testing.T, e *env, name string) map[string]any {
	t.Helper()
	code, _, m := call(t, e, "GET", "/v1/engines", nil)
	if code != 200 {
		t.Fatalf("GET /v1/engines: %d %v", code, m)
	}
	for _, x := range m["engines"].([]any) {
		if en := x.(map[string]any); en["name"] == name {
			return en
		}
	}
	t.Fatalf("no engine %s in %v", name, m)
	return nil
}

// TestStockfishEloLevels (issue 42): Debian's stockfish, configured with
// its name and path only (no client_options), gets levels named by their
// Elo from the UCI_Elo minimum it advertises up, each setting
// UCI_LimitStrength and UCI_Elo, the weakest moving within a second, then
// full strength; a shogi engine without a strength option gets none.
func TestStockfishEloLevels(t *testing.T) {
	e := chessEnv(t)
	sf := engineOf(t, e, "stockfish")
	if co := sf["client_options"].(map[string]any); len(co) != 0 {
		t.Fatalf("stockfish's client_options %v: the test wants none", co)
	}
	var eloMin float64
	for _, o := range sf["options"].([]any) {
		if o := o.(map[string]any); o["name"] == "UCI_Elo" {
			eloMin = o["min"].(float64)
		}
	}
	if eloMin == 0 {
		t.Fatalf("stockfish advertises no UCI_Elo: %v", sf["options"])
	}
	levels := sf["levels"].([]any)
	var ids []string
	// Below the Elo levels, the beginner levels: Skill Level 0, a depth-1
	// search, a share of random moves falling from the weakest.
	prevRandom := 101.0
	for len(levels) > 0 && levels[0].(map[string]any)["beginner"] != nil {
		l := levels[0].(map[string]any)
		opts := l["options"].(map[string]any)
		r, _ := l["random"].(float64)
		if l["id"] != fmt.Sprint("beginner", l["beginner"]) || opts["Skill Level"] != "0" || len(opts) != 1 || l["depth"] != 1.0 || r <= 0 || r >= prevRandom {
			t.Errorf("beginner level %v: want Skill Level 0, depth 1, less random than the one below", l)
		}
		prevRandom = r
		ids = append(ids, l["id"].(string))
		levels = levels[1:]
	}
	if len(ids) != 3 {
		t.Errorf("stockfish's beginner levels %v: want 3", ids)
	}
	prev := 0.0
	for i, x := range levels {
		l := x.(map[string]any)
		ids = append(ids, l["id"].(string))
		opts := l["options"].(map[string]any)
		if i == len(levels)-1 {
			if l["id"] != "full" || len(opts) != 0 || l["movetime_ms"] != nil {
				t.Errorf("the strongest level %v, want full strength (no options, no time cap)", l)
			}
			continue
		}
		elo, _ := l["elo"].(float64)
		if elo <= prev || (i == 0 && elo != eloMin) || l["id"] != fmt.Sprintf("elo%.0f", elo) ||
			opts["UCI_LimitStrength"] != "true" || opts["UCI_Elo"] != strconv.Itoa(int(elo)) || len(opts) != 2 {
			t.Errorf("level %d %v: want elo from %.0f up, options UCI_LimitStrength true and UCI_Elo", i, l, eloMin)
		}
		prev = elo
	}
	if len(levels) < 6 {
		t.Errorf("stockfish's levels %v: want steps from its minimum up", ids)
	}
	if ms, _ := levels[0].(map[string]any)["movetime_ms"].(float64); ms <= 0 || ms > 1000 {
		t.Errorf("the weakest level's movetime_ms %v: want 1..1000", ms)
	}
	t.Logf("stockfish's levels: %v", ids)
	if ls := engineOf(t, e, "shogifake")["levels"].([]any); len(ls) != 0 {
		t.Errorf("an engine without a strength option has levels %v", ls)
	}
}

// TestPlayLevelByID (issue 42): play_start's play.level.id names one of
// the engine's levels: the engine is sent its options (UCI_Elo and
// UCI_LimitStrength, with no client_options) before its first go, which
// gives it the level's time for the move; the game's level shows what was
// set. An unknown id is refused with the engine's levels; an id with an
// option, or with options of the client's own, is refused; "full" is no
// level at all.
func TestPlayLevelByID(t *testing.T) {
	e := chessEnv(t)
	cl := dial(t, e)
	start := func(id string, level map[string]any) map[string]any {
		cl.send(map[string]any{"type": "play_start", "id": id, "engine": "elochess", "position": map[string]any{"fen": "startpos"},
			"play": map[string]any{"side": "b", "level": level,
				"clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"main_ms": 600000, "inc_ms": 1000}}}})
		return last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == id }))
	}
	for _, c := range []struct {
		level map[string]any
		want  string
	}{
		{map[string]any{"id": "elo9999"}, "elo1320, elo1500"},
		{map[string]any{"id": "elo1320", "option": "UCI_Elo", "value": "1320"}, "not both"},
		{map[string]any{"id": "elo1320", "options": map[string]any{"UCI_Elo": "3190"}}, "send the id alone"},
		{map[string]any{"options": map[string]any{"UCI_Elo": "1320"}}, "name the level by id"},
		{map[string]any{"id": "elo1320", "movetime_ms": 5000}, "send the id alone"},
	} {
		if ev := start("bad", c.level); ev["code"] != "invalid_field" || !strings.Contains(fmt.Sprint(ev["message"]), c.want) {
			t.Fatalf("level %v: %v, want invalid_field saying %q", c.level, ev, c.want)
		}
	}

	os.Truncate(eloLog, 0)
	ev := start("p1", map[string]any{"id": "elo1320"})
	st := playOf(ev)
	if st == nil || st["status"] != "playing" {
		t.Fatalf("play_start at elo1320: %v", ev)
	}
	lv, _ := st["level"].(map[string]any)
	if opts, _ := lv["options"].(map[string]any); lv["id"] != "elo1320" || opts["UCI_Elo"] != "1320" || opts["UCI_LimitStrength"] != "true" ||
		lv["movetime_ms"] != float64(300) {
		t.Errorf("the game's level %v, want elo1320's options and 300 ms a move", lv)
	}
	// The engine (White) moves first.
	cl.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return ev["id"] == "p1" && p != nil && len(p["moves"].([]any)) == 1
	})
	b, _ := os.ReadFile(eloLog)
	lines := strings.Split(string(b), "\n")
	elo := slices.Index(lines, "setoption name UCI_Elo value 1320")
	limit := slices.Index(lines, "setoption name UCI_LimitStrength value true")
	goAt := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "go ") })
	if elo < 0 || limit < 0 || goAt < 0 || goAt < elo || goAt < limit {
		t.Fatalf("the engine's input: the level's options before the game's go, got:\n%s", b)
	}
	if g := lines[goAt]; !strings.Contains(g, " wtime 300 ") || !strings.Contains(g, "movestogo 1") {
		t.Errorf("the engine's go %q: want the level's 300 ms for one move", g)
	}
	cl.send(map[string]any{"type": "play_resign", "id": "x", "game": st["game"]})
	cl.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return ev["id"] == "p1" && p != nil && p["status"] == "ended"
	})

	st = playOf(start("p2", map[string]any{"id": "full"}))
	if st == nil || st["status"] != "playing" || st["level"] != nil {
		t.Errorf("play_start at full strength: %v, want a game without a level", st)
	} else {
		cl.send(map[string]any{"type": "play_resign", "id": "y", "game": st["game"]})
		cl.until(20*time.Second, func(ev map[string]any) bool {
			p := playOf(ev)
			return ev["id"] == "p2" && p != nil && p["status"] == "ended"
		})
	}
	testwait.For(t, "the engines given back", time.Minute, func() bool {
		for _, s := range e.pool.Status() {
			if s.Busy+s.Resetting > 0 {
				return false
			}
		}
		return true
	})
}

// TestPlayBeginnerLevel (issue 42): a beginner level named by id sets
// Skill Level 0 before the game's first go, which caps the search at depth
// 1 and gives the level's time for the move; the game's level shows its
// depth and random share.
func TestPlayBeginnerLevel(t *testing.T) {
	e := chessEnv(t)
	cl := dial(t, e)
	os.Truncate(eloLog, 0)
	cl.send(map[string]any{"type": "play_start", "id": "b1", "engine": "elochess", "position": map[string]any{"fen": "startpos"},
		"play": map[string]any{"side": "b", "level": map[string]any{"id": "beginner1"},
			"clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"main_ms": 600000, "inc_ms": 1000}}}})
	st := playOf(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "b1" })))
	if st == nil || st["status"] != "playing" {
		t.Fatalf("play_start at beginner1: %v", st)
	}
	lv, _ := st["level"].(map[string]any)
	if opts, _ := lv["options"].(map[string]any); lv["id"] != "beginner1" || opts["Skill Level"] != "0" || lv["depth"] != 1.0 || lv["random"] != 60.0 {
		t.Errorf("the game's level %v, want beginner1: Skill Level 0, depth 1, 60%% random", lv)
	}
	cl.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return ev["id"] == "b1" && p != nil && len(p["moves"].([]any)) == 1
	})
	b, _ := os.ReadFile(eloLog)
	lines := strings.Split(string(b), "\n")
	skill := slices.Index(lines, "setoption name Skill Level value 0")
	goAt := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "go ") })
	if skill < 0 || goAt < skill {
		t.Fatalf("the engine's input: Skill Level 0 before the game's go, got:\n%s", b)
	}
	if g := lines[goAt]; !strings.Contains(g, " depth 1") || !strings.Contains(g, " wtime 300 ") {
		t.Errorf("the engine's go %q: want depth 1 and the level's 300 ms", g)
	}
	cl.send(map[string]any{"type": "play_resign", "id": "x", "game": st["game"]})
	cl.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return ev["id"] == "b1" && p != nil && p["status"] == "ended"
	})
}

// TestGoDepthAndRandom (issue 42): a go's depth and random share, as a
// beginner level sends them, on Debian's stockfish: the bestmove says
// which capped it ("depth"; "random" when the move was drawn at random:
// always at 100, never at 0), the move legal either way; a random share
// is refused for a game whose positions do not list their moves, and both
// out of range.
func TestGoDepthAndRandom(t *testing.T) {
	e := chessEnv(t)
	cl := dial(t, e)
	goReq := func(id string, extra map[string]any) map[string]any {
		r := map[string]any{"type": "go", "id": id, "engine": "stockfish", "position": map[string]any{"fen": "startpos", "moves": []string{"e2e4"}},
			"btime": 60000, "wtime": 60000}
		for k, v := range extra {
			r[k] = v
		}
		cl.send(r)
		return last(cl.until(30*time.Second, func(ev map[string]any) bool {
			return ev["id"] == id && (ev["type"] == "bestmove" || ev["type"] == "error")
		}))
	}
	legal := map[string]bool{}
	for _, m := range []string{"a7a6", "a7a5", "b7b6", "b7b5", "c7c6", "c7c5", "d7d6", "d7d5", "e7e6", "e7e5", "f7f6", "f7f5", "g7g6", "g7g5", "h7h6", "h7h5", "b8a6", "b8c6", "g8f6", "g8h6"} {
		legal[m] = true
	}
	for _, c := range []struct {
		random int
		capped string
	}{{0, "[depth]"}, {100, "[depth random]"}} {
		for i := range 5 {
			ev := goReq(fmt.Sprint("g", c.random, i), map[string]any{"depth": 1, "random": c.random})
			if ev["type"] != "bestmove" || !legal[fmt.Sprint(ev["move"])] || fmt.Sprint(ev["capped"]) != c.capped || ev["emulated"] != nil {
				t.Fatalf("go depth 1 random %d: %v, want a legal bestmove capped %s by the engine", c.random, ev, c.capped)
			}
		}
	}
	for _, c := range []struct {
		req  map[string]any
		want string
	}{
		{map[string]any{"depth": 0}, "depth 0"},
		{map[string]any{"random": 101}, "random 101"},
		{map[string]any{"random": -1}, "random -1"},
	} {
		if ev := goReq("bad", c.req); ev["code"] != "invalid_field" || !strings.Contains(fmt.Sprint(ev["message"]), c.want) {
			t.Errorf("go %v: %v, want invalid_field saying %q", c.req, ev, c.want)
		}
	}
	cl.send(map[string]any{"type": "go", "id": "shogi", "engine": "shogifake", "position": map[string]any{"sfen": "startpos"},
		"btime": 1000, "wtime": 1000, "random": 50})
	if ev := last(cl.until(30*time.Second, func(ev map[string]any) bool { return ev["id"] == "shogi" })); ev["code"] != "invalid_field" || !strings.Contains(fmt.Sprint(ev["message"]), "do not list their moves") {
		t.Errorf("go random on shogi: %v, want invalid_field", ev)
	}
}
