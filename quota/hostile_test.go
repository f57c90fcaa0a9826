package quota

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
)

// TestRedisHostileBuckets (issue 35): a bucket read back from Redis is
// checked as a client's input is. Whatever is planted under a client's
// key (a balance no charge leaves: NaN, infinities, far below zero; a
// count in the future by Redis's own clock; fields of 60 MB), the bucket
// reads as a fresh one: a 1 s search is taken, and once 30 s were charged
// the client is refused for the time an honest bucket takes to refill,
// with no Redis failure (no fallback to each pod's own memory).
func TestRedisHostileBuckets(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	cl := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer cl.Close()
	now, err := cl.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	sec := strconv.FormatInt(now.Unix(), 10)
	future := strconv.FormatInt(now.Add(24*time.Hour).Unix(), 10)
	big := string(make([]byte, 60<<20))
	for _, tt := range []struct {
		name    string
		t, s, u string
	}{
		{"NaN", "nan", sec, "0"},
		{"-NaN", "-nan", sec, "0"},
		{"+inf", "inf", sec, "0"},
		{"-inf", "-inf", sec, "0"},
		{"1e308", "1e308", sec, "0"},
		{"-1e308", "-1e308", sec, "0"},
		{"counted tomorrow", "-5", future, "0"},
		{"us 1e12", "-5", sec, "1e12"},
		{"60 MB", big, sec, "0"},
	} {
		// A store of its own: a failure's fallback does not reach the next.
		r := newRedis(t, RedisConfig{URL: srv.URL, Prefix: "h:", Timeout: 5 * time.Second})
		key := "key:" + tt.name
		cl.HSet(ctx, "h:"+key, "t", tt.t, "s", tt.s, "us", tt.u)
		// slow: 10 engine-seconds of burst, refilled at 1 an hour.
		first := r.Take(ctx, key, slow, time.Second)
		r.Charge(ctx, key, slow, 30*time.Second)
		after := r.Allow(ctx, key, slow)
		fails := testutil.ToFloat64(r.errors)
		t.Logf("%s: a 1 s take: retry after %v; after 30 s charged: retry after %v; redis failures %v", tt.name, first.Round(time.Second), after.Round(time.Second), fails)
		// An honest full bucket: 10 - 1 - 30 = -21 engine-seconds, 21 h.
		if first != 0 || !near(after, 21*time.Hour, time.Minute) || fails != 0 {
			t.Errorf("%s: a 1 s take: retry after %v; after 30 s charged: retry after %v (want 21h); redis failures %v", tt.name, first, after, fails)
		}
	}
}
