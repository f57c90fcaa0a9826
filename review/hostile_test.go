package review

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/session"
)

// sentBytes is how many bytes redis-server has sent to its clients.
func sentBytes(t *testing.T, cl *redis.Client) int64 {
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

// TestHostileStoredJobs (issue 35): a job's record read back from Redis is
// checked as a client's input is: an error field of 5 MB, or one holding
// a bidi override, is never served; a 60 MB field, or a hash of a million
// fields, is never sent by redis-server (measured on the server first); a
// status usid never writes is refused.
func TestHostileStoredJobs(t *testing.T) {
	rs := redistest.Start(t)
	m := newManager(t, func(c *Config) { c.Redis = &RedisConfig{URL: rs.URL} }) // takes nothing: no callers
	opt, _ := redis.ParseURL(rs.URL)
	// The test's own writes are large (a million fields in one pipeline):
	// on a busy machine they outlast go-redis's 3 s default.
	opt.ReadTimeout, opt.WriteTimeout = time.Minute, time.Minute
	cl := redis.NewClient(opt)
	defer cl.Close()
	ctx := context.Background()
	v, serr := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening[:2]}, Limits: &session.Limits{Nodes: 1000}})
	if serr != nil {
		t.Fatal(serr)
	}
	k := "usid:games:job:" + v.ID
	get := func(what string) (*View, int64) {
		t.Helper()
		before := sentBytes(t, cl)
		g, serr := m.Get("c1", v.ID)
		sent := sentBytes(t, cl) - before
		if serr != nil {
			t.Fatalf("%s: get: %v", what, serr)
		}
		msg := ""
		if g.Error != nil {
			msg = g.Error.Message
		}
		t.Logf("%s: %s, error message of %d bytes, redis-server sent %d bytes", what, g.Status, len(msg), sent)
		if strings.ContainsFunc(msg, session.IsControl) || len(msg) > 1024 {
			t.Errorf("%s: the stored error served: %d bytes %q...", what, len(msg), msg[:min(len(msg), 40)])
		}
		if sent > 64<<10 {
			t.Errorf("%s: redis-server sent %d bytes for one read", what, sent)
		}
		return g, sent
	}
	cl.HSet(ctx, k, "status", StatusFailed, "finished", strconv.FormatInt(time.Now().UnixMilli(), 10),
		"error", `{"code":"engine_error","message":"`+strings.Repeat("\u202e", 5<<20/3)+`"}`)
	get("a 5 MB error")
	cl.HSet(ctx, k, "error", `{"code":"engine_error","message":"the engine said \u202egnp.exe"}`)
	get("an error with a bidi override")
	cl.HSet(ctx, k, "error", `{"code":"engine_error","message":"the engine crashed"}`)
	if g, _ := get("a sound error"); g.Error == nil || g.Error.Message != "the engine crashed" {
		t.Errorf("a sound error: %+v", g.Error)
	}
	cl.HSet(ctx, k, "junk", make([]byte, 60<<20))
	get("a 60 MB field")
	cl.HDel(ctx, k, "junk")
	cl.HSet(ctx, k, "status", "<b>owned</b>")
	if g, serr := m.Get("c1", v.ID); serr == nil {
		t.Errorf("a status usid never writes: served as %q", g.Status)
	}
	pipe := cl.Pipeline()
	for i := range 1000 {
		fields := make([]any, 0, 2000)
		for j := range 1000 {
			fields = append(fields, "n:x"+strconv.Itoa(i*1000+j), "1")
		}
		pipe.HSet(ctx, k, fields...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before := sentBytes(t, cl)
	_, serr = m.Get("c1", v.ID)
	sent := sentBytes(t, cl) - before
	t.Logf("a million fields: %v; redis-server sent %d bytes", serr, sent)
	if serr == nil || serr.Code != CodeNotFound || sent > 64<<10 {
		t.Errorf("a million fields: %v, %d bytes sent; want not_found (it reads as absent)", serr, sent)
	}
}

// TestHostilePauseEnd (issue 35): a paused job whose resume lies further
// ahead than any pause usid makes (written by a pod whose clock is far
// ahead, or by a hand in the Redis) is taken as due: it runs to its end
// rather than holding its owner's job slot for ever.
func TestHostilePauseEnd(t *testing.T) {
	rs := redistest.Start(t)
	m := newManager(t, func(c *Config) { c.Redis = &RedisConfig{URL: rs.URL, Check: 50 * time.Millisecond} })
	opt, _ := redis.ParseURL(rs.URL)
	// The test's own writes are large (a million fields in one pipeline):
	// on a busy machine they outlast go-redis's 3 s default.
	opt.ReadTimeout, opt.WriteTimeout = time.Minute, time.Minute
	cl := redis.NewClient(opt)
	defer cl.Close()
	v, serr := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Moves: opening[:2]}, Limits: &session.Limits{Nodes: 1000}})
	if serr != nil {
		t.Fatal(serr)
	}
	cl.HSet(context.Background(), "usid:games:job:"+v.ID, "status", StatusPaused, "resume", strconv.FormatInt(time.Now().Add(1000*time.Hour).UnixMilli(), 10))
	m.SetCallers(callersWith(nil))
	began := time.Now()
	g := wait(t, m, "c1", v.ID, 30*time.Second)
	t.Logf("resume 1000 h ahead: %s %+v after %v", g.Status, g.Progress, time.Since(began).Round(time.Millisecond))
	checkAnalysis(t, g, "startpos", opening[:2])
}
