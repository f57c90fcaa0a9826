package review

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// Two Managers on one pool and one real redis-server stand for two
// instances of usid (the three-process test with SIGKILL is in
// internal/app).

func newShared(t *testing.T, url string, budget session.Budget, take bool) *Manager {
	t.Helper()
	m := newManager(t, func(c *Config) {
		c.Redis = &RedisConfig{URL: url, Lease: time.Second, Check: 50 * time.Millisecond}
		c.PauseCheck = 50 * time.Millisecond
	})
	if take {
		m.SetCallers(callersWith(budget))
	}
	return m
}

func callersWith(b session.Budget) func(string) session.Caller {
	return func(client string) session.Caller { return session.Caller{Client: client, Budget: b} }
}

// searches reads, from the store, how often each search of job id started
// and which were charged.
func searches(t *testing.T, url, id string) (started map[string]int, charged map[string]bool) {
	t.Helper()
	opt, _ := redis.ParseURL(url)
	cl := redis.NewClient(opt)
	defer cl.Close()
	h, err := cl.HGetAll(context.Background(), "usid:games:job:"+id).Result()
	if err != nil {
		t.Fatal(err)
	}
	started, charged = map[string]int{}, map[string]bool{}
	for f, v := range h {
		if k, ok := strings.CutPrefix(f, "n:"); ok {
			started[k], _ = strconv.Atoi(v)
		}
		if k, ok := strings.CutPrefix(f, "c:"); ok {
			charged[k] = true
		}
	}
	return started, charged
}

// waitDone polls job id on the managers in turn (as a proxy spreads
// requests) until it has at least n positions or has ended; every answer
// must be a 200.
func waitDone(t *testing.T, ms []*Manager, client, id string, n int) *View {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for i := 0; ; i++ {
		v, err := ms[i%len(ms)].Get(client, id)
		if err != nil {
			t.Fatalf("get %s on instance %d: %v", id, i%len(ms), err)
		}
		if v.Progress.Done >= n || v.FinishedAt != nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %s %+v after a minute", id, v.Status, v.Progress)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSharedAnyInstance (issue 30): with Redis, a job started on one
// instance is read and cancelled on another, and ends done with every
// position, as in one process; another client's id stays not_found.
func TestSharedAnyInstance(t *testing.T) {
	rs := redistest.Start(t)
	a := newShared(t, rs.URL, nil, true)
	b := newShared(t, rs.URL, nil, true)
	moves := opening[:6]
	// A nodes limit: every search reports an evaluation however busy the
	// machine (at 50 ms a stress run's engine answered before its first).
	v, err := a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{Nodes: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("c2", v.ID); err == nil || err.Code != CodeNotFound {
		t.Errorf("another client's get: %v, want not_found", err)
	}
	v = waitDone(t, []*Manager{b, a}, "c1", v.ID, len(moves)+1)
	v = waitDone(t, []*Manager{b, a}, "c1", v.ID, len(moves)+2) // ended
	checkAnalysis(t, v, "startpos", moves)

	// A DELETE on the instance that does not run the job reaches the one
	// that does at its next check of the job's lease.
	v, err = a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 300}})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, []*Manager{a, b}, "c1", v.ID, 1)
	runner, other := a, b
	b.mu.Lock()
	if b.jobs[v.ID] != nil {
		runner, other = b, a
	}
	b.mu.Unlock()
	if _, err := other.Cancel(t.Context(), "c2", v.ID); err == nil || err.Code != CodeNotFound {
		t.Errorf("another client's cancel: %v, want not_found", err)
	}
	begun := time.Now()
	c, err := other.Cancel(t.Context(), "c1", v.ID)
	took := time.Since(begun)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cancel through the other instance: %v", took.Round(time.Millisecond))
	if c.Status != StatusCancelled || c.FinishedAt == nil || c.Error != nil || c.Summary == nil || c.Progress.Done >= c.Progress.Total {
		t.Fatalf("after cancel: %s %+v error %+v", c.Status, c.Progress, c.Error)
	}
	// The runner records the end in Redis (which the cancel saw) before it
	// frees its run slot: wait for the slot, bounded far beyond the need.
	testwait.For(t, "the instance that ran it to free its run slot", 30*time.Second, func() bool {
		runner.mu.Lock()
		defer runner.mu.Unlock()
		return len(runner.running) == 0
	})
	waitIdle(t)
}

