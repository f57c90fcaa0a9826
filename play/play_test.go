package play

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/pooltest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

const (
	fairyPath     = "/usr/games/fairy-stockfish"
	stockfishPath = "/usr/games/stockfish"
)

var (
	shared *pool.Pool
	svc    *session.Service
)

func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	lo, hi := -20, 20
	fake := func(name, mode string) pool.EngineConfig {
		return pool.EngineConfig{Name: name, Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + mode}}
	}
	os.Exit(pooltest.Main(m, map[string]string{fairyPath: "fairy-stockfish", stockfishPath: "stockfish"}, []pool.EngineConfig{
		// A chess engine with a minimal entry (the dialect is learned).
		{Name: "stockfish", Path: stockfishPath, Options: map[string]string{"Hash": "16", "Threads": "1"},
			ClientOptions: map[string]pool.OptionRule{"Skill Level": {}}},
		{Name: "fairy", Path: fairyPath, Instances: 2, Options: map[string]string{"USI_Hash": "16", "Threads": "1"},
			ClientOptions: map[string]pool.OptionRule{"Skill Level": {Min: &lo, Max: &hi}}},
		fake("resigner", fakeengine.BestMoveAs+"=resign"),
		fake("declarer", fakeengine.BestMoveAs+"=win"),
		fake("sleeper", fakeengine.IgnoreClock),
	}, func(p *pool.Pool) {
		shared = p
		svc = session.NewService(session.Config{Pool: p, DefaultEngine: "fairy"})
	}, func(*pool.Pool) bool { return allIdle() }))
}

func allIdle() bool {
	for _, st := range shared.Status() {
		if st.Idle != st.Instances || shared.Profile(st.Name) == nil {
			return false
		}
	}
	return true
}

// waitIdle waits until every engine is back in the pool: a game's end
// gives its engine back.
func waitIdle(t *testing.T) {
	t.Helper()
	testwait.For(t, "every engine given back", 2*time.Minute, allIdle)
}

// conn is one client connection: its events, and its end.
type conn struct {
	t      testing.TB
	ctx    context.Context
	cancel context.CancelFunc
	run    session.PlayRunner
	events chan *session.Event
}

func newConn(t *testing.T, m *Manager, client string) *conn {
	return newConnAs(t, m, session.Caller{Client: client})
}

// newConnAs is newConn for a caller with more than a name (a budget).
func newConnAs(t testing.TB, m *Manager, who session.Caller) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &conn{t: t, ctx: ctx, cancel: cancel, run: m.For(who), events: make(chan *session.Event, 4096)}
}

func (c *conn) send(r *session.Request) {
	c.run.Play(c.ctx, r, func(ev *session.Event) {
		select {
		case c.events <- ev:
		default:
			c.t.Error("event buffer full")
		}
	})
}

// next waits for the connection's next event.
func (c *conn) next() *session.Event {
	c.t.Helper()
	select {
	case ev := <-c.events:
		return ev
	case <-time.After(60 * time.Second):
		c.t.Fatal("no event within 60s")
	}
	return nil
}

// state waits for the next play event and decodes it; an error event
// fails the test.
func (c *conn) state() *stateView {
	c.t.Helper()
	ev := c.next()
	if ev.Type != session.EventPlay {
		c.t.Fatalf("got %s event %+v, want play", ev.Type, ev)
	}
	var v stateView
	if err := json.Unmarshal(ev.Play, &v); err != nil {
		c.t.Fatal(err)
	}
	return &v
}

// errorCode waits for an error event and returns its code.
func (c *conn) errorCode() string {
	c.t.Helper()
	ev := c.next()
	if ev.Type != session.EventError {
		c.t.Fatalf("got %s event %s, want an error", ev.Type, ev.Play)
	}
	return ev.Code
}

func startReq(id, engine string, opts string, pos *session.Position) *session.Request {
	return &session.Request{Type: session.TypePlayStart, ID: id, Engine: engine, Play: json.RawMessage(opts), Position: pos}
}

// until reads play events until one satisfies ok.
func (c *conn) until(ok func(*stateView) bool) *stateView {
	c.t.Helper()
	for {
		if v := c.state(); ok(v) {
			return v
		}
	}
}

func ended(v *stateView) bool { return v.Status == statusEnded }

func checkResult(t *testing.T, v *stateView, winner, reason, end string) {
	t.Helper()
	if v.Status != statusEnded || v.Result == nil {
		t.Fatalf("game not ended: %+v", v.Public)
	}
	if r := v.Result; r.Winner != winner || r.Reason != reason || r.End != end {
		t.Errorf("result %+v, want winner %q reason %q end %q", *r, winner, reason, end)
	}
	if v.Clock.Running != "" {
		t.Errorf("an ended game's clock runs: %+v", v.Clock)
	}
}

