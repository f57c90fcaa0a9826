package review

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
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

var shared *pool.Pool

func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	os.Exit(pooltest.Main(m, map[string]string{fairyPath: "fairy-stockfish", stockfishPath: "stockfish"}, []pool.EngineConfig{
		{Name: "fairy", Path: fairyPath, Instances: 2, Options: map[string]string{"USI_Hash": "16", "Threads": "1"}},
		// A chess engine with a minimal entry: the dialect is learned.
		{Name: "stockfish", Path: stockfishPath, Options: map[string]string{"Hash": "16", "Threads": "1"}},
		// An engine that crashes 300ms after it starts, every time.
		{Name: "dying", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.DieAfter + "=300ms"}},
		// An engine whose first search of each position after moves ends
		// before its first iteration: a bare bestmove, no score.
		{Name: "starved", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.Starved}},
	}, func(p *pool.Pool) { shared = p }, func(*pool.Pool) bool { return fairyIdle() && idle("stockfish") }))
}

func fairyIdle() bool { return idle("fairy") }

// idle: every engine of the kind is back in the pool.
func idle(kind string) bool {
	for _, st := range shared.Status() {
		if st.Name == kind {
			return st.Idle == st.Instances
		}
	}
	return false
}

// waitIdle waits until both fairy engines are back in the pool: no search
// of a job outlives it.
func waitIdle(t *testing.T) {
	t.Helper()
	testwait.For(t, "both fairy engines idle", 2*time.Minute, fairyIdle)
}

func newManager(t *testing.T, tweak func(*Config)) *Manager {
	t.Helper()
	svc := session.NewService(session.Config{Pool: shared, DefaultEngine: "fairy", AcquireTimeout: 2 * time.Second})
	cfg := Config{Service: svc, SpareCheck: 20 * time.Millisecond}
	if tweak != nil {
		tweak(&cfg)
	}
	m := New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(ctx)
		waitIdle(t)
	})
	return m
}

// A short opening (12 moves), as played.
var opening = strings.Fields("7g7f 3c3d 2g2f 4c4d 2f2e 2b3c 3i4h 8b4b 5i6h 5a6b 6h7h 6b7b")

