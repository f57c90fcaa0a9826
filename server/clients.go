package server

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// client is one identity's running totals: an API key, a client address,
// or (entries "addr:") the sessions of one address over all identities.
type client struct {
	id       string // "key:<name>", "ip:<addr>" or "addr:<addr>"
	quota    Quota
	limiter  *rate.Limiter // search requests
	messages *rate.Limiter // every WebSocket message
	reads    *rate.Limiter // GET requests of /v1 (readGuard)
	lastSeen atomic.Int64  // Unix nanoseconds

	mu       sync.Mutex
	sessions int
	leases   int

	// The shard's list, most recently active first; guarded by the shard's
	// lock. An overflow entry is on no list.
	prev, next *client
}

// busy reports whether c holds a session or a lease: such an entry is
// never dropped (its counts would be lost).
func (c *client) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions > 0 || c.leases > 0
}

// table holds the clients in shards, each with its own lock, its own list
// by recent activity and its own sweep of idle entries, so that no request
// waits behind work on the whole table. The shard is chosen by a hash with
// a random seed: nobody can aim their addresses at one shard.
//
// The number of entries is bounded by max. Past it, a new identity takes
// the place of the least recently active entry that holds no session and
// no lease (its own shard's first, then the other shards'): newcomers keep
// their own identity and quota, however many addresses someone keeps
// alive. An entry dropped that way comes back as new (a fresh request
// rate; its engine-time balance and its game jobs are kept elsewhere, by
// id). Only when every entry holds a session or a lease does get return
// the spill entry the caller names (one for identities, another for
// address entries, so that a session never counts twice on one object).
type table struct {
	seed   maphash.Seed
	shards [64]shard
	n      atomic.Int64
	max    int64
}

type shard struct {
	mu         sync.Mutex
	m          map[string]*client
	head, tail *client // most and least recently active
	sweep      time.Time
}

// idleAfter is how long an entry without sessions or leases is kept.
const idleAfter = 10 * time.Minute

// evictScan bounds how many of a shard's least recently active entries are
// looked at for one that is not busy.
const evictScan = 16

func (t *table) shardOf(id string) *shard {
	return &t.shards[maphash.String(t.seed, id)%uint64(len(t.shards))]
}

// get returns id's entry, made by mk if new; spill when the table is full
// of busy entries.
func (t *table) get(id string, mk func() *client, spill *client) *client {
	sh := t.shardOf(id)
	now := time.Now()
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[string]*client{}
	}
	if now.Sub(sh.sweep) >= time.Minute {
		// One shard, a 64th of the table, under its own lock.
		sh.sweep = now
		for c := sh.tail; c != nil; {
			prev := c.prev
			if now.UnixNano()-c.lastSeen.Load() > int64(idleAfter) && !c.busy() {
				sh.removeLocked(c)
				t.n.Add(-1)
			}
			c = prev
		}
	}
	c := sh.m[id]
	if c == nil && t.n.Load() >= t.max && !sh.evictLocked(t) {
		// Room elsewhere: one shard's lock at a time, never two.
		sh.mu.Unlock()
		made := t.evictOther(sh)
		sh.mu.Lock()
		if c = sh.m[id]; c == nil && !made {
			sh.mu.Unlock()
			spill.lastSeen.Store(now.UnixNano())
			return spill
		}
	}
	if c == nil {
		c = mk()
		sh.m[id] = c
		t.n.Add(1)
	} else {
		sh.unlinkLocked(c)
	}
	sh.pushLocked(c)
	c.lastSeen.Store(now.UnixNano())
	sh.mu.Unlock()
	return c
}

// evictLocked drops the least recently active entry of sh that is not
// busy, looking at evictScan entries at most; it reports whether it did.
func (sh *shard) evictLocked(t *table) bool {
	k := 0
	for c := sh.tail; c != nil && k < evictScan; c, k = c.prev, k+1 {
		if !c.busy() {
			sh.removeLocked(c)
			t.n.Add(-1)
			return true
		}
	}
	return false
}

// evictOther drops an entry from a shard other than own.
func (t *table) evictOther(own *shard) bool {
	start := 0
	for i := range t.shards {
		if &t.shards[i] == own {
			start = i
		}
	}
	for i := 1; i < len(t.shards); i++ {
		sh := &t.shards[(start+i)%len(t.shards)]
		sh.mu.Lock()
		ok := sh.evictLocked(t)
		sh.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

func (sh *shard) pushLocked(c *client) {
	c.prev, c.next = nil, sh.head
	if sh.head != nil {
		sh.head.prev = c
	}
	sh.head = c
	if sh.tail == nil {
		sh.tail = c
	}
}

func (sh *shard) unlinkLocked(c *client) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		sh.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		sh.tail = c.prev
	}
	c.prev, c.next = nil, nil
}

func (sh *shard) removeLocked(c *client) {
	sh.unlinkLocked(c)
	delete(sh.m, c.id)
}