// TestGameAgainstFairy plays moves against fairy-stockfish at byoyomi 1 s
// with pondering: every engine move within its time (byoyomi plus the
// lag allowance, else the game would have ended on time), the clocks as
// the rules say after each move, the ponder move played now and then
// (ponderhit) and not (stop, go), then the human resigns.
func TestGameAgainstFairy(t *testing.T) {
	// A generous lag: on a busy machine (CI at load 8) the engine told 800 ms
	// overshot byoyomi + 300 ms and lost on time; the engine's punctuality
	// is measured by the browser test (web/e2e/play.test.mjs), and here the
	// subject is the clocks and pondering.
	const lag = 5 * time.Second
	m := New(Config{Service: svc, Lag: lag})
	defer m.Close(context.Background())
	c := newConn(t, m, "alice")
	c.send(startReq("g1", "fairy", `{"side":"b","clock":{"b":{"byoyomi_ms":1000},"w":{"byoyomi_ms":1000}},"level":{"option":"Skill Level","value":"0"},"ponder":true}`, nil))
	v := c.state()
	if v.Status != statusPlaying || v.Clock.Running != "b" || v.Human != "b" || v.SFEN != "startpos" {
		t.Fatalf("start: %+v", v)
	}
	if !v.Ponder {
		t.Errorf("fairy's profile has a ponder option (%q) but the game does not ponder", shared.Profile("fairy").PonderOption)
	}
	g := m.find("alice", v.ID)
	hits := 0
	for ply := 0; ply < 12; ply += 2 {
		pos, _ := shogi.Load(v.SFEN, v.Moves)
		move := pos.LegalMoves()[ply%len(pos.LegalMoves())].String()
		g.mu.Lock()
		if g.ponderMove != "" && ply%4 == 0 && pos.IsLegal(mustMove(g.ponderMove)) {
			move, hits = g.ponderMove, hits+1
		}
		g.mu.Unlock()
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: move})
		v = c.state()
		if v.Status != statusPlaying {
			t.Fatalf("after the human's move %s: %+v", move, v.Result)
		}
		if v.Clock.Running != "w" || v.Clock.B != (SideClock{0, 1000}) {
			t.Errorf("after the human's move: clock %+v, want White running and Black's byoyomi whole", v.Clock)
		}
		v = c.state()
		if v.Status != statusPlaying {
			t.Fatalf("after the engine's move: %+v (times %v)", v.Result, v.TimesMS)
		}
		took := v.TimesMS[len(v.TimesMS)-1]
		if took > 1000+lag.Milliseconds() {
			t.Errorf("the engine took %d ms, over byoyomi + lag", took)
		}
		if v.Clock.Running != "b" || v.Clock.W != (SideClock{0, 1000}) || v.Clock.B.MainMS != 0 || v.Clock.B.ByoyomiMS > 1000 {
			t.Errorf("after the engine's move: clock %+v", v.Clock)
		}
	}
	if hits == 0 {
		t.Errorf("the ponder move was never played: ponderhit untested")
	}
	if len(v.Moves) != 12 || len(v.MovesKIF) != 12 || len(v.TimesMS) != 12 {
		t.Errorf("moves %d, kif %d, times %d; want 12 each", len(v.Moves), len(v.MovesKIF), len(v.TimesMS))
	}
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.state(), "w", "resign", "resign")
	waitIdle(t)
}

func mustMove(s string) shogi.Move {
	m, _ := shogi.ParseMove(s)
	return m
}

// TestHumanLosesOnTime: sudden death, the human does not move.
func TestHumanLosesOnTime(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "bob")
	c.send(startReq("g", "fairy", `{"side":"b","clock":{"b":{"main_ms":200},"w":{"main_ms":60000}}}`, nil))
	start := c.state()
	v := c.until(ended)
	checkResult(t, v, "w", "time", "time_up")
	if v.Clock.B.MainMS != 0 {
		t.Errorf("Black's clock shows %d ms after losing on time", v.Clock.B.MainMS)
	}
	// A late move is refused.
	c.send(&session.Request{Type: session.TypePlayMove, ID: "late", Game: start.ID, Move: "7g7f"})
	if code := c.errorCode(); code != session.CodeInvalidField {
		t.Errorf("a move after the end: %s, want invalid_field", code)
	}
}

