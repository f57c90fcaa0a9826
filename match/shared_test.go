package match

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/match/stats"
	"github.com/usid/usid/play"
	"github.com/usid/usid/session"
)

// pods are three Managers ("pods") sharing one Redis under prefix.
func pods(t *testing.T, url, prefix string, cfg Config) [3]*Manager {
	t.Helper()
	var ps [3]*Manager
	for k := range ps {
		cfg.Service, cfg.MaxRunning, cfg.MaxConcurrency = svc, 1, 2
		lease := 600 * time.Millisecond
		if cfg.Redis != nil {
			lease = cfg.Redis.Lease
		}
		cfg.Redis = &RedisConfig{URL: url, Prefix: prefix, Lease: lease, Check: 50 * time.Millisecond}
		m, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m.SetCallers(func(client string) session.Caller { return session.Caller{Client: client} })
		ps[k] = m
	}
	t.Cleanup(func() {
		for _, m := range ps {
			m.Close()
		}
		testwait.For(t, "every engine given back", time.Minute, allIdle)
	})
	return ps
}

func view(t *testing.T, m *Manager, id string) *View {
	t.Helper()
	mt := m.Get(id)
	if mt == nil {
		t.Fatalf("match %s: not found", id)
	}
	return mt.View()
}

// over reports whether a match's status is a final one: neither queued (a
// busy machine's pods may not have taken it up yet) nor running.
func over(status string) bool {
	return status == StatusDone || status == StatusCancelled || status == StatusFailed
}

