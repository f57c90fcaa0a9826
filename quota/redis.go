package quota

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// RedisConfig sets up a Redis store. Zero fields take the defaults shown.
type RedisConfig struct {
	URL    string // redis://[:password@]host:port/db; required
	Prefix string // key prefix ("usid:quota:")
	// Timeout bounds one call (100ms); after a failure Redis is left alone
	// for Backoff (5s) and balances are kept in memory meanwhile.
	Timeout, Backoff time.Duration
	// MaxClients bounds the memory fallback (as MemoryConfig.MaxClients).
	MaxClients int
	Logger     *slog.Logger          // nil discards
	Registerer prometheus.Registerer // usid_quota_errors_total; nil: not registered
}

// Redis keeps balances in Redis, shared by every process using the same
// server and prefix: one hash per client (t: tokens, s and us: Redis's
// TIME when they were counted), expiring when the bucket would be full.
type Redis struct {
	cl       *redis.Client
	prefix   string
	timeout  time.Duration
	backoff  time.Duration
	log      *slog.Logger
	errors   prometheus.Counter
	downTil  atomic.Int64 // unix nanos until which Redis is not asked
	fallback *Memory
}

// bucketScript brings a client's bucket up to date with Redis's clock and
// charges it, in one step, so that concurrent pods charge one balance. A
// take (ARGV[4] = 1) charges only a balance above zero and at or above
// ARGV[5] (a background take's level; 0 otherwise); with ARGV[6] = 1 it
// charges at most the balance (TakeUpTo). It returns whether it charged
// (1 or 0), the balance after and what it charged, as strings (Lua numbers
// would be truncated to integers on the way out).
//
// A bucket read back is checked as a client's input would be (anyone able
// to write to the Redis can store anything there): fields of more than 32
// bytes are not read, and a balance that no charge leaves (NaN, below
// minBalance) or a count in the future by Redis's own clock (more than a
// minute: a clock stepped back) reads as no bucket, a full one, as a key
// that expired would.
//
// KEYS[1]: the bucket. ARGV: rate (engine-seconds per second), capacity,
// charge (engine-seconds; negative gives back), take, level, up to, minBalance.
var bucketScript = redis.NewScript(`
local now = redis.call('TIME')
local rate, cap, charge, take, level, upto = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5]) or 0, ARGV[6] == '1'
local t, s, us
if redis.call('HSTRLEN', KEYS[1], 't') <= 32 and redis.call('HSTRLEN', KEYS[1], 's') <= 32 and redis.call('HSTRLEN', KEYS[1], 'us') <= 32 then
  local v = redis.call('HMGET', KEYS[1], 't', 's', 'us')
  t, s, us = tonumber(v[1]), tonumber(v[2]), tonumber(v[3])
end
if t == nil or s == nil or us == nil or t ~= t or t < tonumber(ARGV[7]) or
   us < 0 or us >= 1e6 or s < 0 or s > tonumber(now[1]) + 60 then
  t = cap
else
  local dt = (tonumber(now[1]) - s) + (tonumber(now[2]) - us) / 1e6
  if dt > 0 then t = t + dt * rate end
  if t > cap then t = cap end
end
if take and (t <= 0 or t < level) then
  return {0, string.format('%.17g', t), '0'}
end
if take and upto and charge > t then
  charge = math.floor(t * 1e6) / 1e6
end
if charge ~= 0 then
  t = t - charge
  if t > cap then t = cap end
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', t), 's', now[1], 'us', now[2])
  redis.call('PEXPIRE', KEYS[1], math.ceil((cap - t) / rate * 1000) + 1000)
end
return {1, string.format('%.17g', t), string.format('%.17g', charge)}
`)

// minBalance is the lowest balance a bucket read back may hold, in
// engine-seconds: a search that held an engine for a day, charged to an
// empty bucket. Below it, the bucket is no bucket usid wrote.
const minBalance = -86400

// WithDefaults returns c with its zero fields set to the defaults.
func (c RedisConfig) WithDefaults() RedisConfig {
	if c.Prefix == "" {
		c.Prefix = "usid:quota:"
	}
	if c.Timeout <= 0 {
		c.Timeout = 100 * time.Millisecond
	}
	if c.Backoff <= 0 {
		c.Backoff = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// NewRedis returns a Redis store; it does not connect until first used.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if cfg.URL == "" {
		return nil, errors.New("quota: redis url is required")
	}
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = cfg.Timeout*5, cfg.Timeout, cfg.Timeout
	// A failed call falls back to memory: no retries, one dial attempt; the
	// backoff decides when Redis is asked again.
	opt.MaxRetries, opt.DialerRetries = -1, 1
	r := &Redis{
		cl: redis.NewClient(opt), prefix: cfg.Prefix, timeout: cfg.Timeout, backoff: cfg.Backoff, log: cfg.Logger,
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "usid_quota_errors_total", Help: "Failed calls to the quota's Redis; balances were kept in memory instead.",
		}),
		fallback: NewMemory(MemoryConfig{MaxClients: cfg.MaxClients}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(r.errors)
	}
	return r, nil
}