// TestEngineLosesOnTime: an engine that thinks past its time loses; its
// search is stopped and the engine given back.
func TestEngineLosesOnTime(t *testing.T) {
	m := New(Config{Service: svc, Lag: 50 * time.Millisecond})
	defer m.Close(context.Background())
	c := newConn(t, m, "carol")
	c.send(startReq("g", "sleeper", `{"side":"b","clock":{"b":{"main_ms":60000},"w":{"main_ms":300}}}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	v = c.until(ended)
	checkResult(t, v, "b", "time", "time_up")
	waitIdle(t)
}

// TestEngineResignsAndDeclares: bestmove resign ends the game; bestmove
// win is judged by the 27-point rule.
func TestEngineResignsAndDeclares(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	clock := `"clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}`
	c := newConn(t, m, "dave")
	c.send(startReq("g", "resigner", `{"side":"b",`+clock+`}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	checkResult(t, c.until(ended), "b", "resign", "resign")

	for _, tt := range []struct {
		hand           string
		winner, reason string
		end            string
	}{
		{"rb", "w", "declaration", "declare_win"},         // 27 points: White may declare
		{"r", "b", "illegal_declaration", "illegal_loss"}, // 22 points: a false declaration loses
	} {
		sfen := "4K4/9/9/9/9/9/ppppppppp/4k4/+l+nsg1gs+n+l b " + tt.hand + " 1"
		c.send(startReq("g", "declarer", `{"side":"b",`+clock+`}`, &session.Position{Start: sfen}))
		v := c.state()
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "5a4a"})
		checkResult(t, c.until(ended), tt.winner, tt.reason, tt.end)
	}
	// The human declares too: from the start, a false declaration.
	c.send(startReq("g", "fairy", `{"side":"b",`+clock+`}`, nil))
	v = c.state()
	c.send(&session.Request{Type: session.TypePlayDeclare, ID: "d", Game: v.ID})
	v = c.state()
	checkResult(t, v, "w", "illegal_declaration", "illegal_loss")
	if v.Result.Detail != "king_not_in_camp" {
		t.Errorf("detail %q, want king_not_in_camp", v.Result.Detail)
	}
	waitIdle(t)
}

// TestRepetitionInGame: the board's moves count for 千日手; the fourth
// occurrence ends the game, a draw, or a loss for the side that gave
// check with every move.
func TestRepetitionInGame(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	clock := `"clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}`
	c := newConn(t, m, "erin")
	walk := strings.Fields(strings.Repeat("5i5h 5a5b 5h5i 5b5a ", 3))
	c.send(startReq("g", "fairy", `{"side":"w",`+clock+`}`, &session.Position{Moves: walk[:11]}))
	v := c.state()
	if v.Pre != 11 || v.Clock.Running != "w" {
		t.Fatalf("start: pre %d, running %q", v.Pre, v.Clock.Running)
	}
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "5b5a"})
	checkResult(t, c.state(), "", "repetition", "repetition")

	checks := strings.Fields(strings.Repeat("5i4i 4a5a 4i5i 5a4a ", 3))
	c.send(startReq("g", "fairy", `{"side":"w",`+clock+`}`, &session.Position{Start: "5k3/9/9/9/9/9/9/9/K3R4 b - 1", Moves: checks[:11]}))
	v = c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "5a4a"})
	// Black (the engine) checked with every move: White wins; Black is to
	// move, so the record says 反則負け.
	checkResult(t, c.state(), "w", "perpetual_check", "illegal_loss")
	waitIdle(t)
}

