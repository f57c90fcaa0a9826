package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

func newRedisStore(t *testing.T, url, prefix string, lease time.Duration) *RedisStore {
	t.Helper()
	s, err := NewRedisStore(RedisConfig{URL: url, Prefix: prefix, Lease: lease, Check: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testState(id, owner string) *State {
	st := &State{Owner: owner, Main: [2]int64{599000, 12345}, TurnStart: time.Now().Round(time.Millisecond)}
	st.ID, st.Engine, st.Human, st.SFEN = id, "fairy", "w", "startpos"
	st.Moves, st.MovesKIF, st.TimesMS = []string{"7g7f", "3c3d"}, []string{"▲７六歩(77)", "△３四歩(33)"}, []int64{0, 1500}
	st.Pre = 1
	st.TC = Sides{B: TimeControl{MainMS: 600000, ByoyomiMS: 10000}, W: TimeControl{MainMS: 60000, IncMS: 2000}}
	st.Level = &Level{Option: "Skill Level", Value: "3"}
	st.Ponder, st.Status = true, statusPlaying
	return st
}

// TestRedisStoreLeases: the Redis store round-trips a State; the lease is
// taken at admission, renewed, refused to a second instance (which asks
// for the game), handed over, lost by the first; a lease that runs out
// (the holder died) lets another instance take over; the bounds per client
// and in total hold across instances; an ended game is inactive.
func TestRedisStoreLeases(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	a := newRedisStore(t, rs.URL, "t1:", 400*time.Millisecond)
	b := newRedisStore(t, rs.URL, "t1:", 400*time.Millisecond)
	c := newRedisStore(t, rs.URL, "t1:", 400*time.Millisecond)
	orphan := time.Minute

	st := testState("g1", "alice")
	if got, err := a.Admit(ctx, st, Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); err != nil || got != "ok" {
		t.Fatalf("admit: %q %v", got, err)
	}
	back, ok, err := b.Load(ctx, "g1")
	if err != nil || !ok {
		t.Fatalf("load: %v %v", ok, err)
	}
	want, _ := json.Marshal(st)
	got, _ := json.Marshal(back)
	if string(got) != string(want) || !back.TurnStart.Equal(st.TurnStart) {
		t.Errorf("round trip:\n got %s\nwant %s", got, want)
	}
	st.Moves = append(st.Moves, "2g2f")
	if err := a.Save(ctx, st); err != nil {
		t.Errorf("the holder's save: %v", err)
	}
	if err := b.Save(ctx, st); !errors.Is(err, ErrNotHeld) {
		t.Errorf("another instance's save: %v, want ErrNotHeld", err)
	}
	if r, err := a.Renew(ctx, []string{"g1"}); err != nil || r[0] != 0 {
		t.Errorf("renew: %v %v, want 0", r, err)
	}
	// Another client does not find it.
	if got, _, _ := b.Take(ctx, "g1", "mallory", orphan); got != "nf" {
		t.Errorf("another client's take: %q, want nf", got)
	}
	// A second instance asks for the game; the holder sees it at renewal.
	if got, _, _ := b.Take(ctx, "g1", "alice", orphan); got != "held" {
		t.Errorf("take of a held game: %q, want held", got)
	}
	if r, _ := a.Renew(ctx, []string{"g1"}); r[0] != 1 {
		t.Errorf("renew after the ask: %v, want 1 (hand it back)", r)
	}
	if err := a.Hand(ctx, st); err != nil {
		t.Fatal(err)
	}
	got2, taken, err := b.Take(ctx, "g1", "alice", orphan)
	if err != nil || got2 != "ok" || len(taken.Moves) != 3 {
		t.Fatalf("take after the hand-back: %q %v %+v", got2, err, taken)
	}
	if r, _ := a.Renew(ctx, []string{"g1"}); r[0] != -1 {
		t.Errorf("the old holder's renew: %v, want -1 (lost)", r)
	}
	if err := a.Save(ctx, st); !errors.Is(err, ErrNotHeld) {
		t.Errorf("the old holder's save: %v, want ErrNotHeld", err)
	}
	if r, _ := b.Renew(ctx, []string{"g1"}); r[0] != 0 {
		t.Errorf("the new holder's renew: %v, want 0", r)
	}

	// b dies (stops renewing): c is refused until the lease runs out.
	began := time.Now()
	var took time.Duration
	testwait.For(t, "the take-over after the lease", 10*time.Second, func() bool {
		g, _, err := c.Take(ctx, "g1", "alice", orphan)
		if err != nil {
			t.Fatal(err)
		}
		if g == "ok" {
			took = time.Since(began)
		}
		return g == "ok"
	})
	if took < 300*time.Millisecond {
		t.Errorf("taken over after %v, before the 400ms lease ran out", took)
	}
	t.Logf("taken over %v after the holder stopped renewing (lease 400ms)", took)

	// The bounds: 2 per client, 3 in all, over every instance.
	if got, _ := b.Admit(ctx, testState("g2", "alice"), Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); got != "ok" {
		t.Errorf("alice's second game: %q", got)
	}
	if got, _ := c.Admit(ctx, testState("g3", "alice"), Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); got != "client" {
		t.Errorf("alice's third game: %q, want client", got)
	}
	if got, _ := a.Admit(ctx, testState("g4", "bob"), Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); got != "ok" {
		t.Errorf("bob's game: %q", got)
	}
	if got, _ := a.Admit(ctx, testState("g5", "carol"), Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); got != "games" {
		t.Errorf("a fourth game in all: %q, want games", got)
	}
	// An ended game frees its place and stays to be seen.
	ended := *taken
	ended.Status, ended.Result = statusEnded, &Result{Winner: "b", Reason: "resign", End: "resign"}
	if err := c.Finish(ctx, &ended, time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Admit(ctx, testState("g5", "carol"), Bounds{PerClient: 2, PerNetwork: 8, Games: 3}, orphan); got != "ok" {
		t.Errorf("after an end: %q, want ok", got)
	}
	// A game in progress has no TTL (the deployment's volatile-lru never
	// evicts it); an ended one expires.
	if d, _ := a.cl.PTTL(ctx, "t1:game:g2").Result(); d != -1*time.Nanosecond && d != -1*time.Millisecond {
		t.Errorf("TTL of a game in progress: %v, want none", d)
	}
	if d, _ := a.cl.PTTL(ctx, "t1:game:g1").Result(); d <= 0 || d > 2*time.Minute {
		t.Errorf("TTL of an ended game: %v, want keep and a minute", d)
	}
	g, st2, _ := b.Take(ctx, "g1", "alice", orphan)
	if g != "inactive" || st2.Status != statusEnded {
		t.Errorf("take of an ended game: %q %+v", g, st2)
	}
	// A game nobody renews past the lease and the grace is forgotten: the
	// next admission sweeps it, and a take finds it inactive.
	testwait.For(t, "g4's lease to run out", 10*time.Second, func() bool {
		n, _ := a.cl.Exists(ctx, "t1:lease:g4").Result()
		return n == 0
	})
	if g, st4, _ := c.Take(ctx, "g4", "bob", time.Millisecond); g != "inactive" || st4.Status != statusPlaying {
		t.Errorf("take of an orphan: %q", g)
	}
	if n, _ := a.cl.HGet(ctx, "t1:count", "bob").Result(); n != "" {
		t.Errorf("bob's count after his orphan was swept: %q", n)
	}
}

// TestTakeOverBetweenManagers: a game started on one Manager is resumed
// through another sharing the Redis store: the first hands it back at its
// next renewal and stops driving it, the second goes on with the clocks
// (the human's clock ran while the game moved), the engine answers there;
// a drain (Close) hands a game back at once; a resume on an instance
// finds an abandoned game as such.
func TestTakeOverBetweenManagers(t *testing.T) {
	rs := redistest.Start(t)
	cfg := func() Config {
		return Config{Service: svc, Store: newRedisStore(t, rs.URL, "t2:", 2*time.Second), Lag: time.Minute}
	}
	ma, mb := New(cfg()), New(cfg())
	defer ma.Close(context.Background())
	defer mb.Close(context.Background())
	c := newConn(t, ma, "erin")
	c.send(startReq("g", "fairy", `{"side":"b","clock":{"b":{"main_ms":600000},"w":{"byoyomi_ms":1000}}}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	c.state()
	last := c.state() // the engine's answer: the human's clock runs
	seen := time.Now()
	if last.Clock.Running != "b" || len(last.Moves) != 2 {
		t.Fatalf("after the engine's move: %+v", last)
	}
	c.cancel()
	// The player is away a while: the clock runs meanwhile (the time that
	// passes is what is checked below).
	time.Sleep(800 * time.Millisecond)

	c2 := newConn(t, mb, "erin")
	c2.send(&session.Request{Type: session.TypePlayResume, ID: "again", Game: v.ID})
	r := c2.state()
	elapsed := time.Since(seen)
	if r.Status != statusPlaying || len(r.Moves) != 2 || r.Clock.Running != "b" {
		t.Fatalf("resumed on the other instance: %+v clock %+v", r.Public, r.Clock)
	}
	// The human's clock ran while the game moved: what the last event said
	// less the time since (give or take the events' way).
	wantB := last.Clock.B.MainMS - elapsed.Milliseconds()
	if d := r.Clock.B.MainMS - wantB; d < -100 || d > 100 || r.Clock.W != last.Clock.W {
		t.Errorf("clocks on the other instance %+v; the last event said %+v %v ago (Black %d expected)", r.Clock, last.Clock, elapsed, wantB)
	}
	// The first instance hands the game back in the store before it
	// forgets it itself: the resume on the second can answer in between.
	testwait.For(t, "the first instance to forget the game it handed back", 10*time.Second, func() bool {
		return ma.HandedBack() == 1 && ma.find("erin", v.ID) == nil
	})
	if ma.HandedBack() != 1 {
		t.Errorf("the first instance handed back %d games, want 1", ma.HandedBack())
	}
	if p, _ := ma.Counts(); p != 0 {
		t.Errorf("the first instance counts %d games in progress", p)
	}
	c2.send(&session.Request{Type: session.TypePlayMove, ID: "m2", Game: v.ID, Move: "2g2f"})
	c2.state()
	r = c2.state()
	if r.Status != statusPlaying || len(r.Moves) != 4 || r.Clock.Running != "b" {
		t.Fatalf("the engine's answer on the other instance: %+v", r.Public)
	}

	// A drain hands the game back at once: a resume on the first instance
	// takes it over without waiting for the lease.
	mb.Close(context.Background())
	if mb.HandedBack() != 1 {
		t.Errorf("the drained instance handed back %d games, want 1", mb.HandedBack())
	}
	c3 := newConn(t, ma, "erin")
	began := time.Now()
	c3.send(&session.Request{Type: session.TypePlayResume, ID: "third", Game: v.ID})
	r = c3.state()
	if r.Status != statusPlaying || len(r.Moves) != 4 {
		t.Fatalf("resumed after the drain: %+v", r.Public)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("a game handed back by a drain took %v to take over (the lease is 2s)", d)
	}
	c3.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c3.state(), "w", "resign", "resign")
	waitIdle(t)
}

// TestResignOnEnginesTurn (issue 27): the human resigning while the
// engine thinks loses; the record does not name the engine as the one who
// resigned (投了 belongs to the side to move): it ends 中断 with a comment
// naming the human.
func TestResignOnEnginesTurn(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	for i, tt := range []struct {
		side, handicap, winner, comment string
		first                           []string
	}{
		{"b", "", "w", "先手の投了（後手の手番中）により後手の勝ち", []string{"7g7f"}},
		{"w", "", "b", "後手の投了（先手の手番中）により先手の勝ち", nil},
		// A handicap game: the giver (上手) is White and moves first.
		{"b", "香落ち", "w", "下手の投了（上手の手番中）により上手の勝ち", nil},
	} {
		c := newConn(t, m, fmt.Sprint("ivan", i))
		hc := ""
		if tt.handicap != "" {
			hc = `"handicap":"` + tt.handicap + `",`
		}
		c.send(startReq("g", "sleeper", `{"side":"`+tt.side+`",`+hc+`"clock":{"b":{"main_ms":600000},"w":{"main_ms":600000}}}`, nil))
		v := c.state()
		for _, mv := range tt.first {
			c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: mv})
			v = c.state()
		}
		if v.Clock.Running == tt.side {
			t.Fatalf("the human (%s) is to move: %+v", tt.side, v.Clock)
		}
		c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
		v = c.until(ended)
		checkResult(t, v, tt.winner, "resign", "abort")
		if v.Result.Comment != tt.comment {
			t.Errorf("comment %q, want %q", v.Result.Comment, tt.comment)
		}
		if strings.Contains(v.Result.Comment, "投了") && v.Result.End == "resign" {
			t.Errorf("the record says 投了 of the side to move")
		}
	}
	waitIdle(t)
}

// TestTakeOverOnEnginesTurn: a game taken over while the engine thinks
// keeps the engine's clock as it ran since the turn began on the first
// instance: the new instance searches afresh (the first one's search was
// stopped) and the engine, which never answers (sleeper), loses on time
// when its time since the turn's start ran out, not that long after the
// take-over.
func TestTakeOverOnEnginesTurn(t *testing.T) {
	rs := redistest.Start(t)
	cfg := func() Config {
		return Config{Service: svc, Store: newRedisStore(t, rs.URL, "t3:", 2*time.Second), Lag: 50 * time.Millisecond}
	}
	ma, mb := New(cfg()), New(cfg())
	defer ma.Close(context.Background())
	defer mb.Close(context.Background())
	c := newConn(t, ma, "judy")
	c.send(startReq("g", "sleeper", `{"side":"b","clock":{"b":{"main_ms":600000},"w":{"main_ms":2500}}}`, nil))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "7g7f"})
	v = c.state()
	turn := time.Now() // the engine's turn began (at the latest)
	if v.Clock.Running != "w" {
		t.Fatalf("after the human's move: %+v", v.Clock)
	}
	// The engine's search has started on the first instance.
	testwait.For(t, "the engine's search on the first instance", 30*time.Second, func() bool {
		g := ma.find("judy", v.ID)
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.search != ""
	})
	c.cancel()
	// The player is away a while (the time that passes is what is
	// checked: a take-over that gave the engine its clock afresh would end
	// the game at least this much later).
	time.Sleep(1200 * time.Millisecond)
	c2 := newConn(t, mb, "judy")
	c2.send(&session.Request{Type: session.TypePlayResume, ID: "again", Game: v.ID})
	r := c2.state()
	if r.Status != statusPlaying || r.Clock.Running != "w" || r.Clock.W.MainMS > 2500-time.Since(turn).Milliseconds()+100 {
		t.Fatalf("taken over: %+v clock %+v (%v after the turn began)", r.Public, r.Clock, time.Since(turn))
	}
	v = c2.until(ended)
	lost := time.Since(turn)
	checkResult(t, v, "b", "time", "time_up")
	if lost > 2500*time.Millisecond+50*time.Millisecond+600*time.Millisecond {
		t.Errorf("the engine lost on time %v after its turn began with 2.5s: the take-over gave it time", lost)
	}
	if ma.HandedBack() != 1 {
		t.Errorf("the first instance handed back %d games", ma.HandedBack())
	}
	t.Logf("the engine lost on time %v after its turn began (2.5s + 50ms lag)", lost.Round(time.Millisecond))
	waitIdle(t)
}

// TestRedisStoreNetworkBound (issue 35): the bound on games per network
// holds across instances; an ended game frees its network's place, and
// a game without a network is not counted in any.
func TestRedisStoreNetworkBound(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	a := newRedisStore(t, rs.URL, "n1:", time.Second)
	b := newRedisStore(t, rs.URL, "n1:", time.Second)
	bd, orphan := Bounds{PerClient: 2, PerNetwork: 3, Games: 10}, time.Minute
	in := func(id, owner, network string) *State {
		st := testState(id, owner)
		if network != "" {
			st.Networks = []string{network}
		}
		return st
	}
	for i, s := range []*RedisStore{a, b, a} {
		if got, err := s.Admit(ctx, in(fmt.Sprint("g", i), fmt.Sprint("ip:203.0.113.", i), "net:203.0.113.0/24"), bd, orphan); err != nil || got != "ok" {
			t.Fatalf("game %d of the network: %q %v", i, got, err)
		}
	}
	if got, _ := b.Admit(ctx, in("g3", "ip:203.0.113.9", "net:203.0.113.0/24"), bd, orphan); got != "network:net:203.0.113.0/24" {
		t.Errorf("a fourth game of the network: %q, want network:net:203.0.113.0/24", got)
	}
	if got, _ := b.Admit(ctx, in("g4", "ip:198.51.100.1", "net:198.51.100.0/24"), bd, orphan); got != "ok" {
		t.Errorf("another network's game: %q", got)
	}
	if got, _ := b.Admit(ctx, in("g5", "key:k", ""), bd, orphan); got != "ok" {
		t.Errorf("a game without a network: %q", got)
	}
	ended := in("g1", "ip:203.0.113.1", "net:203.0.113.0/24")
	ended.Status, ended.Result = statusEnded, &Result{Winner: "b", Reason: "resign", End: "resign"}
	if err := b.Finish(ctx, ended, time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Admit(ctx, in("g3", "ip:203.0.113.9", "net:203.0.113.0/24"), bd, orphan); got != "ok" {
		t.Errorf("after one of the network's games ended: %q, want ok", got)
	}
	if n, _ := a.cl.HLen(ctx, "n1:network").Result(); n != 4 {
		t.Errorf("%d games with a network recorded, want 4 (one ended, one without)", n)
	}
}

// TestRedisStoreWiderPrefixes (issue 43): across instances, a game counts
// in each of its owner's networks (an IPv6 /64, /56 and /48), each wider
// one bounded at twice the one before; an ended game frees a place in
// each.
func TestRedisStoreWiderPrefixes(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	a := newRedisStore(t, rs.URL, "w1:", time.Second)
	b := newRedisStore(t, rs.URL, "w1:", time.Second)
	bd, orphan := Bounds{PerClient: 2, PerNetwork: 1, Games: 10}, time.Minute
	in := func(id string, sub int) *State {
		st := testState(id, fmt.Sprintf("ip:2001:db8:0:1%02x::/64", sub))
		st.Networks = session.NetworksOf(netip.MustParseAddr(fmt.Sprintf("2001:db8:0:1%02x::1", sub)))
		return st
	}
	for i, s := range []*RedisStore{a, b} {
		if got, err := s.Admit(ctx, in(fmt.Sprint("g", i), i), bd, orphan); err != nil || got != "ok" {
			t.Fatalf("game %d of the /56: %q %v", i, got, err)
		}
	}
	if got, _ := a.Admit(ctx, in("g2", 0), bd, orphan); got != "network:net:2001:db8:0:100::/64" {
		t.Errorf("a second game of one /64: %q, want its /64 full", got)
	}
	if got, _ := b.Admit(ctx, in("g3", 2), bd, orphan); got != "network:net:2001:db8:0:100::/56" {
		t.Errorf("a third game of the /56: %q, want the /56 full (twice the /64's bound)", got)
	}
	ended := in("g1", 1)
	ended.Status, ended.Result = statusEnded, &Result{Winner: "b", Reason: "resign", End: "resign"}
	if err := b.Finish(ctx, ended, time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Admit(ctx, in("g3", 2), bd, orphan); got != "ok" {
		t.Errorf("after one of the /56's games ended: %q, want ok", got)
	}
	if n, _ := a.cl.HGet(ctx, "w1:netcount", "net:2001:db8::/48").Int(); n != 2 {
		t.Errorf("the /48 counts %d games, want 2", n)
	}
}
