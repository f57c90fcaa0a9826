// Package pool keeps warm USI engine processes and leases them out, one
// caller at a time per process.
//
// For each configured engine kind the pool runs Instances slots. Each slot is
// one goroutine that owns its engine's life: it starts the process, applies
// the configured options, waits until it answers isready, offers it for
// leasing, checks its process while it is idle, and when the process dies,
// stops, fails to reset or is due for recycling, closes it and starts another
// after a randomized exponential backoff. A kind whose engines fail
// MaxFailures times within FailureWindow is marked unavailable for Cooldown:
// Acquire then fails fast with ErrUnavailable.
//
// Before a kind's first engine starts, the pool knows the engine's profile
// (package probe): loaded from the cache for this binary, or probed on a
// spare process. The profile says which go parameters the engine honours,
// whether it solves mates, and whether isready is cheap enough to use
// between leases. An idle engine is never sent anything: its health check
// reads its process state.
//
// The conversation with an engine follows the GUIs': usi, the start options
// (always USI_Hash and USI_Ponder), isready once, then usinewgame before the
// first position of each lease (sent when the engine becomes free, or by
// Lease.Go), and gameover when a lease that searched ends. isready never
// follows usinewgame.
//
// Acquire hands out a free engine at once or queues the caller (at most
// Queue waiters, until the caller's context ends). A Lease is released with
// Release; the pool then stops any search still running (and consumes its
// bestmove), ends the game, restores the options the lease changed, and,
// when the profile allows, waits for readyok before the engine serves
// anyone else. An engine that cannot be brought back is replaced.
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
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
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

// Ready reports whether some engine kind could serve a lease now or soon: it
// is available and has at least one warm engine (idle or leased).
func (p *Pool) Ready() bool {
	for _, k := range p.kinds {
		k.mu.Lock()
		ok := !k.closed && !k.down() && len(k.idle)+k.counts[stateBusy]+k.counts[stateResetting]+k.counts[stateChecking] > 0
		k.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
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
	return err
}

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
	downUntil time.Time   // unavailable until then
	closed    bool
	leasesOut int           // leases not yet released
	leasesGo  chan struct{} // closed when leasesOut drops to 0 while closed
	id        usi.ID        // from the latest engine that started
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
	profileKey string
	lastErr    string // why the engine last failed to start, in its own words too
}

func newKind(p *Pool, cfg EngineConfig) *kind {
	k := &kind{p: p, cfg: cfg, log: p.log.With("engine", cfg.Name), counts: make(map[string]int), wanted: make(chan struct{}), urgent: make(chan struct{})}
	k.q.init()
	return k
}

