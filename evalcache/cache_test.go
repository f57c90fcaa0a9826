package evalcache

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func anyEntry(Entry) Verdict { return Use }

func depthAtLeast(d int) func(Entry) Verdict {
	return func(e Entry) Verdict {
		if e.Depth >= d {
			return Use
		}
		return Short
	}
}

func open(t *testing.T, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestKeepsDeepest(t *testing.T) {
	c := open(t, Config{})
	ctx := context.Background()
	c.Put(ctx, "k", Entry{Depth: 10, Nodes: 100, Value: []byte("ten")})
	c.Put(ctx, "k", Entry{Depth: 8, Nodes: 5000, Value: []byte("eight")})
	c.Put(ctx, "k", Entry{Depth: 10, Nodes: 50, Value: []byte("ten, fewer nodes")})
	if e, ok := c.Get(ctx, "k", anyEntry); !ok || string(e.Value) != "ten" {
		t.Fatalf("got %q %v, want the depth-10 entry", e.Value, ok)
	}
	c.Put(ctx, "k", Entry{Depth: 10, Nodes: 101, Value: []byte("ten, more nodes")})
	c.Put(ctx, "k", Entry{Depth: 12, Nodes: 1, Value: []byte("twelve")})
	if e, _ := c.Get(ctx, "k", anyEntry); string(e.Value) != "twelve" {
		t.Fatalf("got %q, want twelve", e.Value)
	}
	if _, ok := c.Get(ctx, "k", depthAtLeast(13)); ok {
		t.Fatal("depth 13 asked, depth 12 cached: want a miss")
	}
	if _, ok := c.Get(ctx, "nothing", anyEntry); ok {
		t.Fatal("hit on an absent key")
	}
	if h, m := testutil.ToFloat64(c.m.hits.WithLabelValues("memory")), testutil.ToFloat64(c.m.misses); h != 2 || m != 2 {
		t.Errorf("hits %v misses %v, want 2 2", h, m)
	}
}

func TestBounded(t *testing.T) {
	c := open(t, Config{MaxEntries: 10})
	ctx := context.Background()
	for i := 0; i < 25; i++ {
		c.Put(ctx, fmt.Sprint(i), Entry{Depth: 1, Value: []byte("v")})
		if i == 5 {
			c.Get(ctx, "0", anyEntry) // recently used: survives
		}
	}
	if c.Len() != 10 || testutil.ToFloat64(c.m.evictions) != 15 {
		t.Fatalf("len %d evictions %v, want 10 15", c.Len(), testutil.ToFloat64(c.m.evictions))
	}
	if _, ok := c.Get(ctx, "24", anyEntry); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, ok := c.Get(ctx, "1", anyEntry); ok {
		t.Error("an old entry survived")
	}
	b := open(t, Config{MaxBytes: 1000})
	for i := 0; i < 100; i++ {
		b.Put(ctx, fmt.Sprint(i), Entry{Depth: 1, Value: make([]byte, 100)})
	}
	b.mu.Lock()
	bytes := b.bytes
	b.mu.Unlock()
	if bytes > 1000 || b.Len() == 0 {
		t.Fatalf("%d bytes in %d entries, want at most 1000", bytes, b.Len())
	}
}

// TestFileSurvivesRestart: the file tier is read back by the next Cache,
// and evicted entries leave the file too.
func TestFileSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eval.db")
	ctx := context.Background()
	c, err := New(Config{File: path, MaxEntries: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		c.Put(ctx, fmt.Sprint(i), Entry{Depth: i, Nodes: int64(i * 10), TimeMS: 7, Value: []byte(fmt.Sprint("value ", i))})
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{File: path, MaxEntries: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Len() != 3 {
		t.Fatalf("%d entries read back, want 3", d.Len())
	}
	e, ok := d.Get(ctx, "4", anyEntry)
	if !ok || e.Depth != 4 || e.Nodes != 40 || e.TimeMS != 7 || string(e.Value) != "value 4" {
		t.Fatalf("entry 4 read back as %+v %v", e, ok)
	}
	if _, ok := d.Get(ctx, "0", anyEntry); ok {
		t.Fatal("an evicted entry came back from the file")
	}
}

// TestRedisShared: two caches (two usid instances) on one real
// redis-server see each other's entries, keep the deepest across writers,
// and a Redis outage only makes lookups miss.
func TestRedisShared(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := open(t, Config{RedisURL: srv.URL, Backoff: 200 * time.Millisecond})
	b := open(t, Config{RedisURL: srv.URL, Backoff: 200 * time.Millisecond})
	a.Put(ctx, "pos", Entry{Depth: 9, Nodes: 900, TimeMS: 12, Value: []byte("from a")})
	testwait.For(t, "the entry to arrive", 30*time.Second, func() bool { _, ok := b.Get(ctx, "pos", anyEntry); return ok })
	e, _ := b.Get(ctx, "pos", anyEntry)
	if e.Depth != 9 || e.Nodes != 900 || e.TimeMS != 12 || string(e.Value) != "from a" {
		t.Fatalf("b sees %+v", e)
	}
	if testutil.ToFloat64(b.m.hits.WithLabelValues("redis")) < 1 {
		t.Error("b's hit was not counted as a redis hit")
	}
	// b writes a shallower result: Redis keeps a's.
	b.Put(ctx, "pos2", Entry{Depth: 12, Value: []byte("b deep")})
	a.Put(ctx, "pos2", Entry{Depth: 5, Value: []byte("a shallow")})
	c := open(t, Config{RedisURL: srv.URL})
	testwait.For(t, "the entry to arrive", 30*time.Second, func() bool { e, ok := c.Get(ctx, "pos2", anyEntry); return ok && string(e.Value) == "b deep" })
	time.Sleep(100 * time.Millisecond) // a's write has reached Redis by now
	if e, _ := c.Get(ctx, "pos2", anyEntry); string(e.Value) != "b deep" {
		t.Fatalf("redis holds %q, want the deeper entry", e.Value)
	}
	// A deeper one from a replaces it.
	a.Put(ctx, "pos2", Entry{Depth: 20, Value: []byte("a deeper")})
	d := open(t, Config{RedisURL: srv.URL})
	testwait.For(t, "the entry to arrive", 30*time.Second, func() bool { e, ok := d.Get(ctx, "pos2", anyEntry); return ok && string(e.Value) == "a deeper" })

	// Outage: lookups miss at once (the memory tier still answers), writes drop.
	srv.Stop()
	start := time.Now()
	if _, ok := b.Get(ctx, "never-written", anyEntry); ok {
		t.Fatal("hit on a key nobody wrote")
	}
	if _, ok := b.Get(ctx, "pos", anyEntry); !ok {
		t.Fatal("the memory tier forgot pos during the outage")
	}
	b.Put(ctx, "during-outage", Entry{Depth: 1})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); b.Get(ctx, fmt.Sprint("miss", i), anyEntry) }()
	}
	wg.Wait()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("lookups during the outage took %v", d)
	}
	if testutil.ToFloat64(b.m.errors.WithLabelValues("redis")) < 1 {
		t.Error("the outage was not counted")
	}
}

func TestKey(t *testing.T) {
	if Key("a", "bc") == Key("ab", "c") || Key("a") != Key("a") || len(Key("x")) != 40 {
		t.Fatal("Key must separate its parts and be stable")
	}
}