// wait polls job id until it has ended.
func wait(t *testing.T, m *Manager, client, id string, d time.Duration) *View {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		v, err := m.Get(client, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if v.FinishedAt != nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not ended after %v: %s %+v", id, d, v.Status, v.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkAnalysis checks a finished analysis of start+moves: one entry per
// position, every best move legal there, every played move judged.
func checkAnalysis(t *testing.T, v *View, start string, moves []string) {
	t.Helper()
	if v.Status != StatusDone {
		t.Fatalf("status %s (error %+v), want done", v.Status, v.Error)
	}
	if got, want := len(v.Positions), len(moves)+1; got != want || v.Progress.Done != want || v.Progress.Total != want {
		t.Fatalf("got %d positions, progress %+v; want %d", got, v.Progress, want)
	}
	judged := map[string]int{}
	for i, p := range v.Positions {
		if p == nil {
			t.Fatalf("position %d missing", i)
		}
		pos, errs := shogi.Load(start, moves[:i])
		if errs != nil {
			t.Fatal(errs)
		}
		if p.Ply != i || p.Position != pos.SFEN() || p.field != "sfen" {
			t.Errorf("ply %d: got ply %d sfen %q, want %q", i, p.Ply, p.Position, pos.SFEN())
		}
		if p.Eval == nil || p.WinRate == nil {
			t.Errorf("ply %d: no evaluation: %+v", i, p)
		}
		switch {
		case p.Checkmate:
			if !pos.IsCheckmate() || p.BestMove != "" {
				t.Errorf("ply %d: marked checkmate (bestmove %q) in %s", i, p.BestMove, pos.SFEN())
			}
		case p.BestMove == "resign" || p.BestMove == "win":
		default:
			if _, err := pos.CheckMove(p.BestMove); err != nil {
				t.Errorf("ply %d: best move %q is illegal in %s: %v", i, p.BestMove, pos.SFEN(), err)
			}
			if p.Depth == 0 || len(p.PV) == 0 || p.PV[0] != p.BestMove {
				t.Errorf("ply %d: depth %d pv %v bestmove %s", i, p.Depth, p.PV, p.BestMove)
			}
		}
		if i == len(moves) {
			if p.Move != "" || p.Loss != nil || p.Judgement != "" {
				t.Errorf("last position has a move: %+v", p)
			}
			continue
		}
		if p.Move != moves[i] {
			t.Errorf("ply %d: move %q, want %q", i, p.Move, moves[i])
		}
		if p.Loss == nil || p.Judgement == "" || *p.Loss < 0 || *p.Loss > 2 {
			t.Errorf("ply %d: move %s not judged: loss %v judgement %q", i, p.Move, p.Loss, p.Judgement)
			continue
		}
		judged[p.SideToMove]++
		// The judgement compares the position after the best move with
		// the one after the move played, by the curve (Black's evals
		// turned to the mover's side).
		best, played := p.BestEval, v.Positions[i+1].Eval
		switch {
		case p.BestMove == p.Move:
			if p.BestEval != nil {
				t.Errorf("ply %d: the best move was played, but best_eval %+v", i, p.BestEval)
			}
			best = played
		case p.BestEval == nil:
			t.Errorf("ply %d: move %s is not the best %s, and no best_eval", i, p.Move, p.BestMove)
			continue
		}
		if p.SideToMove == "w" {
			best, played = negate(best), negate(played)
		}
		drop, j := Judge(best, played, DefaultThresholds())
		if j != p.Judgement || round(2*drop, 4) != *p.Loss || p.WinRateLoss == nil || round(drop, 4) != *p.WinRateLoss {
			t.Errorf("ply %d: loss %v winrate_loss %v %s, want %v %v %s", i, *p.Loss, p.WinRateLoss, p.Judgement, 2*drop, drop, j)
		}
	}
	if v.Summary == nil || v.Summary.Black.Moves != judged["b"] || v.Summary.White.Moves != judged["w"] {
		t.Errorf("summary %+v, want %d and %d judged moves", v.Summary, judged["b"], judged["w"])
	}
}

func TestAnalyseGame(t *testing.T) {
	m := newManager(t, nil)
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{Depth: 3}, Notation: "kif"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.ID) != 32 || (v.Status != StatusQueued && v.Status != StatusRunning) || v.Progress.Total != len(opening)+1 {
		t.Fatalf("started: %+v", v)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	checkAnalysis(t, v, "startpos", opening)
	if p := v.Positions[0]; p.MoveKIF != "▲７六歩(77)" || p.BestMoveKIF == "" || len(p.PVKIF) == 0 {
		t.Errorf("notation kif: %+v", p)
	}
	if p := v.Positions[1]; p.MoveKIF != "△３四歩(33)" {
		t.Errorf("ply 1 move_kif %q", p.MoveKIF)
	}
	waitIdle(t)
}

// A game that ends in checkmate: the last position is judged by the rules,
// and the mating line's moves cost nothing.
func TestAnalyseCheckmatedGame(t *testing.T) {
	m := newManager(t, nil)
	start := "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1"
	moves := []string{"G*8f", "9f9g", "8f8g", "9g9h", "8g8h"}
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Start: start, Moves: moves}, Limits: &session.Limits{Depth: 4}})
	if err != nil {
		t.Fatal(err)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	checkAnalysis(t, v, start, moves)
	last := v.Positions[len(moves)]
	if !last.Checkmate || last.Eval.Mate == nil || *last.Eval.Mate != 0 || last.Eval.MateSign != "+" || *last.WinRate != 1 {
		t.Errorf("last position: %+v, want checkmate, Black winning (mate 0 +)", last)
	}
	for _, p := range v.Positions[:len(moves)] {
		if *p.Loss != 0 || p.Judgement != JudgementOK {
			t.Errorf("ply %d (%s): loss %v %s in a forced mate", p.Ply, p.Move, *p.Loss, p.Judgement)
		}
	}
}