// instance is one engine process and its bookkeeping; state is guarded by kind.mu.
type instance struct {
	eng    *usi.Engine
	born   time.Time
	leases int
	// fresh: usinewgame was sent and no search since. Touched only by the
	// instance's holder (its slot at start, a lease, the reset after it).
	fresh  bool
	state  string
	gone   bool        // its slot let go of it: it must never be offered again
	retire chan string // capacity 1: a reason for the slot to replace the engine
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

func (k *kind) acquire(ctx context.Context, o AcquireOptions) (*Lease, error) {
	start := time.Now()
	k.mu.Lock()
	switch {
	case k.closed:
		k.mu.Unlock()
		return nil, ErrClosed
	case k.down():
		err := k.unavailableLocked()
		k.mu.Unlock()
		return nil, err
	case k.q.n == 0 && len(k.idle) > 0 && k.idle[len(k.idle)-1].eng.Err() == nil:
		in := k.idle[len(k.idle)-1]
		k.idle = k.idle[:len(k.idle)-1]
		k.setState(in, stateBusy)
		l := k.newLeaseLocked(in, o.Client, o.Class)
		k.mu.Unlock()
		k.observeWait(o.Class, start)
		return l, nil
	case k.q.n >= k.cfg.Queue:
		k.mu.Unlock()
		return nil, fmt.Errorf("%w: %d waiting for %q", ErrQueueFull, k.cfg.Queue, k.cfg.Name)
	}
	w := &waiter{ch: make(chan grant, 1), pos: make(chan int, 1), client: o.Client, class: o.Class, start: start}
	k.q.push(w)
	if !k.wantedClosed {
		close(k.wanted)
		k.wantedClosed = true
	}
	if o.Class == Interactive && !k.urgentClosed {
		close(k.urgent)
		k.urgentClosed = true
	}
	k.renumberLocked()
	k.mu.Unlock()

	for {
		select {
		case g := <-w.ch:
			k.observeWait(o.Class, start)
			if g.err != nil {
				return nil, g.err
			}
			return g.lease, nil
		case n := <-w.pos:
			if o.OnQueue != nil {
				o.OnQueue(n)
			}
		case <-ctx.Done():
			k.mu.Lock()
			if k.q.remove(w) {
				k.queueChangedLocked()
				k.mu.Unlock()
			} else {
				// The grant raced with the cancellation: hand the engine on.
				k.mu.Unlock()
				if g := <-w.ch; g.lease != nil {
					g.lease.handBack()
				}
			}
			k.observeWait(o.Class, start)
			return nil, ctx.Err()
		}
	}
}

func (k *kind) observeWait(c Class, start time.Time) {
	k.p.m.wait.WithLabelValues(k.cfg.Name, c.String()).Observe(time.Since(start).Seconds())
}

// queueChangedLocked follows a change of the queue: a fresh wanted
// channel when it emptied, new places for the waiters, the metrics.
func (k *kind) queueChangedLocked() {
	if k.q.n == 0 && k.wantedClosed {
		k.wanted, k.wantedClosed = make(chan struct{}), false
	}
	if k.q.count[Interactive] == 0 && k.urgentClosed {
		k.urgent, k.urgentClosed = make(chan struct{}), false
	}
	k.renumberLocked()
}

// renumberLocked tells every waiter whose place changed its new place.
func (k *kind) renumberLocked() {
	for i, w := range k.q.order(time.Now()) {
		if w.told == i+1 {
			continue
		}
		w.told = i + 1
		select { // replace a position the waiter has not read yet
		case <-w.pos:
		default:
		}
		w.pos <- i + 1
	}
	k.updateMetricsLocked()
}

// failWaitersLocked ends every wait with err.
func (k *kind) failWaitersLocked(err error) {
	for _, c := range classes {
		for _, ws := range k.q.byClass[c] {
			for _, w := range ws {
				w.ch <- grant{err: err}
			}
		}
	}
	k.q.clear()
	k.queueChangedLocked()
}

// offer gives a warm engine to the first waiter, or puts it with the idle ones.
func (k *kind) offer(in *instance) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.offerLocked(in)
}

func (k *kind) offerLocked(in *instance) {
	if in.gone {
		return
	}
	if w := k.q.next(time.Now()); w != nil {
		k.q.remove(w)
		k.setState(in, stateBusy)
		// The lease starts now, not when the waiter's goroutine runs: the
		// engine is the client's from here, and its time counts.
		w.ch <- grant{lease: k.newLeaseLocked(in, w.client, w.class)}
		k.queueChangedLocked()
		return
	}
	k.setState(in, stateIdle)
	k.idle = append(k.idle, in)
}

// takeIdleLocked removes in from the idle list; it reports whether it was there.
func (k *kind) takeIdleLocked(in *instance) bool {
	i := slices.Index(k.idle, in)
	if i < 0 {
		return false
	}
	k.idle = slices.Delete(k.idle, i, i+1)
	return true
}

// fail records a failure; too many within the window mark the kind down and
// fail its waiters.
func (k *kind) fail() {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	k.failures = slices.DeleteFunc(k.failures, func(t time.Time) bool { return now.Sub(t) > k.cfg.FailureWindow })
	k.failures = append(k.failures, now)
	// One bad instance does not make the kind unavailable while another
	// one serves: only a kind with no warm engine left is marked down.
	if len(k.failures) < k.cfg.MaxFailures || k.down() || k.warmLocked() > 0 {
		return
	}
	k.failures = nil
	k.log.Error("engine keeps failing; marked unavailable", "failures", k.cfg.MaxFailures, "window", k.cfg.FailureWindow, "retry_in", k.cfg.Cooldown)
	k.markDownLocked(k.cfg.Cooldown)
}

// warmLocked counts the engines that are up: idle, leased or being checked.
func (k *kind) warmLocked() int {
	return len(k.idle) + k.counts[stateBusy] + k.counts[stateResetting] + k.counts[stateChecking]
}

// markDownLocked makes Acquire fail fast for d, and fails the waiters.
func (k *kind) markDownLocked(d time.Duration) {
	k.downUntil = time.Now().Add(d)
	k.failWaitersLocked(k.unavailableLocked())
	// The gauge flips back when the cooldown ends, whether or not anyone asks.
	time.AfterFunc(d, k.updateMetrics)
}