// TestMatchAcrossPods: three pods on one Redis play a match started on
// one; the pod playing a game is killed (its context cancelled, nothing
// handed back) once a game has ended: the match still ends, every game
// played, the games ended before the kill kept as they were, the one the
// killed pod held played again from its start by another after its lease
// ran out; every pod answers the same, each game with the players'
// evaluations; the strong side is still ahead.
func TestMatchAcrossPods(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "t:", Config{})
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	ctx := context.Background()

	id, err := ps[0].Start(session.Caller{Client: "a"}, &Request{
		Players:     []Player{{Engine: "fairy"}, {Engine: "fairy", Options: map[string]string{"Skill Level": "-20"}}},
		Games:       8,
		Limits:      &session.Limits{Nodes: 3000},
		Concurrency: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A game ended, and one held: the pod holding it is the one to kill.
	var victim *Manager
	var held string
	var before map[int]*Game
	testwait.For(t, "a game ended and another held", time.Minute, func() bool {
		st, err := ps[1].shared.load(ctx, id, 1000)
		if err != nil || st == nil || len(st.games) == 0 {
			return false
		}
		keys, _ := rc.Keys(ctx, "t:l:"+id+":*").Result()
		for _, k := range keys {
			pod, _ := rc.Get(ctx, k).Result()
			for _, m := range ps {
				if m.shared.pod == pod {
					victim, held, before = m, k, st.games
					return true
				}
			}
		}
		return false
	})
	victim.kill()
	if pod, _ := rc.Get(ctx, held).Result(); pod != victim.shared.pod {
		t.Fatalf("the killed pod's lease %s: held by %q after the kill, want still its own until it runs out", held, pod)
	}
	var others []*Manager
	for _, m := range ps {
		if m != victim {
			others = append(others, m)
		}
	}
	testwait.For(t, "the match ended", 3*time.Minute, func() bool {
		return over(view(t, others[0], id).Status)
	})
	v := view(t, others[0], id)
	if v.Status != StatusDone || len(v.Games) != 8 {
		t.Fatalf("got %s with %d games, want done with 8: %+v", v.Status, len(v.Games), v.Error)
	}
	for i, g := range before {
		cp := *g
		cp.Index, cp.Watch = i, "/watch/"+id+"/"+strconv.Itoa(i) // as a view names it
		a, _ := json.Marshal(cp)
		b, _ := json.Marshal(v.Games[i])
		if string(a) != string(b) {
			t.Errorf("game %d ended before the kill changed:\n%s\n%s", i, a, b)
		}
	}
	a, _ := json.Marshal(v)
	b, _ := json.Marshal(view(t, others[1], id))
	if string(a) != string(b) {
		t.Errorf("two pods answer differently:\n%s\n%s", a, b)
	}
	for i := range v.Games { // as their watch pages read them, the players' evaluations kept
		if gv := others[1].Get(id).Game(i); gv == nil || len(gv.Evals) == 0 || gv.Line == nil {
			t.Errorf("game %d as watched once stored: %+v, want the players' evaluations", i, gv)
		}
	}
	t.Logf("killed while it held %s; score %+v, pairs %v", held[strings.LastIndex(held, ":")+1:], v.Score, *v.Pairs)
	if v.Score.Wins <= v.Score.Losses {
		t.Errorf("got %+v: want the strong side ahead", v.Score)
	}
	recheck(t, v)
}

// TestMatchSharedCancelAndBounds: a match started on one pod is bounded
// for every pod (per client, in all), read and cancelled on another (by
// its owner only); a stored game over its bound is refused unread.
func TestMatchSharedCancelAndBounds(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "c:", Config{MaxPerClient: 1, MaxMatches: 2})
	slow := &Request{Players: []Player{{Engine: "fairy"}, {Engine: "fairy"}}, Games: 50, Limits: &session.Limits{MoveTimeMS: 200}}
	id, err := ps[0].Start(session.Caller{Client: "a"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps[1].Start(session.Caller{Client: "a"}, slow); err == nil || err.Code != session.CodeTooManyRequests {
		t.Fatalf("a second match of one client on another pod: got %v, want too_many_requests", err)
	}
	id2, err := ps[1].Start(session.Caller{Client: "b"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps[2].Start(session.Caller{Client: "c"}, slow); err == nil || err.Code != session.CodeQueueFull {
		t.Fatalf("a third match: got %v, want queue_full", err)
	}
	testwait.For(t, "the first match's first move", time.Minute, func() bool {
		v := view(t, ps[2], id)
		return v.Status == StatusRunning
	})
	if cancels(t, ps[1], id, "b") {
		t.Error("another client cancelled the match")
	}
	if !cancels(t, ps[2], id, "a") || !cancels(t, ps[0], id2, "b") {
		t.Fatal("owners could not cancel")
	}
	for _, m := range ps {
		for _, i := range []string{id, id2} {
			mt := m.Get(i)
			if mt == nil || !mt.isEnded() || mt.View().Status != StatusCancelled {
				t.Errorf("match %s on a pod: %v, want cancelled", i, mt)
			}
		}
	}
	// Its bound taken back: client a may start again.
	id3, err := ps[1].Start(session.Caller{Client: "a"}, slow)
	if err != nil {
		t.Fatalf("after the cancel: %v", err)
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	rc.HSet(context.Background(), "c:g:"+id3, "0", strings.Repeat("x", maxStoredGame+1))
	if mt := ps[0].Get(id3); mt != nil {
		t.Errorf("a match with a stored game over its bound: read as %+v", mt.View())
	}
	cancels(t, ps[1], id3, "a")
}

// TestMatchSharedSPRT: the pods stop handing out games once the stored
// games decide the SPRT (a player resigning every game: H1 after 17 pairs
// all won), the games under way played out; the result is the stored
// games', the same on every pod.
func TestMatchSharedSPRT(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "s:", Config{})
	id, err := ps[2].Start(session.Caller{Client: "a"}, &Request{
		Players:  []Player{{Engine: "fake"}, {Engine: "resigner"}},
		Pairs:    40,
		Clock:    &play.TimeControl{MainMS: 10000, ByoyomiMS: 100},
		Openings: []*session.Position{{Start: "startpos", Moves: []string{"7g7f", "3c3d"}}},
		SPRT:     &SPRT{Elo0: 0, Elo1: 50}, Concurrency: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the match ended", 2*time.Minute, func() bool { return over(view(t, ps[0], id).Status) })
	v := view(t, ps[1], id)
	if v.Status != StatusDone || v.SPRT == nil || v.SPRT.Decision == nil || *v.SPRT.Decision != stats.H1 {
		t.Fatalf("got %s, SPRT %+v, want done with H1", v.Status, v.SPRT)
	}
	t.Logf("%d games, LLR %.2f", len(v.Games), v.SPRT.LLR)
	if n := len(v.Games); n < 34 || n > 38 || v.Score.Wins != n {
		t.Errorf("got %d games, score %+v: want 34 and at most the two under way, every one won", n, v.Score)
	}
	a, _ := json.Marshal(v)
	b, _ := json.Marshal(view(t, ps[0], id))
	if string(a) != string(b) {
		t.Errorf("two pods answer differently:\n%s\n%s", a, b)
	}
}

// TestMatchSharedKept: at most MaxKept ended matches are kept, over all
// pods: the oldest is forgotten when another ends.
func TestMatchSharedKept(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "k:", Config{MaxKept: 1})
	r := &Request{Players: []Player{{Engine: "fake"}, {Engine: "fake"}}, Games: 50, Limits: &session.Limits{Nodes: 1000}}
	var ids []string
	for k := range 2 {
		id, err := ps[k].Start(session.Caller{Client: "a"}, r)
		if err != nil {
			t.Fatal(err)
		}
		if !cancels(t, ps[2-k], id, "a") {
			t.Fatalf("match %d not cancelled", k)
		}
		ids = append(ids, id)
	}
	if ps[1].Get(ids[0]) != nil || ps[1].Get(ids[1]) == nil {
		t.Errorf("with max_kept 1: the first ended match kept %v, the second %v", ps[1].Get(ids[0]) != nil, ps[1].Get(ids[1]) != nil)
	}
}

// TestMatchSharedStoreDown: with its Redis gone, a pod refuses a match
// and answers a read or a cancel with a 503 to retry, not a "no such
// match".
func TestMatchSharedStoreDown(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "d:", Config{})
	r := &Request{Players: []Player{{Engine: "fake"}, {Engine: "fake"}}, Games: 2, Limits: &session.Limits{Nodes: 1000}}
	id, err := ps[0].Start(session.Caller{Client: "a"}, r)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the match ended", time.Minute, func() bool { return view(t, ps[1], id).Status == StatusDone })
	rs.Stop()
	if _, err := ps[0].Start(session.Caller{Client: "b"}, r); err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("start with Redis down: %v, want queue_full", err)
	}
	if mt, err := ps[1].Lookup(id); mt != nil || err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("read with Redis down: %v %v, want queue_full", mt, err)
	}
	if ok, err := ps[0].Cancel(id, session.Caller{Client: "a"}); ok || err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("cancel with Redis down: %v %v, want queue_full", ok, err)
	}
}

// TestMatchSharedDrain: a pod closed (drained) gives the games it plays
// back at once: another pod plays them again long before their lease
// (a minute here) could run out.
func TestMatchSharedDrain(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "n:", Config{Redis: &RedisConfig{Lease: time.Minute}})
	id, err := ps[0].Start(session.Caller{Client: "a"}, &Request{
		Players: []Player{{Engine: "fairy"}, {Engine: "fairy"}}, Games: 3, Limits: &session.Limits{Nodes: 3000},
	})
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	ctx := context.Background()
	var holder *Manager
	testwait.For(t, "a game held", time.Minute, func() bool {
		keys, _ := rc.Keys(ctx, "n:l:"+id+":*").Result()
		for _, k := range keys {
			pod, _ := rc.Get(ctx, k).Result()
			for _, m := range ps {
				if m.shared.pod == pod {
					holder = m
					return true
				}
			}
		}
		return false
	})
	holder.Close()
	var other *Manager
	for _, m := range ps {
		if m != holder {
			other = m
		}
	}
	testwait.For(t, "the match ended", 30*time.Second, func() bool { return view(t, other, id).Status == StatusDone })
	if v := view(t, other, id); len(v.Games) != 3 {
		t.Errorf("got %d games, want 3", len(v.Games))
	}
}

