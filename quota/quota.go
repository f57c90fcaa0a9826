// Package quota keeps engine-time budgets per client: a token bucket whose
// tokens are engine-seconds. A search may start only while its client's
// balance is above zero, and it takes what it may spend when it starts, in
// one step with that check (Take): so of several searches queued on one
// positive balance only those that still find it above zero start. A
// search that may be cut takes at most the balance (TakeUpTo), so that it
// is charged no more than what is left. When
// the search ends, its real engine time is settled (Charge): time taken
// and not used comes back, time used beyond what was taken is debited. The
// balance may thus go below zero by what searches that started held; the
// debt is paid back by the refill, and until it is the client is refused,
// with the time until its balance is positive again as the retry-after. So
// a 10 ms search costs a hundredth of a 1 s one, a client that searches one
// position after another is never refused for being sequential, and a
// client's long searches are bounded by its budget, not by a count of
// requests.
//
// Interactive searches (a player's live analysis, REST and WebSocket) keep
// a share of the bucket that background work (game analysis jobs) cannot
// spend: a background search starts only if what it takes leaves the
// balance at or above InteractiveShare of the capacity (TakeBackground),
// so a job that has spent its part pauses while its owner can still
// analyse. Refills go to both alike; only the start differs.
//
// A Budget is Seconds of engine time per Period, with up to Burst seconds
// saved: the bucket holds at most Burst and refills at Seconds/Period per
// second of wall time. A client not seen before starts full.
//
// Two stores keep the balances: Memory, in this process, bounded in the
// number of clients; and Redis, shared by every usid process that points at
// the same server, so that N pods enforce one budget per client. Redis
// computes the balance in one script with its own clock (TIME), so the pods'
// clocks do not matter, and each key expires when its bucket would be full
// again, so idle clients leave nothing behind.
//
// Failure policy: a quota never fails its caller. While Redis does not
// answer (an error or a call slower than the timeout), the Redis store
// counts the error (usid_quota_errors_total), logs a warning when Redis goes
// away (not at every call), leaves Redis alone for Backoff, and meanwhile
// keeps balances in memory: each pod then enforces the budget on its own
// (a client may get up to N budgets across N pods, but not an unlimited
// amount). What was charged in memory is not carried to Redis afterwards.
//
// # Concurrency and ownership
//
// Memory and Redis are safe for concurrent use. Whoever calls NewRedis must
// call Close. The package imports nothing of usid.
package quota

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Budget is a client's engine time: Seconds per Period, at most Burst saved.
type Budget struct {
	// Seconds of engine time refilled per Period; 0 means no limit.
	Seconds float64 `yaml:"seconds" json:"seconds"`
	// Period over which Seconds refill; default one minute.
	Period time.Duration `yaml:"period" json:"period"`
	// Burst is the most a client can save and spend at once, in
	// engine-seconds; default Seconds (one period's worth).
	Burst float64 `yaml:"burst" json:"burst"`
	// InteractiveShare is the share of the bucket (0 to 1) that only
	// interactive searches may spend: background work starts a search only
	// while the balance stays at or above InteractiveShare×capacity after
	// its take. 0 means DefaultInteractiveShare; negative, none (background
	// work then takes as interactive searches do).
	InteractiveShare float64 `yaml:"interactive_share" json:"interactive_share"`
}

// DefaultInteractiveShare is the share of a bucket kept for interactive
// searches when a Budget sets none: a quarter, so that a client whose game
// analysis has run as far as it may still has a quarter of its saved time
// (the anonymous default: 30 of 120 engine-seconds) for live analysis.
const DefaultInteractiveShare = 0.25