func TestRefusals(t *testing.T) {
	m := newManager(t, nil)
	rec := "7g7f"
	for _, tc := range []struct {
		name string
		req  Request
		code string
		at   int
	}{
		{"no position", Request{Limits: &session.Limits{Depth: 1}}, session.CodeInvalidField, -1},
		{"movetime over the cap", Request{Position: &session.Position{}, Limits: &session.Limits{MoveTimeMS: 1e9}}, session.CodeInvalidField, -1},
		{"thresholds out of order", Request{Position: &session.Position{}, Thresholds: &Thresholds{Inaccuracy: 0.2, Mistake: 0.1, Blunder: 0.3}}, session.CodeInvalidField, -1},
		{"no thresholds", Request{Position: &session.Position{}, Thresholds: &Thresholds{}}, session.CodeInvalidField, -1},
		{"depth over the cap", Request{Position: &session.Position{}, Limits: &session.Limits{Depth: 1000}}, session.CodeInvalidField, -1},
		{"illegal move", Request{Position: &session.Position{Moves: []string{"7g7f", "P*5e"}}, Limits: &session.Limits{Depth: 1}}, "drop_not_in_hand", 1},
		{"unknown engine", Request{Position: &session.Position{}, Engine: "nope", Limits: &session.Limits{Depth: 1}}, session.CodeUnknownEngine, -1},
		{"bad notation", Request{Position: &session.Position{}, Limits: &session.Limits{Depth: 1}, Notation: "csa"}, session.CodeInvalidField, -1},
		{"not a record", Request{Record: &rec, Limits: &session.Limits{Depth: 1}}, "record_format", -1},
		{"record and position", Request{Record: &rec, Position: &session.Position{}, Limits: &session.Limits{Depth: 1}}, session.CodeInvalidField, -1},
	} {
		_, err := m.Start(session.Caller{Client: "c1"}, &tc.req)
		if err == nil || err.Code != tc.code || err.MoveIndex != tc.at {
			t.Errorf("%s: got %v, want %s at %d", tc.name, err, tc.code, tc.at)
		}
	}
	// No limits (or empty ones): the default time per position, the
	// default thresholds.
	for _, lim := range []*session.Limits{nil, {}} {
		v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{}, Limits: lim})
		if err != nil {
			t.Fatalf("limits %v: %v", lim, err)
		}
		if v.Limits != (limitsJSON{MoveTimeMS: DefaultMoveTime.Milliseconds()}) || v.Thresholds != DefaultThresholds() {
			t.Errorf("limits %v: job limits %+v thresholds %+v, want the defaults", lim, v.Limits, v.Thresholds)
		}
		// A time per position gives an estimate of the time left at once:
		// one position, with a second search in one case in two.
		if e := v.Progress.EstimatedLeftMS; e == nil || *e != 3*DefaultMoveTime.Milliseconds()/2 {
			t.Errorf("limits %v: estimated_left_ms %v at the start, want %d", lim, e, 3*DefaultMoveTime.Milliseconds()/2)
		}
		if v := wait(t, m, "c1", v.ID, time.Minute); v.Progress.EstimatedLeftMS != nil {
			t.Errorf("an ended job estimates %d ms left", *v.Progress.EstimatedLeftMS)
		}
	}
	if _, err := m.Get("c1", "0123456789abcdef0123456789abcdef"); err == nil || err.Code != CodeNotFound {
		t.Errorf("unknown id: %v", err)
	}
}

// A record is read by package kifu, as POST /v1/records/parse reads it: its
// main line is the game; a bad record keeps kifu's code.
func TestRecord(t *testing.T) {
	m := newManager(t, nil)
	bad := "1 ７六歩(77)\n2 ３四歩(33)\n3 ２二角成(99)\n"
	if _, err := m.Start(session.Caller{Client: "c1"}, &Request{Record: &bad, Limits: &session.Limits{Depth: 1}}); err == nil || err.Code == "" || !strings.Contains(err.Message, "line 3") {
		t.Errorf("bad record: %v, want a refusal naming line 3", err)
	}
	rec := "1 ７六歩(77)\n2 ３四歩(33)\n"
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Record: &rec, Limits: &session.Limits{Depth: 1}})
	if err != nil {
		t.Fatal(err)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	checkAnalysis(t, v, shogi.StartSFEN, []string{"7g7f", "3c3d"})
}

