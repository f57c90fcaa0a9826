// Package pool keeps warm USI engine processes and leases them out, one
// caller at a time per process.
//
// For each configured engine kind the pool runs Instances slots. Each slot is
// one goroutine that owns its engine's life: it starts the process, applies
// the configured options, waits until it answers isready, offers it for
// leasing, checks its process while it is idle, and when the process dies,
// stops, fails to reset or is due for recycling, closes it and starts another
// after a randomized exponential backoff (at once when it was replaced on
// purpose: recycled, discarded by its holder, or tainted by a client's
// option). A kind whose engines fail MaxFailures times within
// FailureWindow, or MaxFailures times in a row each younger than
// FailureWindow, is marked unavailable for Cooldown: Acquire then fails
// fast with ErrUnavailable. A replacement on purpose is never a failure.
//
// Before a kind's first engine starts, the pool knows the engine's profile
// (package probe): loaded from the cache for this binary, or probed on a
// spare process, which then serves as the kind's first engine once nothing
// the probe did is left to change an answer (spare.go): an engine slow to
// get ready is started once. The profile says which go parameters the engine honours,
// whether it solves mates, and whether isready is cheap enough to use
// between leases. An idle engine is never sent anything: its health check
// reads its process state.
//
// The conversation with an engine follows the GUIs': usi, the start options
// (always USI_Hash and USI_Ponder), isready, usinewgame, then positions and
// searches. Searches without a clock (analyses, mates) go on in that game
// from lease to lease, as an analysis GUI sends one usinewgame for many
// positions, so the engine keeps its hash. A lease that plays with clocks,
// begins or ends a game itself, or sets a client's options ends its game:
// gameover, then isready where the profile says it is cheap and safe, then
// usinewgame. isready never follows usinewgame or another isready (some
// engines exit on that); the probe's findings (probe.Profile.Avoid) are
// kept to.
//
// Acquire hands out a free engine at once or queues the caller (at most
// Queue waiters, until the caller's context ends). A Lease is released with
// Release; the pool then stops any search still running (and consumes its
// bestmove), restores the options the lease changed and, for a lease that
// ended its game, starts the next one before the engine serves anyone else.
// An engine that cannot be brought back is replaced.
//
// # Fair sharing
//
// The scarce thing is engine time, so the queue shares engine time, not
// turns. AcquireWith names the caller's Client and Class. When an engine
// frees up it goes to a waiter of the first class that has any
// (Interactive before Background: background work waits as long as people
// do); within the class, to the client with the least recent engine time
// on this kind; and of that client's waiters, to the oldest. A client's
// engine time is what its leases held (Lease.Held), charged at release,
// decaying with a half-life of a minute; a lease it holds now counts as an
// average lease until it ends. Ties go to the earlier arrival.
//
// This is deficit round robin by engine time rather than plain round
// robin over waiting clients: with round robin, a client asking for 100 ms
// now and then waits behind every client that keeps the queue busy with
// 1 s searches (one turn each, so N heavy searches); ordered by engine time,
// it goes next and waits at most for the lease in progress, while heavy
// clients still take turns among themselves (each one served goes behind
// the others). The decay forgives old use: a client is never behind for
// long, and one that has been away gets at most a bounded head start.
//
// OnQueue tells a waiter its place in that order, 1 being next, whenever it
// changes (arrivals, departures, grants, charges). Place 1 is exact; later
// places assume each lease costs the average, and are corrected as leases
// end.
//
// Lease.Wanted is closed while anyone waits for the kind (there is then no
// idle engine), so that a session holding an engine it is not using can
// give it back at once and lease one again when it needs it.
//
// # Concurrency and ownership
//
// A Pool is safe for concurrent use. A Lease belongs to the goroutine that
// acquired it; its Engine must not be used after Release. Every Lease must be
// released exactly once (later calls do nothing); the pool's Close waits for
// leases until its context ends and then closes their engines anyway. After
// Close returns, no engine process of the pool is left running.
package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/probe"
)

// Errors from Acquire and Lease. Test with errors.Is.
var (
	ErrUnknownEngine    = errors.New("pool: unknown engine")
	ErrQueueFull        = errors.New("pool: too many callers waiting for this engine")
	ErrUnavailable      = errors.New("pool: engine unavailable after repeated failures")
	ErrClosed           = errors.New("pool: closed")
	ErrOptionNotAllowed = errors.New("pool: option not settable by clients")
)

// Options configure a Pool beyond its engines.
type Options struct {
	Logger     *slog.Logger          // nil discards
	Registerer prometheus.Registerer // where metrics go; nil: not registered
	// ProfileDir is where engine profiles are cached (package probe);
	// "" is probe.DefaultDir(). An unwritable directory only costs a probe
	// at every start.
	ProfileDir string
	// Usage, if not nil, shares the fair queue's record of clients' engine
	// time with other instances every UsageSync (DefaultUsageSync).
	Usage     UsageExchange
	UsageSync time.Duration
}

// Pool is a set of warm engine processes per engine kind.
type Pool struct {
	log   *slog.Logger
	m     *metrics
	kinds map[string]*kind
	names []string // configuration order

	profileDir string

	ctx    context.Context // cancelled by Close: slots close their engines
	cancel context.CancelFunc
	wg     sync.WaitGroup // slot and reset goroutines
}