// TestSharedChess: a chess game's job is stored with its FEN and SAN and
// read on another instance like a shogi one; the instance that did not
// start it shows its positions by the rules of chess.
func TestSharedChess(t *testing.T) {
	rs := redistest.Start(t)
	a := newShared(t, rs.URL, nil, true)
	b := newShared(t, rs.URL, nil, false) // reads, never runs
	fen := "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"
	v, err := a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Game: "chess", Start: fen, Moves: []string{"f1f7"}},
		Limits: &session.Limits{Nodes: 20_000}, Notation: "san"})
	if err != nil {
		t.Fatal(err)
	}
	v = waitDone(t, []*Manager{a}, "c1", v.ID, 3) // ended
	w, gerr := b.Get("c1", v.ID)
	if v.Status != StatusDone || gerr != nil || len(w.Positions) != 2 {
		t.Fatalf("%s; on the other instance: %+v %v", v.Status, w, gerr)
	}
	if p := w.Positions[0]; p.Position != fen || p.MoveSAN != "Qf7" || p.Judgement != JudgementBlunder {
		t.Errorf("ply 0 read on the other instance: %+v", p)
	}
	if p := w.Positions[1]; p.Draw != "stalemate" || p.SideToMove != "b" {
		t.Errorf("ply 1 read on the other instance: %+v", p)
	}
	testwait.For(t, "stockfish idle", time.Minute, func() bool { return idle("stockfish") })
}

