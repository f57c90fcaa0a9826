package evalcache

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

// slowRedis bounds a Redis call in these tests: seconds, so that a loaded
// machine does not make the cache back off and drop the writes they wait
// for.
const slowRedis = 5 * time.Second

// raw is a plain client on the test's redis-server: what anyone able to
// write to the shared Redis could do.
func raw(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(opt)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// outBytes is how many bytes redis-server has sent to its clients.
func outBytes(t *testing.T, cl *redis.Client) int64 {
	t.Helper()
	info, err := cl.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes in INFO stats")
	return 0
}

// TestRedisHostileEntries: whatever is written to the shared Redis under a
// key, usid never uses an entry whose numbers no search reports, never
// loads an oversized value (redis-server sends less than a kilobyte for a
// 30 MB one), and replaces such entries with the next honest result.
func TestRedisHostileEntries(t *testing.T) {
	srv := redistest.Start(t)
	cl := raw(t, srv)
	ctx := context.Background()
	c := open(t, Config{RedisURL: srv.URL, Timeout: slowRedis})
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	old := strconv.FormatInt(time.Now().Add(-8*24*time.Hour).UnixMilli(), 10)
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	big := strings.Repeat("x", 30<<20)
	hostile := map[string]func(k string) error{
		"a string": func(k string) error { return cl.Set(ctx, k, "depth 40", 0).Err() },
		"30 MB of data": func(k string) error {
			return cl.HSet(ctx, k, "depth", 40, "nodes", 1, "time", 1, "at", now, "data", big).Err()
		},
		"depth 10^30": func(k string) error {
			return cl.HSet(ctx, k, "depth", "1"+strings.Repeat("0", 30), "nodes", 1, "time", 1, "at", now, "data", "{}").Err()
		},
		"depth 100000": func(k string) error {
			return cl.HSet(ctx, k, "depth", 100000, "nodes", 1, "time", 1, "at", now, "data", "{}").Err()
		},
		"negative depth": func(k string) error {
			return cl.HSet(ctx, k, "depth", -1, "nodes", 1, "time", 1, "at", now, "data", "{}").Err()
		},
		"8 days old": func(k string) error {
			return cl.HSet(ctx, k, "depth", 40, "nodes", 1, "time", 1, "at", old, "data", "{}").Err()
		},
		"from the future": func(k string) error {
			return cl.HSet(ctx, k, "depth", 40, "nodes", 1, "time", 1, "at", future, "data", "{}").Err()
		},
		"no time of search": func(k string) error { return cl.HSet(ctx, k, "depth", 40, "nodes", 1, "time", 1, "data", "{}").Err() },
	}
	for name, write := range hostile {
		key := "k-" + strings.ReplaceAll(name, " ", "-")
		if err := write("usid:eval:" + key); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before := outBytes(t, cl)
		judged := false
		if e, ok := c.Get(ctx, key, func(Entry) Verdict { judged = true; return Use }); ok || judged {
			t.Errorf("%s: served %+v (judged %v)", name, e, judged)
		}
		if sent := outBytes(t, cl) - before; sent > 4096 {
			t.Errorf("%s: redis-server sent %d bytes for one lookup", name, sent)
		}
		// The next honest result replaces it, though shallower.
		c.Put(ctx, key, Entry{Depth: 8, Nodes: 1000, TimeMS: 20, Value: []byte("honest")})
		fresh := open(t, Config{RedisURL: srv.URL, Timeout: slowRedis})
		testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { e, ok := fresh.Get(ctx, key, anyEntry); return ok && string(e.Value) == "honest" })
	}
}