// Check reports what is wrong with b, if anything.
func (b Budget) Check() error {
	var errs []error
	if b.Seconds < 0 || math.IsNaN(b.Seconds) || math.IsInf(b.Seconds, 0) {
		errs = append(errs, fmt.Errorf("seconds %v: want 0 (no limit) or more", b.Seconds))
	}
	if b.Period < 0 {
		errs = append(errs, fmt.Errorf("period %v: want a positive duration", b.Period))
	}
	if b.Burst < 0 || math.IsNaN(b.Burst) || math.IsInf(b.Burst, 0) {
		errs = append(errs, fmt.Errorf("burst %v: want 0 (as seconds) or more", b.Burst))
	}
	return errors.Join(errs...)
}

// CheckShare reports what is wrong with b's InteractiveShare, if anything
// (Share clamps it; a configuration should say it is wrong).
func (b Budget) CheckShare() error {
	if s := b.InteractiveShare; s > 1 || math.IsNaN(s) || math.IsInf(s, 0) {
		return fmt.Errorf("interactive_share %v: want 0 (the default, %v) to 1, or negative for none", s, DefaultInteractiveShare)
	}
	return nil
}

// Unlimited reports whether b sets no limit.
func (b Budget) Unlimited() bool { return !(b.Seconds > 0) || b.Check() != nil }

// rate is the refill in engine-seconds per second, and capacity the most
// the bucket holds.
func (b Budget) rate() float64 {
	p := b.Period
	if p <= 0 {
		p = time.Minute
	}
	return b.Seconds / p.Seconds()
}

func (b Budget) capacity() float64 {
	if b.Burst > 0 {
		return b.Burst
	}
	return b.Seconds
}

// Share returns the share of the bucket kept for interactive searches,
// defaults applied (0 to 1).
func (b Budget) Share() float64 {
	switch s := b.InteractiveShare; {
	case s == 0:
		return DefaultInteractiveShare
	case s < 0 || math.IsNaN(s):
		return 0
	default:
		return min(s, 1)
	}
}

// Reserve returns the engine-seconds kept for interactive searches: the
// balance below which background work starts no search.
func (b Budget) Reserve() float64 { return b.Share() * b.capacity() }

// backgroundLevel is the balance a background search taking d needs: its
// take must leave the reserve untouched; a search longer than the rest of
// the bucket needs a full one. Without a reserve it is Take's (above zero).
func (b Budget) backgroundLevel(d time.Duration) float64 {
	r := b.Reserve()
	if r <= 0 {
		return 0
	}
	return min(r+d.Seconds(), b.capacity())
}

// Store keeps the balances of clients.
type Store interface {
	// Allow returns 0 when client may start a search (its balance is above
	// zero), else how long until it may.
	Allow(ctx context.Context, client string, b Budget) (retryAfter time.Duration)
	// Take reserves d of engine time for a search about to start, in one
	// step with the check: when the balance is above zero it is debited d
	// and Take returns 0; otherwise nothing is debited and Take returns how
	// long until the balance is above zero. So concurrent searches of one
	// client cannot all start on one positive balance. d may be 0 (a check).
	Take(ctx context.Context, client string, b Budget, d time.Duration) (retryAfter time.Duration)
	// TakeBackground is Take for background work: it reserves d only when
	// the balance stays at or above b.Reserve() after it (a d longer than
	// the rest of the bucket: when the bucket is full), else it returns how
	// long until it would.
	TakeBackground(ctx context.Context, client string, b Budget, d time.Duration) (retryAfter time.Duration)
	// TakeUpTo is Take for a search whose limit is cut to what is left:
	// when the balance is at least MinGrant it debits d, or the balance
	// when that is less, and returns what it debited (granted); otherwise
	// it debits nothing and returns the wait. So a search that starts on
	// a balance smaller than its limit is charged no more than the
	// balance (issue 35). background: it needs what TakeBackground needs.
	TakeUpTo(ctx context.Context, client string, b Budget, d time.Duration, background bool) (granted, retryAfter time.Duration)
	// Charge debits held more engine time (a search that ran past what it
	// had taken), or, negative, gives back time taken and not used (never
	// above the budget's capacity). Call it with a context that outlives
	// the request (context.WithoutCancel): the time was spent whether or
	// not the client is still there.
	Charge(ctx context.Context, client string, b Budget, held time.Duration)
}

