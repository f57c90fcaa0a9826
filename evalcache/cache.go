// Package evalcache keeps engine evaluations so that a position analysed
// once is not searched again: a bounded in-memory LRU, optionally mirrored
// to a file (bbolt) so that it survives restarts, and optionally backed by
// Redis, shared by every usid instance that points to it.
//
// Keys are opaque strings (the caller hashes the normalized position, the
// engine's identity and the settings that change its answer: see Key);
// values are an Entry: the depth, nodes and time the search reached, when
// it ended and the caller's encoded result. A key keeps the deepest entry
// seen (depth, then nodes): a shallower result never replaces a deeper one,
// in memory, in the file or in Redis (a server-side script compares them).
//
// No entry is taken on trust, wherever it comes from: one whose numbers are
// out of bounds (a negative or implausible depth, a value over MaxValue, a
// time in the future) or older than TTL is neither used nor kept, and any
// new result replaces it. An entry lives at most TTL after the search that
// made it, in every tier: writing a result no deeper than the stored one
// does not renew it, so a wrong entry cannot be kept alive. Redis values are
// measured on the server before they are read (a 30 MB value is never
// loaded). The caller judges each entry before using it (Get's judge) and
// may Reject it, which removes it from every tier.
//
// A file that bbolt cannot open or that fails its consistency check
// (random bytes, a truncated or zeroed file, a foreign database) is moved
// aside to FILE.broken and a new one is made: usid starts either way.
//
// The cache never fails its caller: a Redis outage or a broken file makes
// lookups miss and writes drop, counted in usid_evalcache_errors_total, and
// Redis is left alone for a while before it is tried again. Writes to the
// file and to Redis go through one writer goroutine with a bounded queue, so
// a search's answer never waits on them.
//
// # Concurrency and ownership
//
// A Cache is safe for concurrent use. Whoever calls New must call Close,
// which writes what is queued, stops the writer and closes the file and the
// Redis client.
package evalcache

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Entry is one cached result.
type Entry struct {
	Depth  int       // the depth the search reached (its first line's)
	Nodes  int64     // the nodes it searched
	TimeMS int64     // the time it took, as the engine reported
	At     time.Time // when the search ended (Put sets it when zero); kept to the millisecond
	Value  []byte
}

// Verdict is a caller's judgement of a cached entry (see Get).
type Verdict int

const (
	// Use: the entry answers the request.
	Use Verdict = iota
	// Short: a sound answer, but not enough for this request (too
	// shallow); another tier may hold a deeper one.
	Short
	// Reject: not a sound answer for its key (it fails the checks an
	// engine's answer must pass): it is removed from every tier.
	Reject
)

// Deeper reports whether e went further than o: a greater depth, or the
// same depth with more nodes.
func (e Entry) Deeper(o Entry) bool {
	return e.Depth > o.Depth || e.Depth == o.Depth && e.Nodes > o.Nodes
}

func (e Entry) size(key string) int64 { return int64(len(key) + len(e.Value) + 64) }

// Key hashes the parts that identify a result into a key.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:20])
}

// Config sets up a Cache. Zero fields take the defaults shown.
type Config struct {
	MaxEntries int   // entries kept in memory (100000)
	MaxBytes   int64 // bytes of keys and values kept in memory (64 MiB)
	// File, if set, mirrors the memory tier in a bbolt file, read back at
	// start.
	File string
	// RedisURL, if set, is the shared tier (redis://[:password@]host:port/db).
	RedisURL    string
	RedisPrefix string // key prefix in Redis ("usid:eval:")
	// TTL is an entry's lifetime from the search that made it, in every
	// tier (7 days); writes that keep the stored entry do not renew it.
	TTL time.Duration
	// MaxDepth is the deepest depth an entry may claim (255: beyond any
	// USI engine's MAX_PLY); MaxValue bounds a value's bytes (64 KiB).
	MaxDepth int
	MaxValue int
	// Timeout bounds one Redis call (100ms); after a failure Redis is left
	// alone for Backoff (5s).
	Timeout, Backoff time.Duration
	QueueSize        int // writes waiting for the writer (1024); more are dropped
	Logger           *slog.Logger
}

// Cache is the evaluation cache. Create it with New.
type Cache struct {
	cfg   Config
	log   *slog.Logger
	m     *metrics
	file  *fileStore
	redis *redisStore

	mu    sync.Mutex
	lru   *list.List // of *item, most recent first
	items map[string]*list.Element
	bytes int64

	writes chan write
	done   chan struct{}
	closed bool
}