func (k *kind) unavailableLocked() *UnavailableError {
	return &UnavailableError{Engine: k.cfg.Name, RetryAfter: time.Until(k.downUntil), Reason: k.lastErr}
}

// waitLeases waits until every lease of k is released or ctx ends.
func (k *kind) waitLeases(ctx context.Context) error {
	k.mu.Lock()
	if k.leasesOut == 0 {
		k.mu.Unlock()
		return nil
	}
	if k.leasesGo == nil {
		k.leasesGo = make(chan struct{})
	}
	ch := k.leasesGo
	k.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pool: leases of %q still open: %w", k.cfg.Name, ctx.Err())
	}
}

// UnavailableError is ErrUnavailable with the time after which to retry,
// and the last failure when the engine could not start.
type UnavailableError struct {
	Engine     string
	RetryAfter time.Duration
	Reason     string // the engine's last start failure, with its own words; may be ""
}

func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("pool: engine %q unavailable after repeated failures; retry in %v", e.Engine, e.RetryAfter.Round(time.Second))
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// runSlot keeps one engine of k running until ctx ends.
func (k *kind) runSlot(ctx context.Context) {
	bo := backoff{min: 100 * time.Millisecond, max: 30 * time.Second}
	for ctx.Err() == nil {
		k.mu.Lock()
		wait := time.Until(k.downUntil)
		k.mu.Unlock()
		if wait > 0 && !sleep(ctx, wait) {
			return
		}
		in, err := k.start(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			k.log.Warn("engine failed to start", "err", err)
			k.p.m.restarts.WithLabelValues(k.cfg.Name, reasonStartFailed).Inc()
			k.mu.Lock()
			k.lastErr = err.Error()
			k.mu.Unlock()
			k.fail()
			if !sleep(ctx, bo.next()) {
				return
			}
			continue
		}
		k.offer(in)
		reason := k.watch(ctx, in)
		k.mu.Lock()
		k.takeIdleLocked(in)
		k.setState(in, "")
		in.gone = true
		k.mu.Unlock()
		if err := in.eng.Close(); err != nil && ctx.Err() == nil {
			k.log.Debug("engine closed", "err", err)
		}
		if ctx.Err() != nil {
			return
		}
		k.p.m.restarts.WithLabelValues(k.cfg.Name, reason).Inc()
		switch reason {
		case reasonRecycle, reasonKilled:
			bo.reset()
		default:
			k.log.Warn("replacing engine", "reason", reason, "pid", in.eng.PID(), "err", in.eng.Err())
			k.fail()
			// An engine that ran a good while before failing starts over
			// from the shortest backoff.
			if time.Since(in.born) > k.cfg.FailureWindow {
				bo.reset()
			}
			if !sleep(ctx, bo.next()) {
				return
			}
		}
	}
}

// run finds the engine's profile (from the cache, or by probing a spare
// process), then keeps Instances engines running until ctx ends.
func (k *kind) run(ctx context.Context) {
	if !k.discover(ctx) {
		return
	}
	for range k.cfg.Instances {
		k.p.wg.Go(func() { k.runSlot(ctx) })
	}
}

// discover sets k.profile: the cached one for this binary and
// configuration, or a new probe's. An engine that cannot start at all is
// retried with a growing delay (up to 10 minutes), the kind unavailable in
// between with the engine's own last words as the reason: no restart storm.
func (k *kind) discover(ctx context.Context) bool {
	bo := backoff{min: 5 * time.Second, max: 10 * time.Minute}
	for ctx.Err() == nil {
		ident, err := probe.IdentityOf(k.cfg.Path)
		if err == nil {
			key := probe.Key(ident, k.cacheExtra()...)
			if prof, ok := probe.Load(k.p.profileDir, key); ok {
				k.log.Info("engine profile from cache", "id", prof.Identity.Name, "native", prof.NativeParams(), "checkmate", prof.Checkmate)
				k.setProfile(prof, key)
				return true
			}
			var prof *probe.Profile
			// The probe's spare engines log as "<name>/probe", apart from
			// the engines that serve.
			plog := k.p.log.With("engine", k.cfg.Name+"/probe")
			start := func(ctx context.Context) (*usi.Engine, error) { return k.startEngine(ctx, plog) }
			prof, err = probe.Run(ctx, probe.Config{Start: start, Identity: ident, Logger: plog})
			if err == nil {
				if serr := probe.Save(k.p.profileDir, key, prof); serr != nil {
					k.log.Warn("engine profile not cached", "dir", k.p.profileDir, "err", serr)
				}
				k.setProfile(prof, key)
				return true
			}
		}
		if ctx.Err() != nil {
			return false
		}
		k.cannotStart(ctx, err, bo.next())
		k.mu.Lock()
		wait := time.Until(k.downUntil)
		k.mu.Unlock()
		if !sleep(ctx, wait) {
			return false
		}
	}
	return false
}

