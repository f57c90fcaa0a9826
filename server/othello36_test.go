package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/othello"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

// othelloEnv serves othello engines from minimal entries (name and path:
// what they speak is learned): a USI-X engine, a UOI-draft engine, and a
// USI-X engine that misplays a pass inside a move list.
func othelloEnv(t *testing.T) *env {
	t.Helper()
	fake := func(name, mode string) pool.EngineConfig {
		return pool.EngineConfig{Name: name, Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + mode}}
	}
	e, err := newEnvWith([]pool.EngineConfig{fake("usix", fakeengine.USIX), fake("uoi", fakeengine.UOI),
		fake("misplay", fakeengine.USIXPassMisplay), fake("float", fakeengine.USIXFloat), fake("illegalpv", fakeengine.USIXIllegalPV)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

// TestOthelloLineCut (issue 43): a USI-X engine's pv of illegal squares
// reached clients whole; now every line shown is cut at its first illegal
// move, through the game's rules (game.Position.Legal), as shogi's and
// chess's are.
func TestOthelloLineCut(t *testing.T) {
	e := othelloEnv(t)
	code, _, v := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "illegalpv", "position": map[string]any{"othello": "startpos"}, "limits": map[string]any{"depth": 1}})
	if code != 200 {
		t.Fatalf("analyze: %d %v", code, v)
	}
	lines, _ := v["lines"].([]any)
	if len(lines) != 1 {
		t.Fatalf("lines: %v", v)
	}
	pv := fmt.Sprint(lines[0].(map[string]any)["pv"])
	t.Logf("the engine's line d3 d4 e5 was answered as %s", pv)
	if pv != fmt.Sprint([]any{v["bestmove"]}) {
		t.Errorf("pv %s, want the best move %v alone (d4 and e5 are occupied)", pv, v["bestmove"])
	}
}

// passPosition is a game from the start whose last move is a pass: White
// had no square. Found by walking the legal moves (the rules, not an
// engine, say where a pass comes).
func passPosition(t *testing.T) []string {
	t.Helper()
	var walk func(p *othello.Position, moves []string, depth int) []string
	walk = func(p *othello.Position, moves []string, depth int) []string {
		if len(moves) > 0 && moves[len(moves)-1] == "pass" && !p.IsOver() {
			return moves
		}
		if depth == 0 || p.IsOver() {
			return nil
		}
		for _, m := range p.LegalMoves() {
			q := *p
			q.Play(m)
			if r := walk(&q, append(append([]string(nil), moves...), m.String()), depth-1); r != nil {
				return r
			}
		}
		return nil
	}
	// The shortest games with a pass are short: a wipe-out needs only 9
	// plies, and a side runs out of squares early in some lines.
	for depth := 1; depth <= 12; depth++ {
		if r := walk(othello.Startpos(), nil, depth); r != nil {
			return r
		}
	}
	t.Fatal("no game with a pass within 12 plies")
	return nil
}

// TestOthelloValidate (issue 36): /v1/validate takes othello positions
// (the USI-X token, or the UOI draft's ofen) and refuses bad ones with
// codes; a forced pass is the one legal move, an ended game has none.
func TestOthelloValidate(t *testing.T) {
	code, _, v := call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": "startpos", "moves": []string{"f5", "d6"}}})
	if code != 200 || v["valid"] != true || v["side_to_move"] != "b" || len(v["legal_moves"].([]any)) != 5 ||
		v["othello"] != "---------------------------OX------OXX-----O--------------------B3" {
		t.Errorf("f5 d6: %d %v", code, v)
	}
	moves := passPosition(t)
	before := moves[:len(moves)-1]
	if _, _, v := call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": "startpos", "moves": before}}); v["valid"] != true || len(v["legal_moves"].([]any)) != 1 || v["legal_moves"].([]any)[0] != "pass" {
		t.Errorf("a forced pass: %v", v)
	}
	ofen := strings.ReplaceAll(othello.StartToken[:65], "O", "0")
	if _, _, v := call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": ofen}}); v["valid"] != true || v["othello"] != othello.StartToken {
		t.Errorf("the start as an ofen: %v", v)
	}
	for pos, want := range map[string]string{
		strings.Repeat("-", 64) + "B": "centre_empty",
		othello.StartToken[:64] + "Q": "othello_side",
		"XO":                          "othello_length",
	} {
		code, _, v := call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": pos}})
		errs, _ := v["errors"].([]any)
		if code != 200 || v["valid"] != false || len(errs) == 0 || errs[0].(map[string]any)["code"] != want {
			t.Errorf("%q: %d %v, want %s", pos, code, v, want)
		}
	}
	code, _, v = call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": "startpos", "moves": []string{"pass"}}})
	if errs, _ := v["errors"].([]any); code != 200 || v["valid"] != false || errs[0].(map[string]any)["code"] != "pass_not_allowed" {
		t.Errorf("a pass with squares to play: %d %v", code, v)
	}
	code, _, v = call(t, shared, "POST", "/v1/validate", map[string]any{"position": map[string]any{"othello": "startpos", "sfen": "startpos"}})
	if code != 422 || v["code"] != "invalid_field" {
		t.Errorf("two games' fields: %d %v", code, v)
	}
}

