package review

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// A 20-move game (21 positions), as the issue's.
var game20 = strings.Fields("7g7f 3c3d 2g2f 4c4d 2f2e 2b3c 3i4h 8b4b 5i6h 5a6b 6h7h 6b7b 4i5h 7b8b 5g5f 9c9d 9g9f 7a7b 6g6f 4a5b")

// TestRedisCutMidAnalysis (issue 35): the link between an instance and
// Redis is cut for 3 s in the middle of a 21-position game analysis: under
// the default 5 s lease (nobody takes the job over), and under a 1 s one
// (the lease runs out during the cut, and the instance gives up storing a
// result after 2 s). The job ends done with every position evaluated, as
// another instance reads it from the store, or failed with a clear error:
// never done with a hole.
func TestRedisCutMidAnalysis(t *testing.T) {
	for _, lease := range []time.Duration{0, time.Second} {
		t.Run("lease "+lease.String(), func(t *testing.T) { redisCutMidAnalysis(t, lease) })
	}
}

func redisCutMidAnalysis(t *testing.T, lease time.Duration) {
	rs := redistest.Start(t)
	px := redistest.NewProxy(t, rs)
	a := newManager(t, func(c *Config) {
		c.Redis = &RedisConfig{URL: px.URL, Lease: lease, Check: 50 * time.Millisecond}
	})
	a.SetCallers(callersWith(nil))
	b := newManager(t, func(c *Config) { c.Redis = &RedisConfig{URL: rs.URL, Check: 50 * time.Millisecond} }) // reads only
	v, err := a.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: game20}, Limits: &session.Limits{Nodes: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	local := func() *View {
		a.mu.Lock()
		j := a.jobs[v.ID]
		a.mu.Unlock()
		if j == nil {
			return &View{} // ended here
		}
		return j.view()
	}
	testwait.For(t, "3 positions analysed", time.Minute, func() bool {
		return local().Progress.Done >= 3
	})
	px.Cut()
	cut := time.Now()
	cutAt := local().Progress.Done
	// The outage lasts 3 s, and until a position was analysed during it
	// (a loaded machine's searches are slow).
	testwait.For(t, "a position analysed during the cut", time.Minute, func() bool { return local().Progress.Done > cutAt })
	time.Sleep(time.Until(cut.Add(3 * time.Second)))
	px.Mend()
	lv := local()
	t.Logf("cut at %d/%d positions for %v, mended at %d (%d connections cut)", cutAt, len(game20)+1,
		time.Since(cut).Round(time.Millisecond), lv.Progress.Done, px.Cuts())
	var got *View
	testwait.For(t, "the job to end in the store", 2*time.Minute, func() bool {
		g, err := b.Get("c1", v.ID)
		if err != nil {
			t.Fatalf("get on the other instance: %v", err)
		}
		got = g
		return g.FinishedAt != nil
	})
	var holes []int
	for i, p := range got.Positions {
		if p == nil || p.Eval == nil {
			holes = append(holes, i)
		}
	}
	t.Logf("ended %s at %d/%d, positions without an evaluation: %v, error %+v", got.Status, got.Progress.Done, got.Progress.Total, holes, got.Error)
	switch got.Status {
	case StatusDone:
		checkAnalysis(t, got, "startpos", game20)
	case StatusFailed:
		if got.Error == nil || got.Error.Code == "" || got.Error.Message == "" {
			t.Fatalf("failed without a clear error: %+v", got.Error)
		}
	default:
		t.Fatalf("ended %s", got.Status)
	}
}

// A job ends done in the store only with every position's result there:
// else end says so and leaves the job as it was, held.
func TestEndDoneRefusedWithAHole(t *testing.T) {
	rs := redistest.Start(t)
	a := newManager(t, func(c *Config) { c.Redis = &RedisConfig{URL: rs.URL} })
	st, ctx := a.st, t.Context()
	st.cl.Set(ctx, st.p+"lease:j1", st.pod, time.Minute)
	st.cl.ZAdd(ctx, st.p+"active", redis.Z{Score: 1, Member: "j1"})
	st.cl.HSet(ctx, st.key("j1"), "owner", "c1", "req", "{}", "status", "running", "r:0", "{}", "r:2", "{}")
	if err := st.end("j1", StatusDone, nil, 1, time.Minute, 2); !errors.Is(err, errIncomplete) {
		t.Fatalf("end done with r:1 missing: %v, want errIncomplete", err)
	}
	if s := st.cl.HGet(ctx, st.key("j1"), "status").Val(); s != "running" || st.cl.Exists(ctx, st.p+"lease:j1").Val() != 1 {
		t.Fatalf("after a refused end: status %q, lease %d", s, st.cl.Exists(ctx, st.p+"lease:j1").Val())
	}
	st.cl.HSet(ctx, st.key("j1"), "r:1", "{}")
	if err := st.end("j1", StatusDone, nil, 1, time.Minute, 2); err != nil {
		t.Fatal(err)
	}
	if s := st.cl.HGet(ctx, st.key("j1"), "status").Val(); s != StatusDone {
		t.Fatalf("status %q, want done", s)
	}
}