// cannotStart records why the engine does not start and makes the kind
// unavailable until the next attempt. An engine that speaks UCI, the chess
// protocol, is named as such.
func (k *kind) cannotStart(ctx context.Context, err error, retry time.Duration) {
	msg := err.Error()
	if usi.SpeaksUCI(ctx, k.usiConfig(k.log), 5*time.Second) {
		msg = "the engine speaks UCI (the chess protocol), not USI: " + msg
	}
	k.log.Error("engine cannot start", "err", msg, "retry_in", retry.Round(time.Second))
	k.p.m.restarts.WithLabelValues(k.cfg.Name, reasonStartFailed).Inc()
	k.mu.Lock()
	k.lastErr = msg
	k.markDownLocked(retry)
	k.mu.Unlock()
}

// cacheExtra is what, besides the binary, makes a cached profile this
// configuration's: how the engine is run and the options set at start.
func (k *kind) cacheExtra() []string {
	c := k.cfg
	extra := []string{"dir=" + c.Dir}
	for _, a := range c.Args {
		extra = append(extra, "arg="+a)
	}
	for _, e := range c.Env {
		extra = append(extra, "env="+e)
	}
	for _, name := range sortedKeys(c.Options) {
		extra = append(extra, "option="+name+"="+c.Options[name])
	}
	return extra
}

func (k *kind) setProfile(prof *probe.Profile, key string) {
	p := prof.Apply(k.cfg.Capabilities.override())
	k.mu.Lock()
	k.profile, k.profileKey, k.lastErr = &p, key, ""
	k.mu.Unlock()
}

// Profile returns the engine kind's profile with the configured overrides,
// or nil while it is not known yet.
func (k *kind) Profile() *probe.Profile {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.profile
}

func (k *kind) usiConfig(log *slog.Logger) usi.Config {
	c := k.cfg
	env := []string(nil)
	if len(c.Env) > 0 {
		env = append(os.Environ(), c.Env...)
	}
	return usi.Config{
		Path: c.Path, Args: c.Args, Dir: c.Dir, Env: env,
		USIOKTimeout: c.Timeouts.Start, ReadyOKTimeout: c.Timeouts.Ready,
		StopTimeout: c.Timeouts.Stop, QuitTimeout: c.Timeouts.Quit,
		Logger: log,
	}
}

// startEngine starts an engine process and sets the start options, without
// isready.
func (k *kind) startEngine(ctx context.Context, log *slog.Logger) (*usi.Engine, error) {
	eng, err := usi.Start(ctx, k.usiConfig(log))
	if err != nil {
		return nil, err
	}
	if err := k.applyOptions(eng); err != nil {
		eng.Close()
		return nil, err
	}
	return eng, nil
}

// start starts a serving engine: options, then isready (which may take a
// while: engines load their evaluation files then).
func (k *kind) start(ctx context.Context) (*instance, error) {
	c := k.cfg
	sctx, cancel := context.WithTimeout(ctx, c.Timeouts.Start+c.Timeouts.Ready)
	defer cancel()
	in := &instance{born: time.Now(), retire: make(chan string, 1)}
	k.mu.Lock()
	k.setState(in, stateStarting)
	k.mu.Unlock()
	eng, err := k.startEngine(sctx, k.log)
	if err == nil {
		in.eng = eng
		if err = eng.IsReady(sctx); err == nil {
			err = eng.NewGame() // usinewgame, after isready (the GUIs' order)
			in.fresh = err == nil
		}
		if err != nil {
			eng.Close()
		}
	}
	k.mu.Lock()
	prof, key := k.profile, k.profileKey
	if err != nil {
		k.setState(in, "")
	} else {
		k.id, k.options = eng.ID(), eng.Options()
	}
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if prof != nil && prof.Identity.Name != eng.ID().Name {
		k.log.Warn("engine's id name differs from its cached profile; it is probed again at the next start",
			"profile", prof.Identity.Name, "engine", eng.ID().Name)
		probe.Forget(k.p.profileDir, key)
	}
	k.log.Info("engine ready", "pid", eng.PID(), "id", eng.ID().Name, "took", time.Since(in.born).Round(time.Millisecond))
	return in, nil
}