// TestOthelloEngines (issue 36): USI-X and UOI engines learned from a
// minimal entry answer REST and WebSocket analyses of othello positions,
// their best moves checked by the rules; a pass inside the move list is
// sent as the position reached (the misplaying engine then answers a
// legal move); a position of another game is refused.
func TestOthelloEngines(t *testing.T) {
	e := othelloEnv(t)
	for _, st := range e.pool.Status() {
		if st.Profile == nil || st.Profile.Game() != "othello" {
			t.Fatalf("engine %s: profile %+v, want othello", st.Name, st.Profile)
		}
	}
	began := time.Now()
	after := []string{"f5", "d6", "c3"}
	for _, name := range []string{"usix", "uoi", "float"} {
		code, _, v := call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": name,
			"position": map[string]any{"othello": "startpos", "moves": after}, "limits": map[string]any{"movetime_ms": 100}})
		if code != 200 {
			t.Fatalf("%s: analyze: %d %v", name, code, v)
		}
		pos, _ := othello.Load("startpos", after)
		if _, err := pos.CheckMove(v["bestmove"].(string)); err != nil {
			t.Errorf("%s: best move %v: %v", name, v["bestmove"], err)
		}
		lines, _ := v["lines"].([]any)
		if name != "uoi" && len(lines) != 1 {
			t.Errorf("%s: lines %v", name, v["lines"])
		}
		t.Logf("%s answered after %v", name, time.Since(began))
		if name == "float" {
			sc := lines[0].(map[string]any)["score"].(map[string]any)
			if sc["points"] != 41.0 || num(sc["cp"]) != 4100 {
				t.Errorf("float scores: %v, want points 41 and cp 4100", sc)
			}
		}
	}

	// A pass in the list: the misplaying engine is told the position
	// reached, and answers a legal move.
	moves := passPosition(t)
	code, _, v := call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": "misplay",
		"position": map[string]any{"othello": "startpos", "moves": moves}, "limits": map[string]any{"nodes": 1000}})
	pos, _ := othello.Load("startpos", moves)
	if code != 200 {
		t.Fatalf("after a pass (%v): %d %v", moves, code, v)
	}
	if _, err := pos.CheckMove(v["bestmove"].(string)); err != nil {
		t.Errorf("after a pass: best move %v: %v", v["bestmove"], err)
	}
	var sentPass bool
	for _, l := range e.sentTo("misplay") {
		sentPass = sentPass || strings.HasPrefix(l, "position") && strings.Contains(l, "pass")
	}
	if sentPass {
		t.Error("a move list with a pass was sent to the engine")
	}

	// The WebSocket: an analysis until stop, one terminal event.
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "a1", "engine": "usix", "position": map[string]any{"othello": "startpos"}})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "a1" && ev["type"] == "info" })
	cl.send(map[string]any{"type": "stop", "id": "a1"})
	end := last(cl.terminal("a1", 10*time.Second))
	if end["type"] != "bestmove" || !strings.Contains("c4 d3 e6 f5", end["move"].(string)) {
		t.Errorf("terminal event %v", end)
	}

	// Another game's position for an othello engine.
	if code, _, v := call(t, e, http.MethodPost, "/v1/analyze", map[string]any{"engine": "usix",
		"position": map[string]any{"sfen": "startpos"}, "limits": map[string]any{"nodes": 1000}}); code != 422 || v["code"] != "game_mismatch" {
		t.Errorf("a shogi position for an othello engine: %d %v", code, v)
	}
	e.waitIdle(t)
}