// TestRedisTTLNotRenewed: offering a result no deeper than the stored one
// leaves its lifetime alone (before: every such write renewed it, so
// repeating one request kept a wrong entry for ever); a deeper one is a new
// entry with a full lifetime.
func TestRedisTTLNotRenewed(t *testing.T) {
	srv := redistest.Start(t)
	cl := raw(t, srv)
	ctx := context.Background()
	c := open(t, Config{RedisURL: srv.URL, Timeout: slowRedis})
	c.Put(ctx, "k", Entry{Depth: 20, Nodes: 5000, Value: []byte("deep")})
	testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { return cl.Exists(ctx, "usid:eval:k").Val() == 1 })
	cl.PExpire(ctx, "usid:eval:k", time.Minute) // as if written 7 days less a minute ago
	c.Put(ctx, "k", Entry{Depth: 20, Nodes: 5000, Value: []byte("the same again")})
	c.Put(ctx, "k", Entry{Depth: 12, Nodes: 90000, Value: []byte("shallower")})
	c.Put(ctx, "marker", Entry{Depth: 1, Value: []byte("m")}) // the writer keeps order
	testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { return cl.Exists(ctx, "usid:eval:marker").Val() == 1 })
	if ttl := cl.PTTL(ctx, "usid:eval:k").Val(); ttl > time.Minute {
		t.Fatalf("the stored entry's lifetime was renewed to %v by writes that kept it", ttl)
	}
	if v := cl.HGet(ctx, "usid:eval:k", "data").Val(); v != "deep" {
		t.Fatalf("redis holds %q", v)
	}
	c.Put(ctx, "k", Entry{Depth: 21, Nodes: 1, Value: []byte("deeper")})
	testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { return cl.HGet(ctx, "usid:eval:k", "data").Val() == "deeper" })
	if ttl := cl.PTTL(ctx, "usid:eval:k").Val(); ttl < 24*time.Hour {
		t.Fatalf("a deeper entry got a lifetime of %v", ttl)
	}
}

// TestEntriesAge: an entry is used and kept at most TTL after its search,
// in memory too; out of bounds it is not stored; a stale one gives way to
// any new result.
func TestEntriesAge(t *testing.T) {
	c := open(t, Config{TTL: time.Hour})
	ctx := context.Background()
	c.Put(ctx, "old", Entry{Depth: 40, Value: []byte("old"), At: time.Now().Add(-2 * time.Hour)})
	if _, ok := c.Get(ctx, "old", anyEntry); ok {
		t.Fatal("an entry older than its lifetime was stored and served")
	}
	c.Put(ctx, "k", Entry{Depth: 40, Value: []byte("deep"), At: time.Now().Add(-59 * time.Minute)})
	if _, ok := c.Get(ctx, "k", anyEntry); !ok {
		t.Fatal("a young entry was not kept")
	}
	// Age it in place (as time passing would).
	c.mu.Lock()
	c.items["k"].Value.(*item).e.At = time.Now().Add(-61 * time.Minute)
	c.mu.Unlock()
	if _, ok := c.Get(ctx, "k", anyEntry); ok {
		t.Fatal("an entry past its lifetime was served from memory")
	}
	c.Put(ctx, "k2", Entry{Depth: 40, Value: []byte("deep")})
	c.mu.Lock()
	c.items["k2"].Value.(*item).e.At = time.Now().Add(-61 * time.Minute)
	c.mu.Unlock()
	c.Put(ctx, "k2", Entry{Depth: 5, Value: []byte("shallow, young")})
	if e, ok := c.Get(ctx, "k2", anyEntry); !ok || string(e.Value) != "shallow, young" {
		t.Fatalf("a stale deep entry kept its place: %q %v", e.Value, ok)
	}
	for _, e := range []Entry{{Depth: 256}, {Depth: -1}, {Nodes: -1}, {Value: make([]byte, 65<<10)}, {At: time.Now().Add(time.Hour)}} {
		c.Put(ctx, "bad", e)
		if _, ok := c.Get(ctx, "bad", anyEntry); ok {
			t.Errorf("stored out of bounds: depth %d nodes %d %d bytes at %v", e.Depth, e.Nodes, len(e.Value), e.At)
		}
	}
}