func TestCancel(t *testing.T) {
	m := newManager(t, nil)
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 300}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		g, _ := m.Get("c1", v.ID)
		if g.Progress.Done >= 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := m.Cancel(t.Context(), "c2", v.ID); err == nil || err.Code != CodeNotFound {
		t.Errorf("another client's cancel: %v, want not_found", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := m.Cancel(ctx, "c1", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != StatusCancelled || c.FinishedAt == nil || c.Error != nil || c.Progress.Done >= c.Progress.Total || c.Summary == nil {
		t.Fatalf("after cancel: %s %+v error %+v", c.Status, c.Progress, c.Error)
	}
	n := 0
	for _, p := range c.Positions {
		if p != nil {
			n++
		}
	}
	if n != c.Progress.Done {
		t.Errorf("%d positions, progress says %d", n, c.Progress.Done)
	}
	// Cancelling again changes nothing.
	if again, _ := m.Cancel(ctx, "c1", v.ID); again.Status != StatusCancelled || again.Progress != c.Progress {
		t.Errorf("second cancel: %+v", again)
	}
	waitIdle(t)
}

func TestBounds(t *testing.T) {
	m := newManager(t, func(c *Config) { c.MaxJobs = 3; c.MaxRunning = 1 })
	req := &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 200}}
	a1, err := m.Start(session.Caller{Client: "a"}, req)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := m.Start(session.Caller{Client: "a"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if a2.Status != StatusQueued {
		t.Errorf("second job: %s, want queued (one runs at a time)", a2.Status)
	}
	if _, err := m.Start(session.Caller{Client: "a"}, req); err == nil || err.Code != session.CodeTooManyRequests || session.RetryAfter(err) <= 0 {
		t.Errorf("a third job of one client: %v, want too_many_requests", err)
	}
	b1, err := m.Start(session.Caller{Client: "b"}, req)
	if err != nil {
		t.Fatalf("another client: %v", err)
	}
	if _, err := m.Start(session.Caller{Client: "c"}, req); err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("past MaxJobs: %v, want queue_full", err)
	}
	if _, err := m.Get("b", a1.ID); err == nil || err.Code != CodeNotFound {
		t.Errorf("another client's job: %v, want not_found", err)
	}
	// A queued job cancelled ends at once; its slot is free again.
	c, _ := m.Cancel(t.Context(), "a", a2.ID)
	if c.Status != StatusCancelled || c.StartedAt != nil || c.Progress.Done != 0 {
		t.Errorf("queued job cancelled: %+v", c)
	}
	if _, err := m.Start(session.Caller{Client: "a"}, req); err != nil {
		t.Errorf("after a cancel: %v", err)
	}
	for _, id := range []struct{ c, id string }{{"a", a1.ID}, {"b", b1.ID}} {
		m.Cancel(t.Context(), id.c, id.id)
	}
}

// Ended jobs are forgotten past Keep or MaxKept.
func TestRetention(t *testing.T) {
	m := newManager(t, func(c *Config) { c.MaxKept = 1 })
	req := &Request{Position: &session.Position{Moves: opening[:1]}, Limits: &session.Limits{Depth: 1}}
	first, _ := m.Start(session.Caller{Client: "c1"}, req)
	wait(t, m, "c1", first.ID, time.Minute)
	second, _ := m.Start(session.Caller{Client: "c1"}, req)
	wait(t, m, "c1", second.ID, time.Minute)
	// The job says it finished a moment before the manager files it among
	// the ended ones and sweeps.
	testwait.For(t, "the older of two ended jobs with MaxKept 1 to be forgotten", time.Minute, func() bool {
		_, err := m.Get("c1", first.ID)
		return err != nil && err.Code == CodeNotFound
	})
	if _, err := m.Get("c1", second.ID); err != nil {
		t.Error(err)
	}
	m.mu.Lock()
	m.cfg.Keep = time.Nanosecond
	m.mu.Unlock()
	if _, err := m.Get("c1", second.ID); err == nil {
		t.Error("a job past Keep is still there")
	}
}

// Close drains: the positions being searched finish, no new one starts,
// the job ends cancelled with shutting_down, and its follower is told.
func TestDrain(t *testing.T) {
	m := newManager(t, func(c *Config) { c.MaxRunning = 1 })
	var mu sync.Mutex
	var evs []*session.Event
	emit := func(ev *session.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() }
	h, err := m.For(session.Caller{Client: "c1"}).StartGame(&session.Request{ID: "g1", Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 400}}, emit)
	if err != nil {
		t.Fatal(err)
	}
	_ = h
	queued, _ := m.Start(session.Caller{Client: "c2"}, &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 400}})
	testwait.For(t, "g1's first positions to be searched", time.Minute, func() bool {
		for _, st := range shared.Status() {
			if st.Name == "fairy" && st.Busy > 0 {
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	begun := time.Now()
	m.Close(ctx)
	if d := time.Since(begun); d > 10*time.Second {
		t.Errorf("drain took %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	end := evs[len(evs)-1]
	if end.Type != session.EventGameAnalysis || end.Status != StatusCancelled || end.Code != session.CodeShuttingDown || end.ID != "g1" {
		t.Fatalf("terminal event %+v", end)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Type != session.EventProgress {
			t.Errorf("event before the terminal one: %+v", ev)
		}
	}
	// The positions in flight were finished, not cut: the drain had time.
	if len(evs) < 2 || end.Progress.Done == 0 {
		t.Errorf("no position finished during the drain: %+v", end.Progress)
	}
	q, _ := m.Get("c2", queued.ID)
	if q.Status != StatusCancelled || q.Error == nil || q.Error.Code != session.CodeShuttingDown {
		t.Errorf("queued job after the drain: %+v", q)
	}
	if _, err := m.Start(session.Caller{Client: "c3"}, &Request{Position: &session.Position{}, Limits: &session.Limits{Depth: 1}}); err == nil || err.Code != session.CodeShuttingDown {
		t.Errorf("start after close: %v", err)
	}
	waitIdle(t)
}

// Progress events carry each position once it is analysed, and the
// previous one again once its move is judged; merged, they rebuild the job.
func TestFollowerEvents(t *testing.T) {
	m := newManager(t, nil)
	var mu sync.Mutex
	var evs []*session.Event
	done := make(chan struct{})
	emit := func(ev *session.Event) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
		if ev.Type == session.EventGameAnalysis || ev.Type == session.EventError {
			close(done)
		}
	}
	moves := opening[:6]
	h, err := m.For(session.Caller{Client: "c1"}).StartGame(&session.Request{ID: "g1", Position: &session.Position{Moves: moves}, Limits: &session.Limits{Depth: 2}}, emit)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Detach()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("no terminal event")
	}
	mu.Lock()
	defer mu.Unlock()
	rebuilt := make([]*Ply, len(moves)+1)
	last := 0
	for _, ev := range evs[:len(evs)-1] {
		if ev.Type != session.EventProgress || ev.ID != "g1" || ev.Progress.Total != len(moves)+1 || ev.Progress.Done <= last {
			t.Fatalf("event %+v after done %d", ev, last)
		}
		last = ev.Progress.Done
		for _, raw := range ev.Positions {
			var p Ply
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			rebuilt[p.Ply] = &p
		}
	}
	end := evs[len(evs)-1]
	if end.Status != StatusDone || end.Job == "" || len(end.Summary) == 0 {
		t.Fatalf("terminal event %+v", end)
	}
	v, _ := m.Get("c1", end.Job)
	got, _ := json.Marshal(rebuilt)
	want, _ := json.Marshal(v.Positions)
	if string(got) != string(want) {
		t.Errorf("positions from the events:\n%s\nfrom the job:\n%s", got, want)
	}
}

// An engine that keeps dying fails the job (after one retry, or at once
// once the pool has put the kind in cooldown), with the failing position
// named.
func TestEngineFailure(t *testing.T) {
	m := newManager(t, nil)
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Engine: "dying", Position: &session.Position{Moves: opening[:2]}, Limits: &session.Limits{MoveTimeMS: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	if v.Status != StatusFailed || v.Error == nil || (v.Error.Code != session.CodeEngineError && v.Error.Code != session.CodeUnavailable) || v.Error.Ply == nil || v.Summary != nil {
		t.Fatalf("got %s %+v", v.Status, v.Error)
	}
}

func TestJudge(t *testing.T) {
	cp := func(v int) *session.Score { return &session.Score{CP: &v} }
	mate := func(v int, sign string) *session.Score { return &session.Score{Mate: &v, MateSign: sign} }
	// best: the mover's score after the engine's best move; played: after
	// the move played.
	for _, tc := range []struct {
		best, played *session.Score
		drop         float64
		judgement    string
	}{
		{cp(0), cp(0), 0, JudgementOK},
		{cp(0), cp(100), 0, JudgementOK}, // better than the best costs nothing
		{cp(0), cp(-100), 0.0416, JudgementOK},
		{cp(0), cp(-200), 0.0826, JudgementInaccuracy},
		{cp(0), cp(-300), 0.1225, JudgementMistake},
		{cp(0), cp(-400), 0.1608, JudgementBlunder},
		{cp(3000), cp(2000), 0.0278, JudgementOK}, // won either way
		// Missing a mate is a blunder only when it matters.
		{mate(3, ""), cp(500), 0.3029, JudgementBlunder},
		{mate(3, ""), cp(2500), 0.0153, JudgementOK},
		{mate(3, ""), mate(5, ""), 0, JudgementOK},
		{cp(0), mate(-2, ""), 0.5, JudgementBlunder},
		{mate(0, "+"), mate(0, "-"), 1, JudgementBlunder},
		{mate(-4, ""), mate(-2, ""), 0, JudgementOK}, // lost either way
	} {
		drop, j := Judge(tc.best, tc.played, DefaultThresholds())
		if round(drop, 4) != tc.drop || j != tc.judgement {
			b, _ := json.Marshal(tc.best)
			a, _ := json.Marshal(tc.played)
			t.Errorf("Judge(%s, %s) = %v %s, want %v %s", b, a, round(drop, 4), j, tc.drop, tc.judgement)
		}
	}
	if w := WinRate(cp(600)); round(w, 4) != 0.7311 {
		t.Errorf("WinRate(600 cp) = %v, want 1/(1+e^-1) = 0.7311", w)
	}
	// A player's thresholds.
	th := Thresholds{Inaccuracy: 0.2, Mistake: 0.3, Blunder: 0.4}
	if _, j := Judge(cp(0), cp(-400), th); j != JudgementOK {
		t.Errorf("a 0.16 drop with thresholds %+v: %s, want ok", th, j)
	}
	for _, bad := range []Thresholds{{}, {0.1, 0.05, 0.2}, {0.1, 0.2, 1.5}, {-1, 0.2, 0.3}} {
		if err := bad.check(); err == nil {
			t.Errorf("thresholds %+v accepted", bad)
		}
	}
}

// FuzzNewJob: any request body, read by the one strict parser, is either
// refused with a stable code or becomes a job whose positions follow from
// its moves; nothing panics and nothing reaches an engine (newJob only
// checks and prepares).
func FuzzNewJob(f *testing.F) {
	for _, s := range []string{
		`{"position":{"moves":["7g7f","3c3d"]},"limits":{"depth":2},"notation":"kif"}`,
		`{"position":{"sfen":"9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1","moves":["G*8f","9f9g","8f8g","9g9h","8g8h"]},"limits":{"nodes":10}}`,
		`{"position":{"sfen":"4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1"},"limits":{"depth":1}}`,
		`{"position":{"moves":["7g7f","P*5e"]},"limits":{"movetime_ms":1}}`,
		`{"record":"7g7f","limits":{"depth":1}}`,
		`{"engine":"nope","position":{},"limits":{"depth":1}}`,
	} {
		f.Add([]byte(s))
	}
	svc := session.NewService(session.Config{Pool: shared, DefaultEngine: "fairy"})
	m := New(Config{Service: svc})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var req Request
		if session.DecodeStrict(raw, &req) != nil {
			return
		}
		j, err := m.newJob("c", &req)
		if err != nil {
			if err.Code == "" || err.Message == "" {
				t.Fatalf("refusal without a code: %+v", err)
			}
			return
		}
		j.cancel()
		// Every position shows, with its move, once analysed.
		j.results = make([]*result, j.plies+1)
		for i := range j.results {
			j.results[i] = &result{bestmove: "resign"}
		}
		v := j.view()
		if len(v.Positions) != j.plies+1 {
			t.Fatalf("%d positions for %d moves", len(v.Positions), j.plies)
		}
		for i, p := range v.Positions[:j.plies] {
			if p.Move != j.g.move(i) || p.Ply != i || p.Checkmate {
				t.Fatalf("ply %d: %+v, move %s", i, p, j.g.move(i))
			}
		}
	})
}

// TestInteractiveFirst: an interactive request arriving while a game job
// holds every engine gets one at once (the job's search gives way and is
// searched again), and the job still analyses every position.
func TestInteractiveFirst(t *testing.T) {
	m := newManager(t, nil)
	moves := opening[:3]
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{MoveTimeMS: 1500}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for busy := false; !busy; {
		for _, st := range shared.Status() {
			busy = busy || (st.Name == "fairy" && st.Idle == 0)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never held both engines: %+v", shared.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Far less than a job's search: without preemption this is no_engine.
	person := session.NewService(session.Config{Pool: shared, DefaultEngine: "fairy", AcquireTimeout: 300 * time.Millisecond})
	ctx := session.WithCaller(t.Context(), session.Caller{Client: "person"})
	res, perr := person.Analyze(ctx, &session.Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{Depth: 1}})
	if perr != nil {
		t.Fatalf("interactive analysis during a game job: %v", perr)
	}
	if res.BestMove == "" {
		t.Fatalf("no best move: %+v", res)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	checkAnalysis(t, v, "startpos", moves)
	if n := testutil.ToFloat64(m.m.positions.WithLabelValues("preempted")); n < 1 {
		t.Errorf("preempted searches counted: %v, want at least 1", n)
	}
}

// The verdict's edge cases, from the results a job keeps: a book move (no
// score), the engine's own move, a best move whose position had no score,
// resign, and a best move that mates.
func TestJudgeCases(t *testing.T) {
	start, serr := session.CheckPosition(&session.Position{}, 10)
	if serr != nil {
		t.Fatal(serr)
	}
	j := &job{th: DefaultThresholds(), g: gameOf(start)}
	cp := func(v int) *session.Score { return &session.Score{CP: &v} }
	res := func(best string, score *session.Score) *result {
		r := &result{bestmove: best}
		r.kind, r.score, r.mateSign = packScore(score)
		return r
	}
	withBest := func(r *result, s *session.Score) *result { r.setBest(s); return r }
	for _, tc := range []struct {
		name      string
		r, next   *result
		judgement string
		unjudged  string
		drop      float64
	}{
		{"book move", res("7g7f", nil), res("3c3d", cp(0)), "", "no_evaluation", 0},
		{"book reply", res("7g7f", cp(50)), res("3c3d", nil), "", "no_evaluation", 0},
		{"engine's own move", res("7g7f", cp(900)), res("3c3d", cp(-900)), JudgementOK, "", 0},
		{"best's position unscored", res("2g2f", cp(0)), res("3c3d", cp(0)), "", "no_evaluation", 0},
		// The mover after 2g2f: +0; after 7g7f: −400 (the opponent +400).
		{"blunder", withBest(res("2g2f", cp(300)), cp(0)), res("3c3d", cp(400)), JudgementBlunder, "", 0.1608},
		// Side-to-move bias: both positions reached scored +300 for the
		// opponent to move: the move costs nothing.
		{"bias cancels", withBest(res("2g2f", cp(300)), cp(300)), res("3c3d", cp(300)), JudgementOK, "", 0},
		{"resign", res("resign", &session.Score{Mate: new(int)}), res("3c3d", cp(2000)), JudgementOK, "", 0},
		{"best mates", withBest(res("2g2f", cp(0)), ended(endCheckmate).sideScore()), res("3c3d", cp(-300)), JudgementBlunder, "", 0.3775},
	} {
		p := &Ply{Move: "7g7f"}
		j.judge(p, tc.r, tc.next)
		var drop float64
		if p.WinRateLoss != nil {
			drop = *p.WinRateLoss
		}
		if p.Judgement != tc.judgement || p.Unjudged != tc.unjudged || drop != tc.drop || (p.Loss != nil && math.Abs(*p.Loss-2*drop) > 1e-4) {
			t.Errorf("%s: judgement %q unjudged %q drop %v, want %q %q %v", tc.name, p.Judgement, p.Unjudged, drop, tc.judgement, tc.unjudged, tc.drop)
		}
	}
}

// TestUnscoredSearchDoneAgain: a search answered with a bare bestmove (no
// score: an engine starved of CPU on a busy machine, as fairy-stockfish was
// under stress-ng, left a position of TestSharedHandBack unevaluated and
// its move unjudged) is done once more, and every position is evaluated.
func TestUnscoredSearchDoneAgain(t *testing.T) {
	m := newManager(t, nil)
	before := testutil.ToFloat64(m.m.positions.WithLabelValues("unscored"))
	moves := []string{"7g7f", "3c3d", "2g2f"}
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Engine: "starved", Position: &session.Position{Moves: moves}, Limits: &session.Limits{Nodes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	if v.Status != StatusDone {
		t.Fatalf("got %s: %+v", v.Status, v.Error)
	}
	for _, p := range v.Positions {
		if p.Eval == nil || p.Unjudged == "no_evaluation" {
			t.Errorf("ply %d: no evaluation (%+v)", p.Ply, p)
		}
	}
	if n := testutil.ToFloat64(m.m.positions.WithLabelValues("unscored")) - before; n < float64(len(moves)) {
		t.Errorf("%v searches done again for want of a score, want at least %d (one per position after a move)", n, len(moves))
	}
}