// TestOthelloPlayAndAnalysis (issue 36): a game against each othello
// engine played to its end by the rules (the human playing the first legal
// square, passing when it must), the result by disc count; then the game
// analysed, every position evaluated and the last judged by the count.
func TestOthelloPlayAndAnalysis(t *testing.T) {
	e := othelloEnv(t)
	// The UOI draft's clocks have increments, no byoyomi.
	clocks := map[string]any{"usix": map[string]any{"main_ms": 600000, "byoyomi_ms": 1000}, "uoi": map[string]any{"main_ms": 600000, "inc_ms": 1000}}
	for _, name := range []string{"usix", "uoi"} {
		cl := dial(t, e)
		cl.send(map[string]any{"type": "play_start", "id": "p", "engine": name, "position": map[string]any{"othello": "startpos"},
			"play": map[string]any{"side": "b", "clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": clocks[name]}}})
		play := func(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }
		st := play(last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p" })))
		if st == nil || st["status"] != "playing" {
			t.Fatalf("%s: play_start: %v", name, st)
		}
		game := st["game"].(string)
		for st["status"] == "playing" {
			ms := st["moves"].([]any)
			moves := make([]string, len(ms))
			for i, m := range ms {
				moves[i] = m.(string)
			}
			pos, errs := othello.Load("startpos", moves)
			if errs != nil {
				t.Fatalf("%s: the game's moves %v: %v", name, moves, errs[0])
			}
			if pos.Turn() == othello.Black {
				cl.send(map[string]any{"type": "play_move", "id": "m", "game": game, "move": pos.LegalMoves()[0].String()})
			}
			n := len(moves)
			st = play(last(cl.until(20*time.Second, func(ev map[string]any) bool {
				p := play(ev)
				return ev["id"] == "p" && p != nil && (len(p["moves"].([]any)) > n || p["status"] != "playing")
			})))
		}
		ms := st["moves"].([]any)
		moves := make([]string, len(ms))
		for i, m := range ms {
			moves[i] = m.(string)
		}
		pos, errs := othello.Load("startpos", moves)
		res, over := othello.Result{}, false
		if errs == nil {
			res, over = pos.Outcome()
		}
		r, _ := st["result"].(map[string]any)
		want := map[othello.Winner]string{othello.BlackWins: "b", othello.WhiteWins: "w", othello.Draw: ""}[res.Winner]
		if !over || r == nil || r["reason"] != "discs" || r["winner"] != want {
			t.Fatalf("%s: ended %v after %d moves, the rules say over %v %+v", name, r, len(moves), over, res)
		}
		t.Logf("%s: %d moves, %v", name, len(moves), r)

		// The game analysed: every position evaluated, the last by the
		// count.
		code, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{"engine": name,
			"position": map[string]any{"othello": "startpos", "moves": moves}, "limits": map[string]any{"movetime_ms": 50}})
		if code != 202 {
			t.Fatalf("%s: game analysis: %d %v", name, code, v)
		}
		id := v["id"].(string)
		deadline := time.Now().Add(2 * time.Minute)
		for v["finished_at"] == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			_, _, v = call(t, e, http.MethodGet, "/v1/games/analysis/"+id, nil)
		}
		if v["status"] != "done" {
			t.Fatalf("%s: analysis %v %v", name, v["status"], v["error"])
		}
		ps := v["positions"].([]any)
		if len(ps) != len(moves)+1 {
			t.Fatalf("%s: %d positions for %d moves", name, len(ps), len(moves))
		}
		for i, x := range ps {
			p, _ := x.(map[string]any)
			if p == nil || p["othello"] == nil || p["eval"] == nil {
				t.Fatalf("%s: ply %d: %v", name, i, p)
			}
		}
		if lastPly := ps[len(ps)-1].(map[string]any); lastPly["bestmove"] != nil && lastPly["bestmove"] != "" {
			t.Errorf("%s: the ended position was searched: %v", name, lastPly)
		}
		e.waitIdle(t)
	}
}