// TestRejectRemoves: an entry its reader rejects leaves every tier.
func TestRejectRemoves(t *testing.T) {
	srv := redistest.Start(t)
	cl := raw(t, srv)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "eval.db")
	c := open(t, Config{RedisURL: srv.URL, File: path, Timeout: slowRedis})
	c.Put(ctx, "k", Entry{Depth: 9, Value: []byte("bad")})
	testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { return cl.Exists(ctx, "usid:eval:k").Val() == 1 })
	if _, ok := c.Get(ctx, "k", func(Entry) Verdict { return Reject }); ok {
		t.Fatal("a rejected entry was served")
	}
	testwait.For(t, "the write to reach redis", 30*time.Second, func() bool { return cl.Exists(ctx, "usid:eval:k").Val() == 0 })
	if c.Len() != 0 {
		t.Fatal("the rejected entry stayed in memory")
	}
	if v := testutil.ToFloat64(c.m.rejected.WithLabelValues("memory")); v != 1 {
		t.Errorf("%v rejections counted, want 1", v)
	}
	c.Close()
	d := open(t, Config{File: path})
	if d.Len() != 0 {
		t.Fatal("the rejected entry came back from the file")
	}
}

// TestBrokenFile: a file bbolt cannot use (random bytes, truncated, a
// zeroed meta page, another program's database) is moved aside and a new
// one made: the cache opens (before: "invalid database", and usid did not
// start) and works.
func TestBrokenFile(t *testing.T) {
	valid := func(path string) {
		f, err := openFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.close()
		err = f.db.Update(func(tx *bolt.Tx) error {
			for i := range 2000 {
				if err := tx.Bucket(bucket).Put([]byte(strconv.Itoa(i)), encode(Entry{Depth: 3, At: time.Now(), Value: make([]byte, 300)})); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	damage := map[string]func(path string) error{
		"random bytes": func(path string) error {
			b := make([]byte, 64<<10)
			rand.Read(b)
			return os.WriteFile(path, b, 0o600)
		},
		"truncated": func(path string) error {
			valid(path)
			st, _ := os.Stat(path)
			return os.Truncate(path, st.Size()/3)
		},
		"zeroed meta pages": func(path string) error {
			valid(path)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(make([]byte, 2*os.Getpagesize()), 0)
			return err
		},
		"zeroed first meta page": func(path string) error {
			valid(path)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(make([]byte, os.Getpagesize()), 0)
			return err
		},
		"scribbled data pages": func(path string) error {
			valid(path)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			b := make([]byte, 32<<10)
			rand.Read(b)
			_, err = f.WriteAt(b, int64(4*os.Getpagesize()))
			return err
		},
		"another program's database": func(path string) error {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				return err
			}
			defer db.Close()
			return db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("users"))
				if err != nil {
					return err
				}
				return b.Put([]byte("alice"), []byte("secret"))
			})
		},
		"empty": func(path string) error { return os.WriteFile(path, nil, 0o600) },
	}
	for name, hurt := range damage {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "eval.db")
			if err := hurt(path); err != nil {
				t.Fatal(err)
			}
			c, err := New(Config{File: path}, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			ctx := context.Background()
			c.Put(ctx, "after", Entry{Depth: 7, Value: []byte("v")})
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			d, err := New(Config{File: path}, nil)
			if err != nil {
				t.Fatalf("reopening the new file: %v", err)
			}
			defer d.Close()
			if e, ok := d.Get(ctx, "after", anyEntry); !ok || string(e.Value) != "v" {
				t.Fatalf("the new file did not keep an entry: %+v %v", e, ok)
			}
			// An empty file is a new database; everything else is kept
			// aside for a look.
			if _, err := os.Stat(path + ".broken"); (err == nil) != (name != "empty") {
				t.Errorf("%s kept aside: %v", path+".broken", err)
			}
		})
	}
	// A file locked by another process is not ours to move.
	path := filepath.Join(t.TempDir(), "eval.db")
	a, err := New(Config{File: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := New(Config{File: path}, nil); err == nil || !errors.Is(err, bolt.ErrTimeout) {
		t.Fatalf("a second cache on a locked file: %v, want the lock's timeout", err)
	}
	if _, err := os.Stat(path + ".broken"); err == nil {
		t.Fatal("a locked file was moved aside")
	}
}