// New checks the configuration and starts every engine in the background; it
// does not wait for them. Ready reports when an engine can be leased.
func New(cfgs []EngineConfig, opts Options) (*Pool, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("pool: no engines configured")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{log: log, m: newMetrics(opts.Registerer), kinds: make(map[string]*kind), profileDir: opts.ProfileDir}
	if p.profileDir == "" {
		p.profileDir = probe.DefaultDir()
	}
	var errs []error
	for _, c := range cfgs {
		c, err := c.WithDefaults()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p.kinds[c.Name] != nil {
			errs = append(errs, fmt.Errorf("engine %q is configured twice", c.Name))
			continue
		}
		p.kinds[c.Name] = newKind(p, c)
		p.names = append(p.names, c.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, name := range p.names {
		k := p.kinds[name]
		k.updateMetrics()
		p.wg.Go(func() { k.run(p.ctx) })
	}
	if opts.Usage != nil {
		every := opts.UsageSync
		if every <= 0 {
			every = DefaultUsageSync
		}
		for _, name := range p.names {
			k := p.kinds[name]
			k.mu.Lock()
			k.q.pending = map[string]float64{}
			k.mu.Unlock()
		}
		p.wg.Go(func() { p.shareUsage(p.ctx, opts.Usage, every) })
	}
	return p, nil
}

// Engines returns the configured engine names in configuration order.
func (p *Pool) Engines() []string { return slices.Clone(p.names) }

// Config returns the configuration of an engine kind, with defaults filled in.
func (p *Pool) Config(name string) (EngineConfig, bool) {
	k := p.kinds[name]
	if k == nil {
		return EngineConfig{}, false
	}
	return k.cfg, true
}

// Acquire is AcquireWith for an Interactive caller of client "".
func (p *Pool) Acquire(ctx context.Context, name string, onQueue func(position int)) (*Lease, error) {
	return p.AcquireWith(ctx, name, AcquireOptions{OnQueue: onQueue})
}

// AcquireWith leases a free engine of the named kind, or waits while all
// are busy, until ctx ends. Waiters are served by class, then in turn by
// client (see the package doc), each client's in the order they came.
// Errors: ErrUnknownEngine, ErrQueueFull, ErrUnavailable, ErrClosed, or
// ctx's error.
func (p *Pool) AcquireWith(ctx context.Context, name string, o AcquireOptions) (*Lease, error) {
	k := p.kinds[name]
	if k == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEngine, name)
	}
	if o.Class < 0 || o.Class >= numClasses {
		return nil, fmt.Errorf("pool: unknown class %d", int(o.Class))
	}
	return k.acquire(ctx, o)
}

// Profile returns what usid knows of an engine kind (package probe), or nil
// while it is unknown (being probed, or the kind does not exist).
func (p *Pool) Profile(name string) *probe.Profile {
	k := p.kinds[name]
	if k == nil {
		return nil
	}
	return k.Profile()
}

// Ready reports whether the pool serves: some engine kind could serve a
// lease now or soon (it is available and has a warm engine, idle or
// leased), and every kind has settled once since the pool started - its
// profile probed and an engine warm, or its engine found unable to start.
// Until then an answer could depend on a probe not yet finished (a mate
// request naming no engine would miss the only engine that solves mates),
// so a new instance takes no traffic before it knows its engines.
func (p *Pool) Ready() bool {
	serving, all := false, true
	for _, k := range p.kinds {
		k.mu.Lock()
		warm := !k.closed && !k.down() && k.warmLocked() > 0
		k.settled = k.settled || warm || k.down()
		all = all && k.settled
		serving = serving || warm
		k.mu.Unlock()
	}
	return serving && all
}

// Discovering lists the engine kinds whose first discovery (probe) has not
// ended: what they can do is not known yet.
func (p *Pool) Discovering() []string {
	var out []string
	for _, name := range p.names {
		k := p.kinds[name]
		k.mu.Lock()
		if !k.discoveredDone {
			out = append(out, name)
		}
		k.mu.Unlock()
	}
	return out
}

// WaitDiscovered waits until every engine kind's first discovery has ended
// (Discovering is empty), or ctx ends (its error).
func (p *Pool) WaitDiscovered(ctx context.Context) error {
	for _, name := range p.names {
		select {
		case <-p.kinds[name].discovered:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops leasing (waiters get ErrClosed), waits for open leases to be
// released until ctx ends, then sends quit to every engine, kills those that
// do not exit, and waits for all of it. It returns ctx's error if leases had
// to be cut short.
func (p *Pool) Close(ctx context.Context) error {
	for _, k := range p.kinds {
		k.mu.Lock()
		k.closed = true
		k.failWaitersLocked(ErrClosed)
		k.mu.Unlock()
	}
	var err error
	for _, k := range p.kinds {
		if e := k.waitLeases(ctx); e != nil {
			err = e
			break
		}
	}
	p.cancel()
	p.wg.Wait()
	for _, k := range p.kinds {
		k.closeSpare() // a probe's engine no slot took
	}
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
