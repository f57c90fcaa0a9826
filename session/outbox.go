package session

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrSlowClient: a client let too many events that must be delivered pile
// up; the connection should be closed with this reason.
var ErrSlowClient = errors.New("client too slow: events piled up unread")

// outbox holds the events waiting for the client. It never blocks the
// producer: an info event replaces a queued, unsent info of the same request
// and multipv line (so a slow client gets the latest state of each line),
// while every other event is kept in order. Next hands out batches at a
// bounded rate.
type outbox struct {
	mu      sync.Mutex
	queue   []*Event
	notify  chan struct{} // capacity 1
	closed  bool
	err     error
	maxKept int // events other than info allowed to wait; more is ErrSlowClient
	// ready, if set, is called (with mu held) whenever events are queued or
	// the outbox closes: see Session.SetReady.
	ready func()
	// inline, if set, is called instead of ready after an info event is
	// queued, by the goroutine that queued it, with mu released: see
	// Session.SetInline.
	inline func()

	// Token bucket for batches: at most burst at once, refilled at rate per second.
	rate, burst float64
	tokens      float64
	last        time.Time
}

func newOutbox(rate float64, burst, maxKept int) *outbox {
	return &outbox{notify: make(chan struct{}, 1), rate: rate, burst: float64(burst), tokens: float64(burst), maxKept: maxKept, last: time.Now()}
}

// push queues an event. It reports false when the outbox is closed or the
// client is too slow (the outbox is then closed with ErrSlowClient).
func (o *outbox) push(e *Event) bool {
	o.mu.Lock()
	if e.Type == EventInfo && o.inline != nil {
		queued := o.pushLocked(e, false)
		inline := o.inline
		o.mu.Unlock()
		if queued && !e.held {
			inline()
		}
		return queued
	}
	defer o.mu.Unlock()
	return o.pushLocked(e, true)
}

// flush sends the info events pushed held: through inline, if set and
// events wait (without inline, push woke the writer already).
func (o *outbox) flush() {
	o.mu.Lock()
	inline := o.inline
	waiting := len(o.queue) > 0
	o.mu.Unlock()
	if inline != nil && waiting {
		inline()
	}
}

// pushLocked is push with o.mu held; ready says whether to call o.ready.
func (o *outbox) pushLocked(e *Event, ready bool) bool {
	if o.closed {
		return false
	}
	if e.Type == EventInfo {
		for i := len(o.queue) - 1; i >= 0; i-- {
			q := o.queue[i]
			if q.Type == EventInfo && q.ID == e.ID && q.MultiPV == e.MultiPV {
				if q.Cached != e.Cached {
					// A cached line is a claim of its own (often deeper than
					// the live search's first lines): the client sees it
					// before the live lines that follow.
					break
				}
				o.queue[i] = mergeInfo(q, e)
				return true
			}
			if q.ID == e.ID && q.Type != EventInfo {
				break // keep the order of infos around other events of the request
			}
		}
	} else if len(o.queue) >= o.maxKept {
		o.closed, o.err = true, ErrSlowClient
		o.queue = nil
		o.wake()
		return false
	}
	o.queue = append(o.queue, e)
	if ready {
		o.wake()
	} else {
		o.notifyOnly()
	}
	return true
}

// mergeInfo folds an unsent info into the newer one of the same line: an
// engine's "info time ... nodes ..." heartbeat must not wipe out the pv and
// score of the line before it.
func mergeInfo(old, e *Event) *Event {
	m := *e
	if m.PV == nil {
		m.PV, m.PVKIF, m.PVSAN = old.PV, old.PVKIF, old.PVSAN
	}
	if m.Score == nil {
		m.Score, m.Bound = old.Score, old.Bound
	}
	if m.Depth == 0 {
		m.Depth, m.SelDepth = old.Depth, old.SelDepth
	}
	if m.Text == "" {
		m.Text = old.Text
	}
	return &m
}

// dropInfo discards the queued info events of request id: it was superseded
// and its progress is stale.
func (o *outbox) dropInfo(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := o.queue[:0]
	for _, e := range o.queue {
		if !(e.Type == EventInfo && e.ID == id) {
			kept = append(kept, e)
		}
	}
	clear(o.queue[len(kept):])
	o.queue = kept
}

func (o *outbox) wake() {
	o.notifyOnly()
	if o.ready != nil {
		o.ready()
	}
}

// notifyOnly wakes a next that waits, if any.
func (o *outbox) notifyOnly() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// pending reports whether next would return without waiting for a push:
// events are queued (perhaps held back by the rate for a moment) or the
// outbox is closed.
func (o *outbox) pending() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue) > 0 || o.closed
}

// next returns the queued events, waiting until there are some and the rate
// allows a batch, or until ctx ends or the outbox is closed (then with the
// reason: ErrSlowClient or nil after close).
func (o *outbox) next(ctx context.Context) ([]*Event, error) {
	for {
		o.mu.Lock()
		if o.closed && len(o.queue) == 0 {
			err := o.err
			o.mu.Unlock()
			if err == nil {
				err = context.Canceled
			}
			return nil, err
		}
		var wait time.Duration
		if len(o.queue) > 0 {
			batch, w := o.takeLocked()
			if batch != nil {
				o.mu.Unlock()
				return batch, nil
			}
			wait = w
		}
		o.mu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-o.notify:
		case <-fire:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// takeLocked takes the queued events if the rate allows a batch now, or
// says how long until it does. The queue must not be empty.
func (o *outbox) takeLocked() (batch []*Event, wait time.Duration) {
	now := time.Now()
	o.tokens = min(o.burst, o.tokens+now.Sub(o.last).Seconds()*o.rate)
	o.last = now
	if o.tokens >= 1 || o.mustDeliverLocked() {
		o.tokens = max(o.tokens-1, 0)
		batch = o.queue
		o.queue = nil
		return batch, 0
	}
	return nil, time.Duration((1 - o.tokens) / o.rate * float64(time.Second))
}

// tryNext is next without waiting: the queued events if there are some and
// the rate allows a batch now, else nil (also once the outbox is closed:
// its end is next's to report).
func (o *outbox) tryNext() []*Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.queue) == 0 {
		return nil
	}
	batch, _ := o.takeLocked()
	return batch
}

// mustDeliverLocked: events other than info (a bestmove, an error) skip the rate limit.
func (o *outbox) mustDeliverLocked() bool {
	for _, e := range o.queue {
		if e.Type != EventInfo {
			return true
		}
	}
	return false
}

// close ends the outbox; queued events can still be taken by next.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.wake()
	o.mu.Unlock()
}
