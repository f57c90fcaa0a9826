package match

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gameseam "github.com/usid/usid/game"
	_ "github.com/usid/usid/game/builtin"
	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/pooltest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/match/stats"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
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
		return pool.EngineConfig{Name: name, Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + mode}, Instances: 2}
	}
	os.Exit(pooltest.Main(m, map[string]string{fairyPath: "fairy-stockfish", stockfishPath: "stockfish"}, []pool.EngineConfig{
		{Name: "stockfish", Path: stockfishPath, Instances: 2, Options: map[string]string{"Hash": "16", "Threads": "1"},
			// The options of stockfish's levels (TestBeginnerLevels): a
			// match player sets only client_options, levels' included.
			ClientOptions: map[string]pool.OptionRule{"Skill Level": {}, "UCI_LimitStrength": {}, "UCI_Elo": {}}},
		{Name: "fairy", Path: fairyPath, Instances: 2, Options: map[string]string{"USI_Hash": "16", "Threads": "1"},
			ClientOptions: map[string]pool.OptionRule{"Skill Level": {Min: &lo, Max: &hi}}},
		pooltest.Othello("othello", 2, map[string]pool.OptionRule{"level": {}}),
		fake("fake", fakeengine.Normal),
		fake("cheat", fakeengine.IllegalBestMove),
		fake("resigner", fakeengine.BestMoveAs+"=resign"),
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

func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	cfg.Service = svc
	m := New(cfg)
	t.Cleanup(func() {
		m.Close()
		testwait.For(t, "every engine given back", time.Minute, allIdle)
	})
	return m
}

// run starts r for client and waits for its end.
func run(t *testing.T, m *Manager, client string, r *Request, wait time.Duration) *View {
	t.Helper()
	id, err := m.Start(session.Caller{Client: client}, r)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := m.Get(id).Wait(ctx); err != nil {
		t.Fatalf("match not ended within %v: %+v", wait, m.Get(id).View())
	}
	return m.Get(id).View()
}

// cancels cancels match id for client on m, and reports whether it was
// found (a store's error fails the test).
func cancels(t *testing.T, m *Manager, id, client string) bool {
	t.Helper()
	ok, err := m.Cancel(id, session.Caller{Client: client})
	if err != nil {
		t.Fatalf("cancel %s: %v", id, err)
	}
	return ok
}

// recheck reads every game of v back from its record (KIF, PGN: the
// game's Records) and plays it again move by move with the rules: each
// move legal, the moves those of the game's position, the end by the
// rules where the game says so.
func recheck(t *testing.T, v *View) {
	t.Helper()
	g := gameseam.Named(v.Game)
	recs, _ := g.(gameseam.Records)
	for i, gm := range v.Games {
		start, moves := gm.Position.Start, gm.Position.Moves
		if recs != nil {
			var fields map[string]any
			b, _ := json.Marshal(gm.Record)
			if err := json.Unmarshal(b, &fields); err != nil || len(fields) == 0 {
				t.Fatalf("game %d: no record: %s", i, b)
			}
			var text string
			for _, f := range recs.Formats() {
				if s, ok := fields[f].(string); ok {
					text = s
				}
			}
			rs, _, rm, err := recs.ReadMain(text, 10000)
			if err != nil {
				t.Fatalf("game %d: its record does not read back: %v\n%s", i, err, text)
			}
			if !slices.Equal(rm, moves) {
				t.Fatalf("game %d: the record's moves %v, the game's %v", i, rm, moves)
			}
			start = rs
		}
		p, err := g.Check(start, gm.Position.Variant, nil)
		if err != nil {
			t.Fatalf("game %d: start %q: %v", i, start, err)
		}
		for k, mv := range moves {
			if p, err = p.Play(mv); err != nil {
				t.Fatalf("game %d: move %d %s illegal: %v", i, k, mv, err)
			}
		}
		ruled := p.Ending() != gameseam.EndNone
		byRules := map[string]bool{"checkmate": true, "repetition": true, "perpetual_check": true, "stalemate": true,
			"insufficient_material": true, "fifty_moves": true, "discs": true}
		if byRules[gm.Reason] != ruled && gm.Reason != "declaration" {
			t.Errorf("game %d ended by %q, but the rules at its last position say %q", i, gm.Reason, p.Ending())
		}
	}
}

// The default openings are legal positions of their games, and differ.
func TestDefaultOpenings(t *testing.T) {
	for _, name := range []string{"shogi", "chess", "othello"} {
		g := gameseam.Named(name)
		ops := defaultOpenings(g)
		if len(ops) < 8 {
			t.Errorf("%s: %d openings, want at least 8", name, len(ops))
		}
		seen := map[string]bool{}
		for _, op := range ops {
			chk, err := session.CheckPosition(op, 100)
			if err != nil {
				t.Errorf("%s %v: %v", name, op.Moves, err)
				continue
			}
			if seen[chk.Key()] {
				t.Errorf("%s %v: the same position twice", name, op.Moves)
			}
			seen[chk.Key()] = true
		}
	}
	if n := len(sequences(gameseam.Named("othello"), 4)); n != 244 {
		t.Errorf("othello: %d sequences of 4 moves, want 244 (perft 4)", n)
	}
}

// A clock under each control: what is left, and when a side flags.
func TestClock(t *testing.T) {
	ms := time.Millisecond
	c := newClock(&play.TimeControl{MainMS: 1000, ByoyomiMS: 500})
	if c.charge(0, 800*ms, 100*ms) || c.main[0] != 200 {
		t.Fatalf("byoyomi: got main %d, want 200 and no flag", c.main[0])
	}
	if c.charge(0, 750*ms, 100*ms) || c.main[0] != 0 {
		t.Fatalf("byoyomi: 200 main + 500 byoyomi + 100 lag covers 750: got main %d", c.main[0])
	}
	if !c.charge(0, 601*ms, 100*ms) {
		t.Fatal("byoyomi: 601 ms past the main time with 500 byoyomi and 100 lag: want a flag")
	}
	f := newClock(&play.TimeControl{MainMS: 1000, IncMS: 100})
	if f.charge(1, 500*ms, 0) || f.main[1] != 600 {
		t.Fatalf("fischer: got %d, want 600", f.main[1])
	}
	if !f.charge(1, 700*ms, 50*ms) {
		t.Fatal("fischer: 700 ms on 600 left with 50 lag: want a flag")
	}
}

// An illegal move loses, and the record says so; a full match's counts
// are its games' results.
func TestIllegalMoveLoses(t *testing.T) {
	m := newManager(t, Config{MaxPlies: 60})
	v := run(t, m, "a", &Request{
		Players:  []Player{{Engine: "cheat"}, {Engine: "fake"}},
		Pairs:    2,
		Limits:   &session.Limits{Nodes: 1000},
		Openings: []*session.Position{{Start: "startpos"}},
	}, 2*time.Minute)
	if v.Status != StatusDone || len(v.Games) != 4 {
		t.Fatalf("got status %s with %d games, want done with 4: %+v", v.Status, len(v.Games), v)
	}
	for i, g := range v.Games {
		if g.First != i%2 {
			t.Errorf("game %d: first %d, want %d (colours swapped in each pair)", i, g.First, i%2)
		}
		if g.First == 0 { // the cheat moves first, from the start: 5a5c
			if g.Winner == nil || *g.Winner != 1 || g.Reason != "illegal_move" || len(g.Position.Moves) != 0 {
				t.Errorf("game %d: got winner %v reason %q after %d moves, want players[1] by illegal_move at once", i, g.Winner, g.Reason, len(g.Position.Moves))
			}
			b, _ := json.Marshal(g.Record)
			if !strings.Contains(string(b), "反則") {
				t.Errorf("game %d: record %s does not say the illegal move lost", i, b)
			}
		} else if g.Reason == "illegal_move" {
			t.Errorf("game %d: the cheat plays legal moves as White, yet %q", i, g.Reason)
		}
	}
	// Counted from the games.
	var want Score
	for _, g := range v.Games {
		switch {
		case g.Winner == nil:
			want.Draws++
		case *g.Winner == 0:
			want.Wins++
		default:
			want.Losses++
		}
	}
	if v.Score != want || v.Pairs == nil || (*v.Pairs)[0]+(*v.Pairs)[1]+(*v.Pairs)[2]+(*v.Pairs)[3]+(*v.Pairs)[4] != 2 {
		t.Errorf("got score %+v pairs %v, want %+v over 2 pairs", v.Score, v.Pairs, want)
	}
	recheck(t, v)
}

// A resignation loses; the match's Elo is from its pairs.
func TestResignLoses(t *testing.T) {
	m := newManager(t, Config{MaxPlies: 60})
	v := run(t, m, "a", &Request{
		Players: []Player{{Engine: "fake"}, {Engine: "resigner"}},
		Games:   2,
		// BestMoveAs answers so only to a go with clocks in a game under
		// way, not from the start.
		Clock:    &play.TimeControl{MainMS: 10000, ByoyomiMS: 100},
		Openings: []*session.Position{{Start: "startpos", Moves: []string{"7g7f", "3c3d"}}},
	}, 2*time.Minute)
	if v.Status != StatusDone || v.Score != (Score{Wins: 2}) || v.Pairs == nil || *v.Pairs != [5]int{0, 0, 0, 0, 1} {
		t.Fatalf("got %s, score %+v, pairs %v; want done, 2 wins, one pair won twice", v.Status, v.Score, v.Pairs)
	}
	for i, g := range v.Games {
		if g.Reason != "resign" || g.Winner == nil || *g.Winner != 0 {
			t.Errorf("game %d: got %q winner %v, want a resignation won by players[0]", i, g.Reason, g.Winner)
		}
	}
	if v.Elo == nil || v.Elo.Model != "pentanomial" || v.Elo.Value != nil || v.Elo.LOS < 0.99 {
		t.Errorf("elo: got %+v, want pentanomial with an infinite (null) value and LOS near 1", v.Elo)
	}
}

// A player whose time runs out by the server's clock loses on time: the
// sleeper searches until stopped, whatever its clock says; it is stopped
// once its time and the lag are past, and loses.
func TestTimeLoss(t *testing.T) {
	m := newManager(t, Config{Lag: 100 * time.Millisecond})
	began := time.Now()
	v := run(t, m, "a", &Request{
		Players: []Player{{Engine: "sleeper"}, {Engine: "fake"}},
		Games:   2,
		Clock:   &play.TimeControl{MainMS: 500},
	}, 2*time.Minute)
	if v.Status != StatusDone || v.Score != (Score{Losses: 2}) {
		t.Fatalf("got %s %+v, want done with 2 losses of the sleeper", v.Status, v.Score)
	}
	for i, g := range v.Games {
		if g.Reason != "time" || g.Winner == nil || *g.Winner != 1 {
			t.Errorf("game %d: %q winner %v, want a loss on time of players[0]", i, g.Reason, g.Winner)
		}
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("two losses on a 500 ms clock took %v: the sleeper was waited for past its time", d)
	}
	recheck(t, v)
}

// Adjudication ends a game as cutechess-cli's -draw does, and says so:
// the fake engines score every move +10.
func TestDrawAdjudication(t *testing.T) {
	m := newManager(t, Config{MaxPlies: 100})
	v := run(t, m, "a", &Request{
		Players:    []Player{{Engine: "fake"}, {Engine: "fake"}},
		Games:      2,
		Limits:     &session.Limits{Nodes: 1000},
		Adjudicate: &Adjudication{Draw: &Rule{Moves: 3, Score: 20, Plies: 4}},
	}, 2*time.Minute)
	if v.Status != StatusDone || v.Score != (Score{Draws: 2}) {
		t.Fatalf("got %s %+v, want done with 2 draws", v.Status, v.Score)
	}
	for i, g := range v.Games {
		// The opening's moves, then plies 1..4 do not count, then 3 moves
		// of each side within 20: 4 + 6 plies.
		played := len(g.Position.Moves) - len(strings.Fields(defaultLines["shogi"][g.Opening]))
		b, _ := json.Marshal(g.Record)
		if g.Reason != "adjudication" || played != 10 || !strings.Contains(string(b), "adjudication") {
			t.Errorf("game %d: %q after %d plies, record %s; want adjudication after 10, said in the record", i, g.Reason, played, b)
		}
	}
	recheck(t, v)
}

// What a match may not ask for is refused with a stable code before any
// engine sees it.
func TestRefused(t *testing.T) {
	m := newManager(t, Config{MaxGames: 100, MaxConcurrency: 2})
	ok := func() *Request {
		return &Request{Players: []Player{{Engine: "fake"}, {Engine: "fairy"}}, Games: 2, Limits: &session.Limits{Nodes: 100}}
	}
	for _, c := range []struct {
		name string
		edit func(*Request)
		code string
	}{
		{"one player", func(r *Request) { r.Players = r.Players[:1] }, session.CodeInvalidField},
		{"unknown engine", func(r *Request) { r.Players[1].Engine = "nobody" }, session.CodeUnknownEngine},
		{"option with a newline", func(r *Request) { r.Players[1].Options = map[string]string{"Skill Level": "1\nquit"} }, session.CodeInvalidField},
		{"other game", func(r *Request) { r.Openings = []*session.Position{{Game: "chess", Start: "startpos"}} }, session.CodeGameMismatch},
		{"illegal opening", func(r *Request) { r.Openings = []*session.Position{{Start: "startpos", Moves: []string{"5a5c"}}} }, "opponent_piece"},
		{"too many games", func(r *Request) { r.Games = 101 }, session.CodeInvalidField},
		{"games and pairs", func(r *Request) { r.Pairs = 1 }, session.CodeInvalidField},
		{"no limit", func(r *Request) { r.Limits = nil }, session.CodeInvalidField},
		{"limits and clock", func(r *Request) { r.Clock = &play.TimeControl{MainMS: 1000} }, session.CodeInvalidField},
		{"concurrency", func(r *Request) { r.Concurrency = 3 }, session.CodeInvalidField},
		{"sprt", func(r *Request) { r.SPRT = &SPRT{Elo0: 5, Elo1: 0} }, session.CodeInvalidField},
		{"option not allowed", func(r *Request) { r.Players[1].Options = map[string]string{"USI_Hash": "4096"} }, session.CodeOptionNotAllowed},
		{"level option not allowed", func(r *Request) { r.Players[1].Level = &play.Level{Option: "Threads", Value: "8"} }, session.CodeOptionNotAllowed},
		{"level depth", func(r *Request) { r.Players[1].Level = &play.Level{Depth: -1} }, session.CodeInvalidField},
		{"unknown level", func(r *Request) { r.Players[1].Level = &play.Level{ID: "elo9999"} }, session.CodeInvalidField},
		{"level id and time", func(r *Request) { r.Players[1].Level = &play.Level{ID: "full", MoveTimeMS: 100} }, session.CodeInvalidField},
		{"level options without an id", func(r *Request) {
			r.Players[1].Level = &play.Level{Options: map[string]string{"Skill Level": "0"}}
		}, session.CodeInvalidField},
		{"random without a clock", func(r *Request) { r.Players[1].Level = &play.Level{Random: 50} }, session.CodeInvalidField},
		{"random over 100", func(r *Request) {
			r.Limits, r.Clock, r.Players[1].Level = nil, &play.TimeControl{MainMS: 1000}, &play.Level{Random: 101}
		}, session.CodeInvalidField},
		{"random in shogi", func(r *Request) {
			r.Limits, r.Clock, r.Players[1].Level = nil, &play.TimeControl{MainMS: 1000}, &play.Level{Random: 50}
		}, session.CodeInvalidField},
		{"adjudication", func(r *Request) { r.Adjudicate = &Adjudication{Resign: &Rule{Moves: 0, Score: 400}} }, session.CodeInvalidField},
	} {
		r := ok()
		c.edit(r)
		if _, err := m.Start(session.Caller{Client: "a"}, r); err == nil || err.Code != c.code {
			t.Errorf("%s: got %v, want code %s", c.name, err, c.code)
		}
	}
}

// Matches are bounded per client and in total; a cancelled match ends
// cancelled and gives its engines back.
func TestBoundsAndCancel(t *testing.T) {
	m := newManager(t, Config{MaxPerClient: 1, MaxMatches: 2, MaxRunning: 1})
	slow := &Request{Players: []Player{{Engine: "fairy"}, {Engine: "fairy"}}, Games: 50, Limits: &session.Limits{MoveTimeMS: 200}}
	id, err := m.Start(session.Caller{Client: "a"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(session.Caller{Client: "a"}, slow); err == nil || err.Code != session.CodeTooManyRequests {
		t.Fatalf("a second match of one client: got %v, want too_many_requests", err)
	}
	id2, err := m.Start(session.Caller{Client: "b"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(session.Caller{Client: "c"}, slow); err == nil || err.Code != session.CodeQueueFull {
		t.Fatalf("a third match: got %v, want queue_full", err)
	}
	if st := m.Get(id2).View().Status; st != StatusQueued {
		t.Errorf("second match with one running slot: got %s, want queued", st)
	}
	testwait.For(t, "the first match's first move", time.Minute, func() bool {
		v := m.Get(id).View()
		return v.Status == StatusRunning && len(v.Games) > 0 && len(v.Games[0].Position.Moves) > 2 // past the opening
	})
	if cancels(t, m, id, "b") {
		t.Error("another client cancelled the match")
	}
	if !cancels(t, m, id, "a") || !cancels(t, m, id2, "b") {
		t.Fatal("owners could not cancel")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, i := range []string{id, id2} {
		if err := m.Get(i).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if v := m.Get(i).View(); v.Status != StatusCancelled {
			t.Errorf("match %s: got %s, want cancelled", i, v.Status)
		}
	}
}

// strongBeatsWeak plays strong against weak, 20 pairs of games from the
// game's default openings, each move bounded by limits (or by
// USID_MATCH_MOVETIME_MS, a time a move, the 100 ms), with the
// SPRT [0, 50] (normalized Elo, fishtest's GSPRT), and checks what a
// match of a clearly stronger player shows: it finishes; the SPRT stops
// it early (before the 40 games planned) with H1; the strong side wins
// clearly (more than three times as many wins as losses) and its Elo's
// interval is above 0; and every game re-checks legal from its record.
// It logs the figures BENCHMARKS.md quotes.
func strongBeatsWeak(t *testing.T, strong, weak Player, limits *session.Limits) *View {
	t.Helper()
	if v := os.Getenv("USID_MATCH_MOVETIME_MS"); v != "" {
		var ms int64
		if err := json.Unmarshal([]byte(v), &ms); err != nil {
			t.Fatal(err)
		}
		limits = &session.Limits{MoveTimeMS: ms}
	}
	m := newManager(t, Config{})
	began := time.Now()
	v := run(t, m, "a", &Request{
		Players: []Player{strong, weak},
		Pairs:   20,
		Limits:  limits,
		SPRT:    &SPRT{Elo0: 0, Elo1: 50},
	}, 30*time.Minute)
	b, _ := json.Marshal(struct {
		Score Score
		Pairs *[5]int
		Elo   *EloView
		SPRT  *SPRTView
	}{v.Score, v.Pairs, v.Elo, v.SPRT})
	plies := 0
	reasons := map[string]int{}
	for _, g := range v.Games {
		plies += len(g.Position.Moves)
		reasons[g.Reason]++
	}
	t.Logf("%s: %d games, %d plies in %v, ends %v: %s", v.Game, len(v.Games), plies, time.Since(began).Round(time.Second), reasons, b)
	if v.Status != StatusDone {
		t.Fatalf("got %s: %+v", v.Status, v.Error)
	}
	if v.SPRT == nil || v.SPRT.Decision == nil || *v.SPRT.Decision != stats.H1 || len(v.Games) >= 40 {
		t.Errorf("got SPRT %+v after %d games, want H1 before 40", v.SPRT, len(v.Games))
	}
	// The Elo is null when infinite (every game won: a score of 1 has no
	// finite Elo); its interval's lower end is finite and above 0 either
	// way (all won: the exact binomial bound, stats.estimate).
	tri, _ := stats.FromGames(stats.Trinomial{Wins: v.Score.Wins, Draws: v.Score.Draws, Losses: v.Score.Losses})
	e := v.Elo
	above := e != nil && e.CI95[0] != nil && *e.CI95[0] > 0 && (e.Value == nil || *e.Value > *e.CI95[0]) && e.LOS > 0.99
	allWon := e != nil && e.Value == nil
	if allWon != (v.Score.Draws+v.Score.Losses == 0) {
		t.Errorf("got Elo %+v for score %+v: want null exactly when every game is won", e, v.Score)
	}
	if v.Score.Wins <= 3*v.Score.Losses || !(tri.Lo > 0) || !above {
		t.Errorf("got score %+v, Elo %+v (games: %.1f, interval %.1f..%.1f): want the strong side clearly ahead, its interval above 0",
			v.Score, e, tri.Elo, tri.Lo, tri.Hi)
	}
	recheck(t, v)
	return v
}

// Fairy-Stockfish at full strength against itself at Skill Level -20 from
// shogi's openings. Pairs all won count little in normalized Elo (an LLR
// of about 0.18 each, so that 20 games won in a row stand at 1.82 of the
// 2.94 needed): H1 comes after 17 such pairs. 3,000 nodes a move keep the
// test to about a minute under -race; at 100 ms a move it takes about ten.
func TestFairyAgainstWeakFairy(t *testing.T) {
	strongBeatsWeak(t, Player{Engine: "fairy"}, Player{Engine: "fairy", Options: map[string]string{"Skill Level": "-20"}},
		&session.Limits{Nodes: 3000})
}

// Stockfish at full strength against itself at Skill Level 0 (its weakest)
// from chess's usual first moves, by FIDE's rules, each game's record a
// PGN naming the players and their options.
func TestStockfishAgainstWeakStockfish(t *testing.T) {
	v := strongBeatsWeak(t, Player{Engine: "stockfish"}, Player{Engine: "stockfish", Options: map[string]string{"Skill Level": "0"}},
		&session.Limits{Nodes: 5000})
	for i, g := range v.Games {
		var rec struct{ PGN string }
		b, _ := json.Marshal(g.Record)
		json.Unmarshal(b, &rec)
		if !strings.Contains(rec.PGN, "[White \"stockfish") || !strings.Contains(rec.PGN, "Skill Level 0") {
			t.Errorf("game %d: record %v, want a PGN naming the players and their options", i, rec.PGN)
		}
	}
}

// usid's othello engine at full strength against its level 0 (a beginner's
// moves) from othello's perft-4 positions, ended by the count.
func TestOthelloAgainstWeakOthello(t *testing.T) {
	strongBeatsWeak(t, Player{Engine: "othello"}, Player{Engine: "othello", Options: map[string]string{"level": "0"}},
		&session.Limits{Nodes: 2000})
}