// retryAfter is how long until a balance of tokens (at or below zero) is
// above zero, rounded up to the next millisecond.
func retryAfter(tokens float64, b Budget) time.Duration {
	if tokens > 0 {
		return 0
	}
	return wait(-tokens, b)
}

// retryAbove is how long until a balance of tokens is above zero and at
// or above level.
func retryAbove(tokens, level float64, b Budget) time.Duration {
	if tokens > 0 && tokens >= level {
		return 0
	}
	return wait(max(level, 0)-tokens, b)
}

// wait is how long the refill takes to add short engine-seconds, rounded
// up to the next millisecond.
func wait(short float64, b Budget) time.Duration {
	d := time.Duration(math.Ceil(short/b.rate()*1e3)+1) * time.Millisecond
	if d <= 0 || d > 100*365*24*time.Hour { // an absurd charge: cap, never overflow
		d = 100 * 365 * 24 * time.Hour
	}
	return d
}

// bucket is one client's balance: tokens at time at.
type bucket struct {
	tokens float64
	at     time.Time
	b      Budget // the budget it was last used with, to tell when it is full
}

// balance is the bucket's tokens at now under budget b.
func (k *bucket) balance(now time.Time, b Budget) float64 {
	t := k.tokens
	if dt := now.Sub(k.at).Seconds(); dt > 0 {
		t += dt * b.rate()
	}
	return min(t, b.capacity())
}

// MemoryConfig sets up a Memory store. Zero fields take the defaults shown.
type MemoryConfig struct {
	// MaxClients bounds the clients with a balance below full (100000).
	// Past it, new clients share one bucket until some refill.
	MaxClients int
	Now        func() time.Time      // the clock (time.Now); tests set it
	Registerer prometheus.Registerer // usid_quota_clients; nil: not registered
}

// Memory keeps balances in this process: a table in shards, each with its
// own lock, holding only clients whose bucket is below full (a full bucket
// is the same as none, so it is dropped).
type Memory struct {
	now      func() time.Time
	max      int64
	n        atomic.Int64
	seed     maphash.Seed
	shards   [64]memShard
	overflow struct {
		sync.Mutex
		bucket
	}
}

type memShard struct {
	mu    sync.Mutex
	m     map[string]*bucket
	sweep time.Time
}

// sweepEvery is how often a shard drops the buckets that refilled.
const sweepEvery = 10 * time.Second

// NewMemory returns an empty Memory store.
func NewMemory(cfg MemoryConfig) *Memory {
	m := &Memory{now: cfg.Now, max: int64(cfg.MaxClients), seed: maphash.MakeSeed()}
	if m.now == nil {
		m.now = time.Now
	}
	if m.max <= 0 {
		m.max = 100000
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "usid_quota_clients", Help: "Clients whose engine-time balance is below full (in memory).",
		}, func() float64 { return float64(m.Len()) }))
	}
	return m
}

// Len returns how many clients have a balance below full.
func (m *Memory) Len() int { return int(m.n.Load()) }

func (m *Memory) shard(client string) *memShard {
	return &m.shards[maphash.String(m.seed, client)%uint64(len(m.shards))]
}

// Allow implements Store.
func (m *Memory) Allow(_ context.Context, client string, b Budget) time.Duration {
	if b.Unlimited() {
		return 0
	}
	now := m.now()
	sh := m.shard(client)
	sh.mu.Lock()
	k := sh.m[client]
	if k != nil {
		t := k.balance(now, b)
		sh.mu.Unlock()
		return retryAfter(t, b)
	}
	sh.mu.Unlock()
	if m.n.Load() >= m.max {
		// It may have been charged to the shared bucket.
		m.overflow.Lock()
		defer m.overflow.Unlock()
		if m.overflow.at.IsZero() {
			return 0
		}
		return retryAfter(m.overflow.balance(now, b), b)
	}
	return 0
}

