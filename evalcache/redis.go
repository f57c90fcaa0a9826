package evalcache

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisStore is the shared tier: one hash per key (depth, nodes, time, at:
// the search's end in unix milliseconds, data) with a TTL. go-redis is the
// Redis project's own Go client. Anyone who can write to the Redis can
// write anything there: the scripts below measure what is stored before
// reading it, and whatever they return is checked again in Go.
type redisStore struct {
	cl      *redis.Client
	prefix  string
	timeout time.Duration
	backoff time.Duration
	downTil atomic.Int64 // unix nanos until which Redis is not asked
}

// fetch returns a key's fields only if it is a hash whose numbers and data
// are within bounds (20 characters for a number, an int64; ARGV[1] for the
// data), measured on the server so
// that an oversized value is never sent; anything else reads as absent.
var fetch = redis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return false end
for _, f in ipairs({'depth', 'nodes', 'time', 'at'}) do
  if redis.call('HSTRLEN', KEYS[1], f) > 20 then return false end
end
if redis.call('HSTRLEN', KEYS[1], 'data') > tonumber(ARGV[1]) then return false end
return redis.call('HMGET', KEYS[1], 'depth', 'nodes', 'time', 'at', 'data')
`)

// keepDeeper writes the entry unless the stored one is sound and deeper
// (depth, then nodes), in one step on the server, so that concurrent
// writers from several instances keep the deepest. The TTL is set only
// with a write: offering a result again never renews the stored one.
// A stored entry that is not a hash, has numbers out of bounds, an
// oversized value, or a time too old or in the future is replaced.
// ARGV: depth, nodes, time, at, data, ttl ms, now ms, max depth, max value,
// clock skew ms.
var keepDeeper = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'hash' then
  local ok = true
  for _, f in ipairs({'depth', 'nodes', 'at'}) do
    if redis.call('HSTRLEN', KEYS[1], f) > 20 then ok = false end
  end
  if ok and redis.call('HSTRLEN', KEYS[1], 'data') <= tonumber(ARGV[9]) then
    local cur = redis.call('HMGET', KEYS[1], 'depth', 'nodes', 'at')
    local d, n, at = tonumber(cur[1]), tonumber(cur[2]), tonumber(cur[3])
    local nd, nn, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[7])
    if d and n and at and d >= 0 and d <= tonumber(ARGV[8]) and n >= 0 and
       at < now + tonumber(ARGV[10]) and now - at < tonumber(ARGV[6]) and
       (d > nd or (d == nd and n >= nn)) then
      return 0
    end
  end
end
if t ~= 'none' then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'depth', ARGV[1], 'nodes', ARGV[2], 'time', ARGV[3], 'at', ARGV[4], 'data', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`)

// dropIfSame deletes the key if it still holds the entry judged unsound
// (the same depth, nodes and time of search), not one written since.
var dropIfSame = redis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 0 end
local cur = redis.call('HMGET', KEYS[1], 'depth', 'nodes', 'at')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] and cur[3] == ARGV[3] then
  return redis.call('DEL', KEYS[1])
end
return 0
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

// get reads key's entry; found is false for an absent key and for one the
// fetch script refused (not a hash, fields over their bounds).
func (r *redisStore) get(ctx context.Context, key string, maxValue int) (Entry, bool, error) {
	if !r.up() {
		return Entry{}, false, errDown
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res, err := fetch.Run(ctx, r.cl, []string{r.prefix + key}, maxValue).Result()
	if err == redis.Nil {
		return Entry{}, false, nil
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			return Entry{}, false, nil // the caller went away: not Redis's fault
		}
		return Entry{}, false, r.fail(err)
	}
	v, _ := res.([]any)
	if len(v) != 5 || v[0] == nil || v[3] == nil || v[4] == nil {
		return Entry{}, false, nil
	}
	nums := [4]int64{}
	for i := range nums {
		s, _ := v[i].(string)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Entry{}, false, nil
		}
		nums[i] = n
	}
	data, _ := v[4].(string)
	if nums[0] > 1<<31 || len(data) > maxValue {
		return Entry{}, false, nil
	}
	return Entry{Depth: int(nums[0]), Nodes: nums[1], TimeMS: nums[2], At: time.UnixMilli(nums[3]), Value: []byte(data)}, true, nil
}

func (r *redisStore) put(ctx context.Context, key string, e Entry, cfg Config) error {
	if !r.up() {
		return errDown
	}
	err := keepDeeper.Run(ctx, r.cl, []string{r.prefix + key}, e.Depth, e.Nodes, e.TimeMS, e.At.UnixMilli(), e.Value,
		cfg.TTL.Milliseconds(), time.Now().UnixMilli(), cfg.MaxDepth, cfg.MaxValue, clockSkew.Milliseconds()).Err()
	if err != nil {
		return r.fail(err)
	}
	return nil
}

// reject deletes key if it still holds e.
func (r *redisStore) reject(ctx context.Context, key string, e Entry) error {
	if !r.up() {
		return errDown
	}
	err := dropIfSame.Run(ctx, r.cl, []string{r.prefix + key}, strconv.Itoa(e.Depth), strconv.FormatInt(e.Nodes, 10),
		strconv.FormatInt(e.At.UnixMilli(), 10)).Err()
	if err != nil {
		return r.fail(err)
	}
	return nil
}

func (r *redisStore) close() error { return r.cl.Close() }
