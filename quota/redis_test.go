package quota

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

func newRedis(t testing.TB, cfg RedisConfig) *Redis {
	t.Helper()
	r, err := NewRedis(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// slow refills 1 engine-second an hour: what a test takes refills nothing
// that shows at a second's precision.
var slow = Budget{Seconds: 1, Period: time.Hour, Burst: 10}

func near(got, want, tol time.Duration) bool { return got >= want-tol && got <= want+tol }

// TestRedisSharedBudget: two stores, as two pods would have, on one
// redis-server enforce one budget per client, with keys under the prefix
// that expire when the bucket would be full.
func TestRedisSharedBudget(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	pod1 := newRedis(t, RedisConfig{URL: srv.URL, Prefix: "test:q:"})
	pod2 := newRedis(t, RedisConfig{URL: srv.URL, Prefix: "test:q:"})
	if d := pod1.Allow(ctx, "key:k", slow); d != 0 {
		t.Fatalf("new client refused for %v", d)
	}
	pod1.Charge(ctx, "key:k", slow, 6*time.Second)
	if d := pod2.Allow(ctx, "key:k", slow); d != 0 {
		t.Fatalf("balance 4s refused for %v", d)
	}
	pod2.Charge(ctx, "key:k", slow, 6*time.Second) // balance -2s
	d := pod1.Allow(ctx, "key:k", slow)
	if !near(d, 2*time.Hour, 2*time.Second) {
		t.Fatalf("pod1 after pod2's charge: retry after %v, want about 2h (2 engine-seconds at 1 an hour)", d)
	}
	if d := pod2.Allow(ctx, "key:other", slow); d != 0 {
		t.Errorf("another client refused for %v", d)
	}

	cl := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer cl.Close()
	ttl, err := cl.PTTL(ctx, "test:q:key:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	// Full again after 12 engine-seconds at 1 an hour: 12h, plus a second.
	if !near(ttl, 12*time.Hour+time.Second, 5*time.Second) {
		t.Errorf("TTL %v, want about 12h", ttl)
	}
	if n, _ := cl.Exists(ctx, "test:q:key:other").Result(); n != 0 {
		t.Error("Allow alone stored a key")
	}

	// The same arithmetic as the memory store's.
	m := NewMemory(MemoryConfig{})
	m.Charge(ctx, "key:k", slow, 12*time.Second)
	if dm := m.Allow(ctx, "key:k", slow); !near(dm, d, 2*time.Second) {
		t.Errorf("memory says retry after %v, redis %v", dm, d)
	}

	// A quick budget's key vanishes once its bucket is full.
	quick := Budget{Seconds: 1, Period: 100 * time.Millisecond}
	pod1.Charge(ctx, "key:q", quick, 50*time.Millisecond)
	ttl, _ = cl.PTTL(ctx, "test:q:key:q").Result()
	if ttl <= 0 || ttl > 1100*time.Millisecond {
		t.Errorf("quick bucket's TTL %v, want 1.005s or less", ttl)
	}
}

// TestRedisOutage: with Redis gone the store keeps answering, from memory,
// and counts the errors; a client in debt is still held to it in this pod.
func TestRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	reg := prometheus.NewRegistry()
	r := newRedis(t, RedisConfig{URL: srv.URL, Registerer: reg, Backoff: time.Hour})
	ctx := t.Context()
	r.Charge(ctx, "c", slow, time.Second)
	srv.Stop()
	if d := r.Allow(ctx, "c", slow); d != 0 {
		t.Errorf("redis down, no debt in memory: refused for %v", d)
	}
	r.Charge(ctx, "c", slow, 11*time.Second)
	if d := r.Allow(ctx, "c", slow); !near(d, time.Hour, 2*time.Second) {
		t.Errorf("redis down, in debt in memory: retry after %v, want about 1h", d)
	}
	if n := testutil.ToFloat64(r.errors); n != 1 {
		t.Errorf("usid_quota_errors_total %v, want 1 (Redis left alone for Backoff after the first failure)", n)
	}
	// A caller that went away is not Redis's failure, nor refused.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r.downTil.Store(0)
	if d := r.Allow(cctx, "c", slow); d != 0 {
		t.Errorf("cancelled caller refused for %v", d)
	}
	if n := testutil.ToFloat64(r.errors); n != 1 {
		t.Errorf("usid_quota_errors_total %v after a cancelled call, want 1", n)
	}
}

func BenchmarkRedis(b *testing.B) {
	srv := redistest.Start(b)
	r := newRedis(b, RedisConfig{URL: srv.URL})
	bud := Budget{Seconds: 1e6, Period: time.Second, Burst: 1e6}
	ctx := context.Background()
	b.Run("Allow", func(b *testing.B) {
		i := 0
		for b.Loop() {
			r.Allow(ctx, clients[i%len(clients)], bud)
			i++
		}
	})
	b.Run("Charge", func(b *testing.B) {
		i := 0
		for b.Loop() {
			r.Charge(ctx, clients[i%len(clients)], bud, time.Millisecond)
			i++
		}
	})
	if n := r.errors; n != nil && testutil.ToFloat64(n) != 0 {
		b.Fatalf("%v redis errors during the benchmark", testutil.ToFloat64(n))
	}
}

func TestRedisTake(t *testing.T) {
	srv := redistest.Start(t)
	testTake(t, newRedis(t, RedisConfig{URL: srv.URL, Prefix: "test:take:"}))
}

func TestRedisTakeBackground(t *testing.T) {
	srv := redistest.Start(t)
	testTakeBackground(t, newRedis(t, RedisConfig{URL: srv.URL, Prefix: "test:bg:"}))
}

// TestUsageRecord: two instances add engine time to one client's record
// and read the sum, decayed with the half-life; another kind, another
// client and a client nobody added to are apart; the record expires.
func TestUsageRecord(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	pod1 := newRedis(t, RedisConfig{URL: srv.URL}).UsageRecord("test:fair:")
	pod2 := newRedis(t, RedisConfig{URL: srv.URL}).UsageRecord("test:fair:")
	const hl = time.Hour // decay negligible during the test
	if _, err := pod1.Exchange(ctx, "fairy", hl, map[string]float64{"a": 3, "b": 1}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := pod2.Exchange(ctx, "fairy", hl, map[string]float64{"a": 2}, []string{"b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !nearF(got["a"], 5) || !nearF(got["b"], 1) || got["c"] != 0 || len(got) != 3 {
		t.Errorf("after adds of 3+2 for a and 1 for b: %v, want a 5, b 1, c 0", got)
	}
	if got, _ := pod1.Exchange(ctx, "gps", hl, nil, []string{"a"}); got["a"] != 0 {
		t.Errorf("another kind: a used %v, want 0", got["a"])
	}
	// A short half-life: the value halves with it.
	pod1.Exchange(ctx, "fast", 200*time.Millisecond, map[string]float64{"a": 8}, nil)
	testwait.For(t, "the value to decay", time.Minute, func() bool {
		got, _ := pod2.Exchange(ctx, "fast", 200*time.Millisecond, nil, []string{"a"})
		return got["a"] > 0 && got["a"] < 4
	})
	cl := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer cl.Close()
	if ttl := cl.PTTL(ctx, "test:fair:fast:a").Val(); ttl <= 0 || ttl > 2*time.Second {
		t.Errorf("record's expiry %v, want ten half-lives (2s)", ttl)
	}
}

func nearF(a, b float64) bool { return a > b-1e-3 && a < b+1e-3 }

func TestRedisTakeUpTo(t *testing.T) {
	srv := redistest.Start(t)
	testTakeUpTo(t, newRedis(t, RedisConfig{URL: srv.URL, Prefix: "test:upto:"}))
}