// TestResumeAndAbandon: a game outlives its connection for the grace
// period; a new connection of the same client resumes it, another
// client's does not find it; past the grace the game is lost.
func TestResumeAndAbandon(t *testing.T) {
	// The engine's clock is not what this test is about: a generous lag,
	// so that a loaded machine's slow answer does not end the game on time.
	m := New(Config{Service: svc, Grace: 300 * time.Millisecond, Lag: time.Minute})
	defer m.Close(context.Background())
	c := newConn(t, m, "frank")
	c.send(startReq("g", "fairy", `{"side":"b","clock":{"b":{"main_ms":600000},"w":{"byoyomi_ms":1000}}}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	c.state()
	v = c.state() // the engine's answer
	c.cancel()    // the page reloads

	other := newConn(t, m, "mallory")
	other.send(&session.Request{Type: session.TypePlayResume, ID: "x", Game: v.ID})
	if code := other.errorCode(); code != CodeNotFound {
		t.Errorf("another client's resume: %s, want not_found", code)
	}
	c2 := newConn(t, m, "frank")
	c2.send(&session.Request{Type: session.TypePlayResume, ID: "again", Game: v.ID})
	r := c2.state()
	if r.Status != statusPlaying || len(r.Moves) != 2 || r.Clock.Running != "b" || r.Clock.B.MainMS > v.Clock.B.MainMS {
		t.Errorf("resumed: %+v, clock %+v (was %+v)", r.Public, r.Clock, v.Clock)
	}
	c2.cancel()
	// Nobody comes back: abandoned after the grace.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, ok, _ := m.cfg.Store.Load(context.Background(), v.ID)
		if ok && st.Status == statusEnded {
			if st.Result.Reason != "abandoned" || st.Result.Winner != "w" {
				t.Errorf("result %+v, want abandoned, White wins", st.Result)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the game was not abandoned")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c3 := newConn(t, m, "frank")
	c3.send(&session.Request{Type: session.TypePlayResume, ID: "late", Game: v.ID})
	checkResult(t, c3.state(), "w", "abandoned", "abort")
	waitIdle(t)
}

// TestRefusals: bad settings, bad moves and the bounds get errors with
// stable codes and reach no engine.
func TestRefusals(t *testing.T) {
	m := New(Config{Service: svc, MaxPerClient: 1, MaxGames: 2, MaxKept: 1})
	defer m.Close(context.Background())
	clock := `"clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}`
	c := newConn(t, m, "gina")
	for _, tt := range []struct {
		opts string
		pos  *session.Position
		code string
	}{
		{`{"side":"x",` + clock + `}`, nil, session.CodeInvalidField},
		{`{"side":"b","clock":{"b":{"byoyomi_ms":1000,"inc_ms":1000},"w":{"main_ms":1}}}`, nil, session.CodeInvalidField},
		{`{"side":"b","clock":{"b":{},"w":{"main_ms":1}}}`, nil, session.CodeInvalidField},
		{`{"side":"b","clock":{"b":{"main_ms":-1},"w":{"main_ms":1}}}`, nil, session.CodeInvalidField},
		{`{"side":"b","handicap":"八百長",` + clock + `}`, nil, session.CodeInvalidField},
		{`{"side":"b","handicap":"角落ち",` + clock + `}`, &session.Position{Moves: []string{"7g7f"}}, session.CodeInvalidField},
		{`{"side":"b","colour":"b",` + clock + `}`, nil, session.CodeBadRequest},
		{`{"side":"b",` + clock + `}`, &session.Position{Moves: []string{"7g7f", "7g7f"}}, "illegal_move"},
	} {
		c.send(startReq("bad", "", tt.opts, tt.pos))
		if code := c.errorCode(); code != tt.code && !(tt.code == "illegal_move" && code != "") {
			t.Errorf("%s %+v: %s, want %s", tt.opts, tt.pos, code, tt.code)
		}
	}
	c.send(startReq("g", "fairy", `{"side":"w","handicap":"角落ち",`+clock+`}`, nil))
	v := c.state()
	if v.Handicap != "角落ち" || v.Clock.Running != "w" {
		t.Errorf("handicap start: %+v", v.Public)
	}
	// The handicap giver (White, the human here) moves first; an illegal
	// move is refused and the game goes on.
	c.send(&session.Request{Type: session.TypePlayMove, ID: "bad", Game: v.ID, Move: "5a5c"})
	if code := c.errorCode(); code == "" {
		t.Error("an illegal move was taken")
	}
	c.send(startReq("g2", "fairy", `{"side":"b",`+clock+`}`, nil))
	if code := c.errorCode(); code != session.CodeTooManyRequests {
		t.Errorf("a second game for one client: %s, want too_many_requests", code)
	}
	d := newConn(t, m, "hal")
	d.send(startReq("g", "fairy", `{"side":"b",`+clock+`}`, nil))
	d.state()
	e := newConn(t, m, "ida")
	e.send(startReq("g", "fairy", `{"side":"b",`+clock+`}`, nil))
	// The server's bound is its capacity, as games.max_jobs: 503
	// queue_full (issue 37: it was 429 too_many_requests, against README).
	if code := e.errorCode(); code != session.CodeQueueFull {
		t.Errorf("a game past the total: %s, want queue_full", code)
	}
	// Ended games are kept, at most MaxKept.
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	c.state()
	if playing, kept := m.Counts(); playing != 1 || kept != 1 {
		t.Errorf("counts: %d playing, %d kept; want 1, 1", playing, kept)
	}
	c.send(startReq("g", "fairy", `{"side":"b",`+clock+`}`, nil))
	w := c.state()
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: w.ID})
	c.state()
	if _, kept := m.Counts(); kept != 1 {
		t.Errorf("%d ended games kept, want at most 1", kept)
	}
	if st := m.cfg.Store.(*MemoryStore); st.Len() != 2 {
		t.Errorf("the store holds %d games, want 2 (one playing, one kept)", st.Len())
	}
	m.Close(context.Background())
	v = d.until(ended)
	if v.Result.Reason != "aborted" {
		t.Errorf("a game at shutdown: %+v", v.Result)
	}
	waitIdle(t)
}