// TestMatchSharedGamesInProgress: a game under way on one pod is listed
// by every pod with its watch link and no result yet, and its watch route
// (Game) on a pod that does not play it follows it move by move, with
// the players' evaluations.
func TestMatchSharedGamesInProgress(t *testing.T) {
	rs := redistest.Start(t)
	ps := pods(t, rs.URL, "w:", Config{})
	id, err := ps[0].Start(session.Caller{Client: "a"}, &Request{
		Players: []Player{{Engine: "fairy"}, {Engine: "fairy"}}, Games: 2, Limits: &session.Limits{MoveTimeMS: 100},
		Openings: []*session.Position{{Start: "startpos", Moves: []string{"7g7f"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	testwait.For(t, "the first game under way, listed by every pod", time.Minute, func() bool {
		for _, m := range ps {
			v := view(t, m, id)
			if v.Status != StatusRunning || len(v.Games) == 0 || v.Games[0].Done || len(v.Games[0].Position.Moves) < 3 {
				return false
			}
		}
		seen = view(t, ps[2], id).Games[0].Position.Moves
		return true
	})
	v := view(t, ps[1], id)
	b, _ := json.Marshal(v.Games[0])
	var fields map[string]any
	json.Unmarshal(b, &fields)
	if _, has := fields["winner"]; has || fields["watch"] != "/watch/"+id+"/0" || fields["index"] != 0.0 || fields["reason"] != nil || v.Score != (Score{}) {
		t.Errorf("the game under way as listed: %s (score %+v), want its watch link, no winner, no reason, nothing counted", b, v.Score)
	}
	testwait.For(t, "the game's next moves and evaluations, seen from each pod", time.Minute, func() bool {
		for _, m := range ps {
			gv := m.Get(id).Game(0)
			if gv == nil || gv.Status != StatusRunning || len(gv.Game.Position.Moves) <= len(seen) || len(gv.Evals) == 0 || gv.Line == nil {
				return false
			}
			if !slices.Equal(gv.Game.Position.Moves[:len(seen)], seen) {
				t.Fatalf("the game went from %v to %v", seen, gv.Game.Position.Moves)
			}
		}
		return true
	})
	if !cancels(t, ps[2], id, "a") {
		t.Fatal("the owner could not cancel")
	}
	if v := view(t, ps[0], id); v.Status != StatusCancelled || len(v.Games) != 0 {
		t.Errorf("cancelled: %s with %d games listed, want none (a game cut short does not count)", v.Status, len(v.Games))
	}
}