// TestSharedHandBack (issue 30): a drain hands a job nobody follows back
// at once, with the positions analysed so far; another instance goes on
// from the first position without a result. No search is charged twice:
// a search cut by the drain is done again free.
func TestSharedHandBack(t *testing.T) {
	rs := redistest.Start(t)
	budget := &testBudget{balance: time.Hour}
	a := newShared(t, rs.URL, nil, true)
	b := newShared(t, rs.URL, budget, false) // takes nothing until a is gone
	moves := opening
	v, err := a.Start(session.Caller{Client: "c1", Budget: budget}, &Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{MoveTimeMS: 100}})
	if err != nil {
		t.Fatal(err)
	}
	before := waitDone(t, []*Manager{a, b}, "c1", v.ID, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a.Close(ctx)
	back, err := b.Get("c1", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != StatusQueued || back.Progress.Done < before.Progress.Done {
		t.Fatalf("after the drain: %s %+v, want queued with at least %d positions", back.Status, back.Progress, before.Progress.Done)
	}
	b.SetCallers(callersWith(budget))
	v = waitDone(t, []*Manager{b}, "c1", v.ID, len(moves)+2)
	checkAnalysis(t, v, "startpos", moves)
	started, charged := searches(t, rs.URL, v.ID)
	twice := 0
	plies := map[string]bool{} // positions with a search done twice
	for k, n := range started {
		if n > 1 {
			twice++
			plies[k[1:]] = true // p4 (the position) or b4 (after its best move): position 4
		}
		if !charged[k] {
			t.Errorf("search %s started %d times, never charged", k, n)
		}
	}
	// The job analyses at most two positions at once (two engines); a
	// position in flight at the drain is searched again whole (its two
	// searches, the one done and the one cut: its result is stored with
	// both), as deploy's TestThreePods counts.
	if len(plies) > 2 {
		t.Errorf("%d positions searched twice, want at most the 2 in flight at the drain: %v", len(plies), started)
	}
	t.Logf("%d positions before the drain, %d after it; %d searches, %d done twice, on %d positions", before.Progress.Done, back.Progress.Done, len(started), twice, len(plies))
}

// TestSharedLeaseExpiry (issue 30): an instance that stops renewing its
// lease (it died) loses the job to another after the lease, which goes on
// from the first position without a result.
func TestSharedLeaseExpiry(t *testing.T) {
	rs := redistest.Start(t)
	a := newShared(t, rs.URL, nil, true)
	b := newShared(t, rs.URL, nil, false)
	moves := opening
	v, err := a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{MoveTimeMS: 300}})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, []*Manager{a, b}, "c1", v.ID, 2)
	// a dies: it renews nothing from now on and reaches Redis no more (its
	// searches under way go on, unheard).
	a.stopLoop()
	a.st.cl.Close()
	lost := time.Now()
	b.SetCallers(callersWith(nil))
	for {
		b.mu.Lock()
		taken := b.jobs[v.ID] != nil
		b.mu.Unlock()
		if taken {
			break
		}
		if time.Since(lost) > time.Minute {
			g, _ := b.Get("c1", v.ID)
			t.Fatalf("not taken over after a minute: %s %+v", g.Status, g.Progress)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("taken over %v after the last renewal (lease 1s)", time.Since(lost).Round(time.Millisecond))
	v = waitDone(t, []*Manager{b}, "c1", v.ID, len(moves)+2)
	checkAnalysis(t, v, "startpos", moves)
	for {
		a.mu.Lock()
		n := len(a.running)
		a.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A result survives the store as it was (every field).
func TestStoredResultRoundTrip(t *testing.T) {
	for _, r := range []*result{
		{bestmove: "7g7f", pv: "7g7f 3c3d", nodes: 12345, depth: 17, score: -42, kind: cpScore, emulated: 5, cached: true,
			best: 30, bestKind: cpScore},
		{bestmove: "resign", kind: mateScore, score: 3, mateSign: '-', best: 1, bestKind: mateScore, bestMateSign: '+'},
		ended(endCheckmate),
		ended(endRepetition),
		{bestmove: "8h2b+"},
	} {
		got, err := decodeResult(encodeResult(r))
		if err != nil || *got != *r {
			t.Errorf("round trip: got %+v (%v), want %+v", got, err, r)
		}
	}
	for _, bad := range []string{`{"k":9}`, `{"dr":9}`, `{"dr":1}`} {
		if _, err := decodeResult(bad); err == nil {
			t.Errorf("a stored result out of bounds was taken: %s", bad)
		}
	}
}

// TestSharedBounds (issues 25, 30): the bounds hold over all instances:
// jobs per client and in all, bytes per client, ended jobs kept at most
// MaxKept; a queued job cancelled on any instance ends at once and frees
// its slot.
func TestSharedBounds(t *testing.T) {
	rs := redistest.Start(t)
	tweak := func(c *Config) {
		c.Redis = &RedisConfig{URL: rs.URL, Lease: time.Second, Check: 50 * time.Millisecond}
		c.MaxJobs, c.MaxRunning, c.MaxKept = 3, 1, 1
		c.MaxBytesPerClient = 3 * worstBytes(len("startpos"), len(opening)) // three long jobs' worth
	}
	a, b := newManager(t, tweak), newManager(t, tweak)
	a.SetCallers(callersWith(nil))
	req := &Request{Position: &session.Position{Moves: opening}, Limits: &session.Limits{MoveTimeMS: 200}}
	a1, err := a.Start(session.Caller{Client: "a"}, req)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := b.Start(session.Caller{Client: "a"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(session.Caller{Client: "a"}, req); err == nil || err.Code != session.CodeTooManyRequests || session.RetryAfter(err) <= 0 {
		t.Errorf("a third job of one client on another instance: %v, want too_many_requests", err)
	}
	b1, err := b.Start(session.Caller{Client: "b"}, req)
	if err != nil {
		t.Fatalf("another client: %v", err)
	}
	if _, err := a.Start(session.Caller{Client: "c"}, req); err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("past MaxJobs: %v, want queue_full", err)
	}
	// a runs one job at a time, b takes none: a2 or b1 waits, queued.
	waitDone(t, []*Manager{a, b}, "a", a1.ID, 1)
	c, err := b.Cancel(t.Context(), "b", b1.ID)
	if err != nil || c.Status != StatusCancelled || c.Progress.Done != 0 {
		t.Errorf("queued job cancelled: %+v %v", c, err)
	}
	a.Cancel(t.Context(), "a", a1.ID)
	a.Cancel(t.Context(), "a", a2.ID)
	// New jobs after the client's ended: MaxKept 1 keeps only the last
	// ended job, on every instance.
	var last string
	for range 2 {
		v, err := b.Start(session.Caller{Client: "a"}, req)
		if err != nil {
			t.Fatalf("after the client's jobs ended: %v", err)
		}
		b.Cancel(t.Context(), "a", v.ID)
		last = v.ID
	}
	for _, id := range []string{a1.ID, a2.ID} {
		if _, err := a.Get("a", id); err == nil || err.Code != CodeNotFound {
			t.Errorf("an older ended job with MaxKept 1: %v, want not_found", err)
		}
	}
	if _, err := a.Get("a", last); err != nil {
		t.Errorf("the last ended job: %v", err)
	}
	// Bytes: a game bigger than the client may hold is refused.
	huge := &Request{Position: &session.Position{Moves: randomGame(400, 3)}, Limits: &session.Limits{MoveTimeMS: 200}}
	if _, err := b.Start(session.Caller{Client: "a"}, huge); err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("a game bigger than the client's bytes: %v, want too_many_requests", err)
	}
}

// TestLeaseTakenAgain (issue 30): an instance too slow to renew its lease
// (a loaded machine) keeps its job if nobody took it meanwhile, so no work
// is done twice; once another instance holds it, it stores nothing more.
func TestLeaseTakenAgain(t *testing.T) {
	rs := redistest.Start(t)
	a := newShared(t, rs.URL, nil, false) // takes nothing by itself
	b := newShared(t, rs.URL, nil, false)
	v, err := a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening[:2]}, Limits: &session.Limits{Depth: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := a.st.claim(); err != nil || id != v.ID {
		t.Fatalf("claim: %q %v", id, err)
	}
	ctx := context.Background()
	lease := "usid:games:lease:" + v.ID
	a.st.cl.Del(ctx, lease) // it ran out
	if ok, err := a.st.put(v.ID, 0, ended(endCheckmate)); !ok || err != nil {
		t.Fatalf("put after the lease ran out, nobody else holding it: %v %v", ok, err)
	}
	if holder, _ := a.st.cl.Get(ctx, lease).Result(); holder != a.st.pod {
		t.Errorf("lease held by %q, want %q again", holder, a.st.pod)
	}
	a.st.cl.Set(ctx, lease, b.st.pod, time.Minute) // b took it
	if ok, err := a.st.put(v.ID, 1, ended(endCheckmate)); ok || err != nil {
		t.Errorf("put with another instance holding the lease: %v %v, want refused", ok, err)
	}
	if st, err := a.st.renew([]string{v.ID}); err != nil || st[0] != -1 {
		t.Errorf("renew with another instance holding the lease: %v %v, want lost", st, err)
	}
	a.st.cl.Del(ctx, lease)
}