// Charge implements Store.
func (m *Memory) Charge(_ context.Context, client string, b Budget, held time.Duration) {
	if b.Unlimited() || held == 0 {
		return
	}
	m.update(client, b, held < 0, func(t float64) (float64, bool) { return t - held.Seconds(), true })
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, client string, b Budget, d time.Duration) time.Duration {
	_, w := m.take(client, b, d, 0, false)
	return w
}

// TakeBackground implements Store.
func (m *Memory) TakeBackground(_ context.Context, client string, b Budget, d time.Duration) time.Duration {
	_, w := m.take(client, b, d, b.backgroundLevel(d), false)
	return w
}

// TakeUpTo implements Store.
func (m *Memory) TakeUpTo(_ context.Context, client string, b Budget, d time.Duration, background bool) (granted, retryAfter time.Duration) {
	return m.take(client, b, d, upToLevel(b, d, background), true)
}

// MinGrant is the least TakeUpTo grants: a balance below it counts as
// spent (a search of a few microseconds is no search; the refill would
// otherwise grant crumbs to each of a burst of requests).
const MinGrant = time.Millisecond

// upToLevel is the balance a TakeUpTo needs: at least MinGrant, and for
// background work as much as TakeBackground's (with a share kept for
// interactive searches that is the share and the whole of d, so that a
// background search is cut only where d is longer than the bucket).
func upToLevel(b Budget, d time.Duration, background bool) float64 {
	level := MinGrant.Seconds()
	if background {
		level = max(level, b.backgroundLevel(d))
	}
	return level
}

// take debits d when the balance is above zero and at or above level
// (upTo: at most the balance), and returns what it debited.
func (m *Memory) take(client string, b Budget, d time.Duration, level float64, upTo bool) (granted, retryAfter time.Duration) {
	if b.Unlimited() {
		return d, 0
	}
	var w time.Duration
	m.update(client, b, d <= 0, func(t float64) (float64, bool) {
		if w = retryAbove(t, level, b); w > 0 {
			return t, false
		}
		granted = d
		if upTo {
			granted = min(d, secondsDuration(t))
		}
		return t - granted.Seconds(), true
	})
	return granted, w
}

// secondsDuration is t engine-seconds as a Duration, rounded down to the
// microsecond (so that it never exceeds t), capped to stay finite.
func secondsDuration(t float64) time.Duration {
	if t >= 1e9 {
		return time.Duration(1e9) * time.Second
	}
	return time.Duration(math.Floor(t*1e6)) * time.Microsecond
}

// update brings client's balance up to date and sets it to f's answer
// (capped at the capacity) when f says so. A client without a bucket is
// full; readOnly says f cannot take it below full, so that no bucket is
// made for it.
func (m *Memory) update(client string, b Budget, readOnly bool, f func(tokens float64) (float64, bool)) {
	now := m.now()
	sh := m.shard(client)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = map[string]*bucket{}
	}
	k := sh.m[client]
	if k == nil && (now.Sub(sh.sweep) >= sweepEvery || m.n.Load() >= m.max && now.Sub(sh.sweep) >= time.Second) {
		sh.sweep = now
		for id, x := range sh.m {
			if x.balance(now, x.b) >= x.b.capacity() {
				delete(sh.m, id)
				m.n.Add(-1)
			}
		}
	}
	if k == nil {
		if m.n.Load() >= m.max {
			m.overflow.Lock()
			defer m.overflow.Unlock()
			o := &m.overflow.bucket
			if o.at.IsZero() {
				o.tokens, o.at = b.capacity(), now
			}
			if t, ok := f(o.balance(now, b)); ok {
				o.tokens, o.at, o.b = min(t, b.capacity()), now, b
			}
			return
		}
		if readOnly {
			f(b.capacity())
			return
		}
		k = &bucket{tokens: b.capacity(), at: now}
		sh.m[client] = k
		m.n.Add(1)
	}
	if t, ok := f(k.balance(now, b)); ok {
		k.tokens, k.at, k.b = min(t, b.capacity()), now, b
	}
}
