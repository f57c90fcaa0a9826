// Leasing. An idle engine is granted at once, otherwise the caller waits in
// the fair queue (fair.go); repeated failures put the kind in cooldown, and
// waiters are told at once.

package pool

import (
	"context"
	"fmt"
	"slices"
	"time"
)

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

// fail records the failure of an engine born at born (a failed start: now);
// too many within the window, or too many young engines in a row, mark the
// kind down and fail its waiters. The streak matters once the slot's
// restart delay has grown: an engine that always dies soon after its start
// then fails less often than the window counts, and without it the kind
// would look available for ever while no caller ever gets an engine.
func (k *kind) fail(born time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	k.failures = slices.DeleteFunc(k.failures, func(t time.Time) bool { return now.Sub(t) > k.cfg.FailureWindow })
	k.failures = append(k.failures, now)
	if now.Sub(born) <= k.cfg.FailureWindow {
		k.streak++
	} else {
		k.streak = 1 // it served a good while: a new count
	}
	// One bad instance does not make the kind unavailable while another
	// one serves: only a kind with no warm engine left is marked down.
	if (len(k.failures) < k.cfg.MaxFailures && k.streak < k.cfg.MaxFailures) || k.down() || k.warmLocked() > 0 {
		return
	}
	k.log.Error("engine keeps failing; marked unavailable", "failures_in_window", len(k.failures), "window", k.cfg.FailureWindow,
		"young_in_a_row", k.streak, "retry_in", k.cfg.Cooldown)
	// The streak goes on after the cooldown: one more young failure then
	// marks the kind down again.
	k.failures, k.streak = nil, k.cfg.MaxFailures-1
	k.markDownLocked(k.cfg.Cooldown)
}

// replaced records an engine replaced on purpose (recycled, killed,
// tainted by a client's option): it lived, so young failures count again
// from none. A deliberate replacement is never a failure, however young
// the engine: a client pressing a button option (stockfish's Clear Hash)
// would otherwise mark the kind unavailable for everyone (issue 35).
func (k *kind) replaced() {
	k.mu.Lock()
	k.streak = 0
	k.mu.Unlock()
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