// applyOptions sends the start options: the configured ones, plus USI_Hash
// and USI_Ponder, which GUIs send to every engine (an engine's own hash
// default may be gigabytes), under the names the engine advertises.
func (k *kind) applyOptions(eng *usi.Engine) error {
	opts := eng.Options()
	values := map[string]string{}
	for name, v := range k.cfg.Options {
		values[advertisedName(opts, name)] = v
	}
	reserved := map[string]string{"USI_Hash": strconv.Itoa(DefaultHashMB), "USI_Ponder": "false"}
	for _, name := range sortedKeys(reserved) {
		if _, set := k.cfg.Options[name]; set {
			continue
		}
		if _, set := k.cfg.Options[optionAliases[name]]; set {
			continue
		}
		values[advertisedName(opts, name)] = clampSpin(opts, advertisedName(opts, name), reserved[name])
	}
	for _, name := range sortedKeys(values) {
		if err := eng.SetOption(name, values[name]); err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
	}
	return nil
}

// clampSpin brings a default value within an advertised spin option's range.
func clampSpin(opts []usi.Option, name, v string) string {
	i := slices.IndexFunc(opts, func(o usi.Option) bool { return o.Name == name })
	n, err := strconv.ParseInt(v, 10, 64)
	if i < 0 || err != nil || opts[i].Type != usi.TypeSpin {
		return v
	}
	o := opts[i]
	if o.HasMin && n < o.Min {
		n = o.Min
	}
	if o.HasMax && n > o.Max {
		n = o.Max
	}
	return strconv.FormatInt(n, 10)
}

// optionAliases pairs the reserved USI option names with the names that
// engines derived from Stockfish advertise instead (fairy-stockfish has Hash,
// not USI_Hash), so that configurations can use either.
var optionAliases = map[string]string{
	"USI_Hash": "Hash", "Hash": "USI_Hash",
	"USI_Ponder": "Ponder", "Ponder": "USI_Ponder",
	"USI_MultiPV": "MultiPV", "MultiPV": "USI_MultiPV",
}

// advertisedName returns name, or its alias when only the alias is advertised.
func advertisedName(opts []usi.Option, name string) string {
	has := func(n string) bool {
		return slices.ContainsFunc(opts, func(o usi.Option) bool { return o.Name == n })
	}
	if alias, ok := optionAliases[name]; ok && !has(name) && has(alias) {
		return alias
	}
	return name
}

// watch returns when in must be replaced, with the reason, or "" when ctx
// ends. While in is idle its process is checked every HealthInterval, at no
// cost to the engine (no isready: some engines re-initialise on it).
func (k *kind) watch(ctx context.Context, in *instance) string {
	t := time.NewTicker(k.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-in.eng.Done():
			return reasonCrash
		case r := <-in.retire:
			return r
		case <-t.C:
			if r := k.check(in); r != "" {
				return r
			}
		}
	}
}

// check retires an idle engine whose process is stopped (SIGSTOP, a
// debugger) or a zombie, or that is due for recycling. A leased engine is
// its holder's to judge, by the answer to its next search.
func (k *kind) check(in *instance) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !slices.Contains(k.idle, in) {
		return ""
	}
	if st := procState(in.eng.PID()); st == 'T' || st == 't' || st == 'Z' {
		k.takeIdleLocked(in)
		k.log.Warn("idle engine is not running", "pid", in.eng.PID(), "state", string(st))
		return reasonUnhealthy
	}
	if k.cfg.MaxAge > 0 && time.Since(in.born) >= k.cfg.MaxAge {
		k.takeIdleLocked(in)
		return reasonRecycle
	}
	return ""
}

// procState returns the state letter of a process from /proc (R, S, D, T,
// t, Z, ...), or 0 where it cannot be read.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// retire asks in's slot to replace it. It never blocks: one reason is enough.
func (in *instance) retireFor(reason string) {
	select {
	case in.retire <- reason:
	default:
	}
}

// backoff yields randomized exponential delays: each twice the last (up to
// max), then scaled by a random factor in [0.5, 1.5) so that engines that
// failed together do not restart together.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	return time.Duration(float64(b.cur) * (0.5 + rand.Float64()))
}

func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