// Close closes the Redis client.
func (r *Redis) Close() error { return r.cl.Close() }

func (r *Redis) up() bool { return time.Now().UnixNano() >= r.downTil.Load() }

// run runs the script; ok is false when Redis failed (and the caller falls
// back to memory), taken whether it charged.
func (r *Redis) run(ctx context.Context, client string, b Budget, charge float64, take bool, level float64) (tokens float64, taken, ok bool) {
	tokens, _, taken, ok = r.runUpTo(ctx, client, b, charge, take, level, false)
	return tokens, taken, ok
}

// runUpTo is run; with upTo a take charges at most the balance, and
// charged is what it charged.
func (r *Redis) runUpTo(ctx context.Context, client string, b Budget, charge float64, take bool, level float64, upTo bool) (tokens, charged float64, taken, ok bool) {
	if !r.up() {
		return 0, 0, false, false
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	flag := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	res, err := bucketScript.Run(cctx, r.cl, []string{r.prefix + client},
		strconv.FormatFloat(b.rate(), 'g', -1, 64), strconv.FormatFloat(b.capacity(), 'g', -1, 64),
		strconv.FormatFloat(charge, 'g', -1, 64), flag(take), strconv.FormatFloat(level, 'g', -1, 64), flag(upTo), minBalance).Slice()
	if err == nil {
		err = errors.New("quota: unexpected answer from the script")
		if len(res) == 3 {
			f, _ := res[0].(int64)
			s1, ok1 := res[1].(string)
			s2, ok2 := res[2].(string)
			if ok1 && ok2 {
				var err2 error
				tokens, err = strconv.ParseFloat(s1, 64)
				charged, err2 = strconv.ParseFloat(s2, 64)
				err = errors.Join(err, err2)
				taken = f == 1
				if err == nil && (math.IsNaN(tokens) || math.IsInf(tokens, 0) || math.IsNaN(charged) || math.IsInf(charged, 0)) {
					err = errors.New("quota: a balance out of bounds from the script")
				}
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, false, false // the caller went away: not Redis's fault
		}
		r.errors.Inc()
		if r.up() {
			r.log.Warn("quota: redis failed; keeping engine-time balances in this process for a while", "err", err, "retry_in", r.backoff)
		}
		r.downTil.Store(time.Now().Add(r.backoff).UnixNano())
		return 0, 0, false, false
	}
	return tokens, charged, taken, true
}

// Allow implements Store.
func (r *Redis) Allow(ctx context.Context, client string, b Budget) time.Duration {
	if b.Unlimited() {
		return 0
	}
	t, _, ok := r.run(ctx, client, b, 0, false, 0)
	if !ok {
		if ctx.Err() != nil {
			return 0
		}
		return r.fallback.Allow(ctx, client, b)
	}
	return retryAfter(t, b)
}

// Take implements Store.
func (r *Redis) Take(ctx context.Context, client string, b Budget, d time.Duration) time.Duration {
	return r.take(ctx, client, b, d, 0)
}

// TakeBackground implements Store.
func (r *Redis) TakeBackground(ctx context.Context, client string, b Budget, d time.Duration) time.Duration {
	return r.take(ctx, client, b, d, b.backgroundLevel(d))
}

func (r *Redis) take(ctx context.Context, client string, b Budget, d time.Duration, level float64) time.Duration {
	_, w := r.takeUpTo(ctx, client, b, d, level, false)
	return w
}

// TakeUpTo implements Store.
func (r *Redis) TakeUpTo(ctx context.Context, client string, b Budget, d time.Duration, background bool) (granted, retryAfter time.Duration) {
	return r.takeUpTo(ctx, client, b, d, upToLevel(b, d, background), true)
}

func (r *Redis) takeUpTo(ctx context.Context, client string, b Budget, d time.Duration, level float64, upTo bool) (granted, retryAfter time.Duration) {
	if b.Unlimited() {
		return d, 0
	}
	t, charged, taken, ok := r.runUpTo(ctx, client, b, d.Seconds(), true, level, upTo)
	if !ok {
		if ctx.Err() != nil {
			return d, 0
		}
		return r.fallback.take(client, b, d, level, upTo)
	}
	if taken {
		if upTo {
			return min(d, secondsDuration(charged)), 0
		}
		return d, 0
	}
	return 0, retryAbove(t, level, b)
}

// Charge implements Store.
func (r *Redis) Charge(ctx context.Context, client string, b Budget, held time.Duration) {
	if b.Unlimited() || held == 0 {
		return
	}
	if _, _, ok := r.run(ctx, client, b, held.Seconds(), false, 0); !ok {
		r.fallback.Charge(ctx, client, b, held)
	}
}