type item struct {
	key string
	e   Entry
}

// write is one queued change to the file or Redis.
type write struct {
	key   string
	e     Entry
	del   bool // delete from the file (evicted from memory)
	redis bool
	file  bool
}

// WithDefaults returns cfg with the defaults New applies filled in (the
// values documented on Config's fields).
func (cfg Config) WithDefaults() Config {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 100000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 64 << 20
	}
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "usid:eval:"
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 7 * 24 * time.Hour
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = 255
	}
	if cfg.MaxValue <= 0 {
		cfg.MaxValue = 64 << 10
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 100 * time.Millisecond
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 5 * time.Second
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// New opens the cache: the file (read into memory; a broken one is moved
// aside and replaced) and the Redis client, if configured. A Redis that is
// down is not an error: it is retried later.
func New(cfg Config, reg prometheus.Registerer) (*Cache, error) {
	cfg = cfg.WithDefaults()
	c := &Cache{cfg: cfg, log: cfg.Logger, lru: list.New(), items: map[string]*list.Element{},
		writes: make(chan write, cfg.QueueSize), done: make(chan struct{})}
	c.m = newMetrics(reg, c)
	if cfg.File != "" {
		f, err := openFile(cfg.File, c.log)
		if err != nil {
			return nil, err
		}
		c.file = f
		n := 0
		now := time.Now()
		var stale []string
		f.each(cfg.MaxValue, func(key string, e Entry) bool {
			if !c.sound(e, now) {
				stale = append(stale, key)
				return true
			}
			c.mu.Lock()
			c.putLocked(key, e, false)
			full := len(c.items) >= cfg.MaxEntries || c.bytes >= cfg.MaxBytes
			c.mu.Unlock()
			n++
			return !full
		})
		if err := f.deleteAll(stale); err != nil {
			c.log.Warn("evaluation cache file: dropping stale entries failed", "err", err)
		}
		c.log.Info("evaluation cache file read", "file", cfg.File, "entries", n, "dropped", len(stale))
	}
	if cfg.RedisURL != "" {
		r, err := newRedis(cfg)
		if err != nil {
			if c.file != nil {
				c.file.close()
			}
			return nil, err
		}
		c.redis = r
	}
	go c.writer()
	return c, nil
}

// clockSkew is how far in the future an entry's time may be (another
// instance's clock may run ahead).
const clockSkew = time.Minute

// sound reports whether e's numbers are ones a real search gives and it is
// young enough to be used.
func (c *Cache) sound(e Entry, now time.Time) bool {
	return e.Depth >= 0 && e.Depth <= c.cfg.MaxDepth && e.Nodes >= 0 && e.TimeMS >= 0 && len(e.Value) <= c.cfg.MaxValue &&
		!e.At.IsZero() && e.At.Before(now.Add(clockSkew)) && now.Sub(e.At) < c.cfg.TTL
}

// errDown: Redis is not asked while it backs off after a failure.
var errDown = errors.New("evalcache: redis is backing off after a failure")

// Get returns the entry of key if judge says Use: the memory tier first,
// then Redis (whose entry then joins the memory tier). An entry judge
// Rejects is removed from every tier; one that is out of bounds or too old
// is never shown to judge. It never fails: an error is a miss.
func (c *Cache) Get(ctx context.Context, key string, judge func(Entry) Verdict) (Entry, bool) {
	now := time.Now()
	c.mu.Lock()
	if el, found := c.items[key]; found {
		it := el.Value.(*item)
		e := it.e
		if !c.sound(e, now) {
			c.removeLocked(el)
			c.mu.Unlock()
		} else {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			switch judge(e) {
			case Use:
				c.m.hits.WithLabelValues("memory").Inc()
				return e, true
			case Reject:
				c.reject(key, e, "memory")
			}
		}
	} else {
		c.mu.Unlock()
	}
	if c.redis != nil {
		e, found, err := c.redis.get(ctx, key, c.cfg.MaxValue)
		switch {
		case err != nil:
			c.failed("get", err)
		case !found:
		case !c.sound(e, now):
			c.m.rejected.WithLabelValues("redis").Inc()
		default:
			switch judge(e) {
			case Use:
				c.m.hits.WithLabelValues("redis").Inc()
				c.mu.Lock()
				c.putLocked(key, e, c.file != nil)
				c.mu.Unlock()
				return e, true
			case Reject:
				c.reject(key, e, "redis")
			}
		}
	}
	c.m.misses.Inc()
	return Entry{}, false
}

// reject removes e, found in tier and judged unsound, from every tier
// (from Redis only while it still holds that very entry).
func (c *Cache) reject(key string, e Entry, tier string) {
	c.m.rejected.WithLabelValues(tier).Inc()
	c.log.Warn("evaluation cache: an entry failed the checks of an engine's answer; removed", "tier", tier, "key", key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, found := c.items[key]; found && el.Value.(*item).e.At.Equal(e.At) {
		c.removeLocked(el)
	}
	if c.redis != nil {
		c.queue(write{key: key, e: e, del: true, redis: true})
	}
}

// Put offers an entry for key; it is kept where it is deeper than what the
// tier has, or where the tier's entry is out of bounds or too old. An entry
// out of bounds itself is dropped.
func (c *Cache) Put(ctx context.Context, key string, e Entry) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.At = e.At.Truncate(time.Millisecond) // as the file and Redis keep it
	if !c.sound(e, time.Now()) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, e, c.file != nil)
	if c.redis != nil {
		c.queue(write{key: key, e: e, redis: true})
	}
}

