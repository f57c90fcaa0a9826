package deploy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

// liveRedis is Debian's redis-server running an overlay's redis.conf, as
// the Redis pod does (redistest.StartConfig), and a client of it.
type liveRedis struct {
	addr string
	cl   *redis.Client
}

func startRedisConf(t *testing.T, conf string) *liveRedis {
	t.Helper()
	s := redistest.StartConfig(t, conf)
	r := &liveRedis{addr: s.Addr, cl: redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, PoolSize: 2})}
	t.Cleanup(func() { r.cl.Close() })
	return r
}

// keys lists the keys starting with prefix (SCAN: KEYS is refused to usid's user).
func (r *liveRedis) keys(t *testing.T, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []string
	it := r.cl.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for it.Next(ctx) {
		out = append(out, it.Val())
	}
	if err := it.Err(); err != nil {
		t.Fatalf("SCAN %s*: %v", prefix, err)
	}
	return out
}

// checkRedisACL: the user usid connects as (the default one) is refused
// what redis.conf says it is: commands that flush, reconfigure or read the
// whole server, and keys outside usid's prefixes.
func checkRedisACL(t *testing.T, r *liveRedis) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, err := range map[string]error{
		"FLUSHALL":          r.cl.FlushAll(ctx).Err(),
		"CONFIG GET":        r.cl.ConfigGet(ctx, "maxmemory").Err(),
		"KEYS":              r.cl.Keys(ctx, "*").Err(),
		"SET outside usid:": r.cl.Set(ctx, "other:key", "x", time.Minute).Err(),
		"BGSAVE":            r.cl.BgSave(ctx).Err(),
	} {
		if err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("Redis %s as usid's user: %v, want NOPERM", name, err)
		}
	}
}

// analyze runs one REST analysis and returns whether it came from the cache.
func analyze(t *testing.T, u *liveUsid, body string) bool {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Post(u.base+"/v1/analyze", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST /v1/analyze: %v", err)
	}
	defer resp.Body.Close()
	var res struct {
		Cached bool            `json:"cached"`
		Lines  json.RawMessage `json:"lines"`
	}
	err = json.NewDecoder(resp.Body).Decode(&res)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("POST /v1/analyze %s: status %d, %v", body, resp.StatusCode, err)
	}
	return res.Cached
}

// metricValue sums a metric's samples (any labels) in /metrics.
func metricValue(t *testing.T, u *liveUsid, name string) float64 {
	t.Helper()
	_, body := get(t, u.base+metricsPath)
	var sum float64
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("%s: %q", name, line)
		}
		sum += v
	}
	return sum
}

// redisForConfig starts the overlays' Redis when usid.yaml names one and
// points usid.yaml's URLs at it; it returns the new text (unchanged, and a
// nil Redis, when there is none).
func redisForConfig(t *testing.T, cfg *usidConfig, rs []*rendered, text string) (string, *liveRedis) {
	t.Helper()
	urls := redisURLs(cfg)
	if len(urls) == 0 {
		return text, nil
	}
	r := rs[0]
	pods, _ := redisTarget(t, r, urls)
	d := named[*appsv1.Deployment](t, r, strings.TrimSuffix(pods.name, " pod"))
	_, conf := redisConfigOf(t, r, d)
	live := startRedisConf(t, conf)
	for _, raw := range urls {
		u, _ := url.Parse(raw)
		local := *u
		local.Host = live.addr
		text = strings.ReplaceAll(text, raw, local.String())
	}
	checkRedisACL(t, live)
	return text, live
}

// checkRedisUse: with usid on the overlay's Redis, a search leaves its
// evaluation under cache.redis_prefix and the client's engine-time balance
// under access.redis_prefix, and usid counted no Redis error.
func checkRedisUse(t *testing.T, u *liveUsid, cfg *usidConfig, r *liveRedis, body string) {
	t.Helper()
	if analyze(t, u, body) {
		t.Fatalf("first analysis %s came from the cache (Redis should start empty)", body)
	}
	for _, prefix := range []string{cfg.Cache.RedisPrefix, cfg.Access.RedisPrefix} {
		testwait.For(t, "a key "+prefix+"* in Redis", 30*time.Second, func() bool { return len(r.keys(t, prefix)) > 0 })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, prefix := range []string{cfg.Cache.RedisPrefix, cfg.Access.RedisPrefix} {
		for _, k := range r.keys(t, prefix) {
			n, err := r.cl.MemoryUsage(ctx, k).Result()
			ttl, err2 := r.cl.PTTL(ctx, k).Result()
			if err != nil || err2 != nil {
				t.Errorf("MEMORY USAGE/PTTL %s: %v %v", k, err, err2)
				continue
			}
			if ttl <= 0 {
				t.Errorf("Redis key %s has no TTL (%v): it would only leave by eviction", k, ttl)
			}
			t.Logf("Redis key %s: %d bytes, TTL %v", k, n, ttl.Round(time.Second))
		}
	}
	for _, m := range []string{"usid_quota_errors_total", "usid_evalcache_errors_total"} {
		if v := metricValue(t, u, m); v != 0 {
			t.Errorf("%s = %v with the overlay's Redis up", m, v)
		}
	}
}
