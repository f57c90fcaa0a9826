package evalcache

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisStore is the shared tier: one hash per key (depth, nodes, time,
// data) with a TTL. go-redis is the Redis project's own Go client.
type redisStore struct {
	cl      *redis.Client
	prefix  string
	timeout time.Duration
	backoff time.Duration
	downTil atomic.Int64 // unix nanos until which Redis is not asked
}

// keepDeeper writes the entry unless the stored one is deeper (depth, then
// nodes), in one step on the server, so that concurrent writers from
// several instances keep the deepest; either way the TTL is renewed.
var keepDeeper = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'depth', 'nodes')
local d, n = tonumber(cur[1]), tonumber(cur[2])
local nd, nn = tonumber(ARGV[1]), tonumber(ARGV[2])
if d and (d > nd or (d == nd and n >= nn)) then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 0
end
redis.call('HSET', KEYS[1], 'depth', ARGV[1], 'nodes', ARGV[2], 'time', ARGV[3], 'data', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

func newRedis(cfg Config) (*redisStore, error) {
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = cfg.Timeout*5, cfg.Timeout, cfg.Timeout
	// A failed call is a miss: no retries, one dial attempt; the backoff
	// decides when Redis is asked again.
	opt.MaxRetries, opt.DialerRetries = -1, 1
	return &redisStore{cl: redis.NewClient(opt), prefix: cfg.RedisPrefix, timeout: cfg.Timeout, backoff: cfg.Backoff}, nil
}

func (r *redisStore) up() bool { return time.Now().UnixNano() >= r.downTil.Load() }

func (r *redisStore) fail(err error) error {
	r.downTil.Store(time.Now().Add(r.backoff).UnixNano())
	return err
}

func (r *redisStore) get(ctx context.Context, key string) (Entry, bool, error) {
	if !r.up() {
		return Entry{}, false, errDown
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := r.cl.HMGet(ctx, r.prefix+key, "depth", "nodes", "time", "data").Result()
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			return Entry{}, false, nil // the caller went away: not Redis's fault
		}
		return Entry{}, false, r.fail(err)
	}
	if len(v) != 4 || v[0] == nil || v[3] == nil {
		return Entry{}, false, nil
	}
	num := func(x any) int64 {
		s, _ := x.(string)
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	data, _ := v[3].(string)
	return Entry{Depth: int(num(v[0])), Nodes: num(v[1]), TimeMS: num(v[2]), Value: []byte(data)}, true, nil
}

func (r *redisStore) put(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	if !r.up() {
		return errDown
	}
	err := keepDeeper.Run(ctx, r.cl, []string{r.prefix + key}, e.Depth, e.Nodes, e.TimeMS, e.Value, ttl.Milliseconds()).Err()
	if err != nil {
		return r.fail(err)
	}
	return nil
}

func (r *redisStore) close() error { return r.cl.Close() }