// putLocked keeps e in memory if deeper than what is there (or what is
// there is no longer sound), evicting the least recently used entries past
// the bounds; mirror queues the change for the file.
func (c *Cache) putLocked(key string, e Entry, mirror bool) {
	if el, found := c.items[key]; found {
		it := el.Value.(*item)
		c.lru.MoveToFront(el)
		if !e.Deeper(it.e) && c.sound(it.e, time.Now()) {
			return
		}
		c.bytes += e.size(key) - it.e.size(key)
		it.e = e
	} else {
		if e.size(key) > c.cfg.MaxBytes {
			return
		}
		c.items[key] = c.lru.PushFront(&item{key, e})
		c.bytes += e.size(key)
	}
	if mirror {
		c.queue(write{key: key, e: e, file: true})
	}
	for len(c.items) > c.cfg.MaxEntries || c.bytes > c.cfg.MaxBytes {
		c.removeLocked(c.lru.Back())
		c.m.evictions.Inc()
	}
}

// removeLocked drops an entry from memory and from the file.
func (c *Cache) removeLocked(el *list.Element) {
	it := el.Value.(*item)
	c.lru.Remove(el)
	delete(c.items, it.key)
	c.bytes -= it.e.size(it.key)
	if c.file != nil {
		c.queue(write{key: it.key, del: true, file: true})
	}
}

// queue hands a write to the writer, dropping it when the queue is full
// (the cache is an optimisation: nothing waits for it). c.mu is held, so
// that Close cannot close the queue meanwhile.
func (c *Cache) queue(w write) {
	if c.closed {
		return
	}
	select {
	case c.writes <- w:
	default:
		c.m.dropped.Inc()
	}
}

// writer applies queued writes in order until Close.
func (c *Cache) writer() {
	defer close(c.done)
	for w := range c.writes {
		if w.file {
			var err error
			if w.del {
				err = c.file.delete(w.key)
			} else {
				err = c.file.put(w.key, w.e)
			}
			if err != nil {
				c.m.errors.WithLabelValues("file").Inc()
				c.log.Warn("evaluation cache file write failed", "err", err)
			}
		}
		if w.redis {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
			var err error
			if w.del {
				err = c.redis.reject(ctx, w.key, w.e)
			} else {
				err = c.redis.put(ctx, w.key, w.e, c.cfg)
			}
			if err != nil {
				c.failed("put", err)
			}
			cancel()
		}
	}
}

func (c *Cache) failed(op string, err error) {
	if errors.Is(err, errDown) {
		return // counted when it went down
	}
	c.m.errors.WithLabelValues("redis").Inc()
	c.log.Warn("evaluation cache: redis failed; searching without it for a while", "op", op, "err", err, "backoff", c.cfg.Backoff)
}

// Len returns the entries in memory.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Close writes what is queued and closes the file and the Redis client.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.writes)
	c.mu.Unlock()
	<-c.done
	var errs []error
	if c.file != nil {
		errs = append(errs, c.file.close())
	}
	if c.redis != nil {
		errs = append(errs, c.redis.close())
	}
	return errors.Join(errs...)
}

// Describe names the tiers, for logs.
func (c *Cache) Describe() string {
	tiers := []string{fmt.Sprintf("memory (%d entries, %d MiB)", c.cfg.MaxEntries, c.cfg.MaxBytes>>20)}
	if c.file != nil {
		tiers = append(tiers, "file "+c.cfg.File)
	}
	if c.redis != nil {
		tiers = append(tiers, "redis")
	}
	return strings.Join(tiers, " + ")
}
