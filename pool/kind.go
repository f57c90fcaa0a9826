// The state of one engine kind - its warm processes, its waiting line, its
// cooldown.

package pool

import (
	"log/slog"
	"sync"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// grant is what a waiter receives: an engine, or why there will be none.
type grant struct {
	lease *Lease
	err   error
}

type waiter struct {
	ch     chan grant // capacity 1: the grant never blocks the pool
	pos    chan int   // capacity 1: the latest queue position
	client string
	class  Class
	seq    uint64 // arrival order, set by queue.push
	told   int    // the position last sent on pos
	start  time.Time
}

// kind is the state of one configured engine kind. mu guards everything
// below it; slots, leases and Acquire all go through it.
type kind struct {
	p   *Pool
	cfg EngineConfig
	log *slog.Logger

	mu        sync.Mutex
	idle      []*instance // warm and free; the most recently used last
	q         queue       // callers waiting for an engine
	counts    map[string]int
	failures  []time.Time // recent failures, within FailureWindow
	streak    int         // failures in a row of engines younger than FailureWindow
	downUntil time.Time   // unavailable until then
	closed    bool
	leasesOut int           // leases not yet released
	leasesGo  chan struct{} // closed when leasesOut drops to 0 while closed
	id        usi.ID        // from the latest engine that started
	startTook time.Duration // how long the latest engine took to start (process to ready)
	options   []usi.Option
	// wanted is closed while someone waits (so no engine is idle), for
	// lease holders to notice without a goroutine; a fresh one replaces it
	// when the queue empties.
	wanted       chan struct{}
	wantedClosed bool
	// urgent is the same for Interactive waiters alone: what a Background
	// holder watches to give way during a search (Lease.Urgent).
	urgent       chan struct{}
	urgentClosed bool
	// profile is what usid knows of the engine: nil until discovered
	// (loaded or probed), which happens before any slot starts; then fixed.
	profile    *probe.Profile
	probed     *probe.Profile // profile before the configured overrides: what the cache holds
	profileKey string
	dialect    *usi.Dialect // what its engines speak; set before the probe (nil: USI)
	spare      *usi.Engine  // the probe's engine, until the first slot takes it (spare.go)
	lastErr    string       // why the engine last failed to start, in its own words too
	// discovered is closed when the first discovery has ended: the profile
	// is known, or the engine could not be started to learn it.
	discovered     chan struct{}
	discoveredDone bool
	// settled: the kind has had a warm engine, or been marked down, since
	// the pool started; readiness waits for every kind to settle once.
	settled bool
}

func newKind(p *Pool, cfg EngineConfig) *kind {
	k := &kind{p: p, cfg: cfg, log: p.log.With("engine", cfg.Name), counts: make(map[string]int), wanted: make(chan struct{}), urgent: make(chan struct{}), discovered: make(chan struct{})}
	k.q.init()
	return k
}

// instance is one engine process and its bookkeeping; state is guarded by kind.mu.
type instance struct {
	eng    *usi.Engine
	born   time.Time
	leases int
	// fresh: usinewgame was sent and no search since; inGame: usinewgame
	// was sent and no gameover since; played: a search ran since the last
	// usinewgame or gameover. One-shot analyses keep one game going (and
	// the engine's hash) across leases. Touched only by the instance's
	// holder (its slot at start, a lease, the reset after it).
	fresh, inGame, played bool
	state                 string
	gone                  bool        // its slot let go of it: it must never be offered again
	retire                chan string // capacity 1: a reason for the slot to replace the engine
}

func (k *kind) down() bool { return time.Now().Before(k.downUntil) }

func (k *kind) setState(in *instance, s string) {
	if in.gone {
		return
	}
	if in.state != "" {
		k.counts[in.state]--
	}
	in.state = s
	if s != "" {
		k.counts[s]++
	}
	k.updateMetricsLocked()
}

func (k *kind) updateMetrics() {
	k.mu.Lock()
	k.updateMetricsLocked()
	k.mu.Unlock()
}

func (k *kind) updateMetricsLocked() {
	m, n := k.p.m, k.cfg.Name
	for _, s := range states {
		m.engines.WithLabelValues(n, s).Set(float64(k.counts[s]))
	}
	for _, c := range classes {
		m.queue.WithLabelValues(n, c.String()).Set(float64(k.q.count[c]))
	}
	m.utilization.WithLabelValues(n).Set(float64(k.counts[stateBusy]+k.q.n) / float64(k.cfg.Instances))
	avail := 1.0
	if k.down() {
		avail = 0
	}
	m.available.WithLabelValues(n).Set(avail)
}

// warmLocked counts the engines that are up: idle, leased or being checked.
func (k *kind) warmLocked() int {
	return len(k.idle) + k.counts[stateBusy] + k.counts[stateResetting] + k.counts[stateChecking]
}

// discoveryEnded marks the first discovery as over (once).
func (k *kind) discoveryEnded() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.discoveredDone {
		k.discoveredDone = true
		close(k.discovered)
	}
}