// TestOthelloForcedPassAnalysed: in a game analysis, a position whose
// side to move must pass is worth the next position (no engine is asked
// about it: the UOI draft tells its engines "pass", not "go", and the
// engines seen answer it without a score), and the move before it is
// judged against it. Before, the position had no evaluation: a hole in
// the graph, and the move before it and the pass "no_evaluation".
func TestOthelloForcedPassAnalysed(t *testing.T) {
	e := othelloEnv(t)
	// A game whose last position has White without a square and Black
	// with one (found by random play).
	const toPass = "d3c3b3b2b1d2e3e2d1a1f3a3f5g3f4f2f1g5h3c5c4c2g4g1h1c1d6e1b6c6b4e6c7h5g2a7h6e7a2c8e8h7b7b5a4f8g8h2g6h4a6f7d8b8a5f6d7h8g7"
	var moves []string
	for i := 0; i < len(toPass); i += 2 {
		moves = append(moves, toPass[i:i+2])
	}
	moves = append(moves, "pass")
	pos, errs := othello.Load("startpos", moves)
	if errs != nil {
		t.Fatal(errs[0])
	}
	moves = append(moves, pos.LegalMoves()[0].String()) // the board full: the end
	pass := len(moves) - 2
	for _, name := range []string{"usix", "uoi"} {
		code, _, v := call(t, e, http.MethodPost, "/v1/games/analysis", map[string]any{"engine": name,
			"position": map[string]any{"othello": "startpos", "moves": moves}, "limits": map[string]any{"movetime_ms": 50}})
		if code != 202 {
			t.Fatalf("%s: game analysis: %d %v", name, code, v)
		}
		id := v["id"].(string)
		testwait.For(t, name+": the analysis ends", 2*time.Minute, func() bool {
			_, _, v = call(t, e, http.MethodGet, "/v1/games/analysis/"+id, nil)
			return v["finished_at"] != nil
		})
		if v["status"] != "done" {
			t.Fatalf("%s: analysis %v %v", name, v["status"], v["error"])
		}
		ps := v["positions"].([]any)
		p, next, before := ps[pass].(map[string]any), ps[pass+1].(map[string]any), ps[pass-1].(map[string]any)
		if p["bestmove"] != "pass" || p["eval"] == nil || fmt.Sprint(p["eval"]) != fmt.Sprint(next["eval"]) {
			t.Errorf("%s: the forced pass %v, the position after it %v", name, p, next)
		}
		if p["judgement"] != "ok" || before["judgement"] == nil {
			t.Errorf("%s: the pass judged %v, the move before it %v (%v)", name, p["judgement"], before["judgement"], before["unjudged"])
		}
		e.waitIdle(t)
	}
}

// TestOthelloDefaultsOnEveryRoute (issue 43): /v1/mate naming no engine
// took the default engine (a shogi one) for an othello position where
// /v1/analyze took the othello engine; every route now takes an engine of
// the position's game (session's engineOf).
func TestOthelloDefaultsOnEveryRoute(t *testing.T) {
	e, err := newEnvWith([]pool.EngineConfig{{Name: "usix", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.USIX}}},
		func(c *session.Config) { c.DefaultEngine = "shogi-default" })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	pos := map[string]any{"othello": "startpos"}
	code, _, v := call(t, e, "POST", "/v1/analyze", map[string]any{"position": pos, "limits": map[string]any{"depth": 1}})
	if code != 200 || v["engine"] != "usix" {
		t.Fatalf("analyze: %d %v, want the usix engine", code, v)
	}
	code, _, v = call(t, e, "POST", "/v1/mate", map[string]any{"position": pos})
	t.Logf("mate of an othello position: %d %v", code, v)
	if s := fmt.Sprint(v); strings.Contains(s, "shogi-default") || !strings.Contains(s, "usix") {
		t.Errorf("mate: %d %v, want an answer of the usix engine (othello's), not of the default", code, v)
	}
}
