package usi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Result is how a search ended: exactly one of BestMove and Checkmate is set.
type Result struct {
	BestMove  *BestMove  // the engine answered "bestmove"
	Checkmate *Checkmate // the engine answered "checkmate" (after go mate)
	// Lines holds, for each multipv (1 when the engine sent none), the last
	// info line of the search that had a pv, ordered by multipv. It is what
	// a caller who did not read the stream wants to report.
	Lines []Info
}

// Search is one go command in flight, from Engine.Go. Its info lines are read
// with Next; its end with Wait or Done. One goroutine reads (Next, Wait);
// Stop, Ponderhit, Hit, Done and Dropped are safe from any goroutine.
type Search struct {
	e      *Engine
	ponder bool
	done   chan struct{} // closed when the search has ended
	hit    chan struct{} // closed once ponderhit is sent (a pondering search's only)

	// dmu is held while deliver runs, so that Wait returns only after the
	// last call (see Deliver); it is taken before mu. delivered is the line
	// being delivered: a field, so that passing its address to deliver
	// does not move every line to the heap.
	dmu       sync.Mutex
	delivered Info

	mu        sync.Mutex
	deliver   func(*Info, bool) // set by Deliver: lines go to it, not to q
	notify    chan struct{}     // capacity 1: an info was queued
	q         infoQueue
	lines     map[int]Info
	stopping  bool
	ponderhit bool
	stopTimer *time.Timer
	stopAfter func() bool // unregisters the context.AfterFunc that stops us
	ended     bool
	result    Result
	err       error
}

// maxLines bounds Result.Lines against an engine sending absurd multipv numbers.
const maxLines = 512

func newSearch(e *Engine, ponder bool) *Search {
	var hit chan struct{}
	if ponder {
		hit = make(chan struct{})
	}
	return &Search{
		e:      e,
		ponder: ponder,
		hit:    hit,
		done:   make(chan struct{}),
		notify: make(chan struct{}, 1),
		q:      infoQueue{cap: e.cfg.InfoBuffer},
	}
}

// Next returns the next info line of the search. It blocks until one comes,
// and returns false when the search has ended and every queued line has been
// read, or when ctx is done; then call Wait for the result.
//
// When the reader lags (Config.InfoBuffer lines queued), lines are dropped
// rather than let the engine wait: a new line replaces the newest queued
// line of the same multipv, or else an older line superseded by a newer one
// of its multipv goes. The latest line of each multipv is kept (as long as
// there are fewer multipvs than InfoBuffer), so a slow reader still ends up
// with the latest state; Dropped counts the losses.
func (s *Search) Next(ctx context.Context) (Info, bool) {
	for {
		s.mu.Lock()
		in, ok := s.q.pop()
		ended := s.ended
		s.mu.Unlock()
		if ok {
			return in, true
		}
		if ended {
			return Info{}, false
		}
		select {
		case <-s.notify:
		case <-s.done:
		case <-ctx.Done():
			return Info{}, false
		}
	}
}

// Deliver hands the search's info lines to f instead of queueing them for
// Next: the lines queued so far at once, then each line as the engine's
// stdout reader parses it, on that goroutine, in order. A reader that
// converts and forwards each line that way costs no goroutine hand-off per
// line. more says that another info line of the search is already at hand
// (the engine wrote faster than f took them, or lines were queued): f may
// keep this one to send with the next, and send what it kept once more is
// false (or once the search has ended: a line may be the last one then).
// f must be quick and must not block: the engine's output waits while it
// runs (it may call Stop). f is never called concurrently, nor after
// Wait has returned, so state f keeps may be read once Wait returns. The
// Info f gets is valid during the call only (its slices stay valid). Call
// Deliver once, from the goroutine that would have called Next, before
// Wait; do not call Next then.
func (s *Search) Deliver(f func(in *Info, more bool)) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.mu.Lock()
	var queued []Info
	for {
		in, ok := s.q.pop()
		if !ok {
			break
		}
		queued = append(queued, in)
	}
	s.deliver = f
	s.mu.Unlock()
	for i := range queued {
		f(&queued[i], i < len(queued)-1)
	}
}

// Wait blocks until the search ends or ctx is done, and returns the result:
// the engine's bestmove or checkmate, or the error that ended the search
// (wrapping ErrEngineExited, ErrTimeout after a stop the engine ignored, or
// ErrClosed). Info lines not read by then are discarded with the search.
func (s *Search) Wait(ctx context.Context) (Result, error) {
	select {
	case <-s.done:
	default:
		select {
		case <-s.done:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	// A line being delivered as the search ended is finished first: the
	// caller may read what Deliver's function kept.
	s.dmu.Lock()
	s.dmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result, s.err
}

// Done is closed when the search has ended, with a result or an error.
func (s *Search) Done() <-chan struct{} { return s.done }

// Dropped returns how many info lines were dropped because the reader lagged.
func (s *Search) Dropped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.q.dropped
}

// Stop sends "stop" (once) and returns when it is written. If the engine
// does not answer with bestmove within Config.StopTimeout, the search fails
// with ErrTimeout and the engine is killed, so Done is always closed soon
// after Stop. Stopping an ended search does nothing.
func (s *Search) Stop() {
	s.send("stop", func() bool {
		if s.stopping {
			return false
		}
		s.stopping = true
		d := s.e.cfg.StopTimeout
		s.stopTimer = time.AfterFunc(d, func() {
			err := fmt.Errorf("%w: no bestmove within %v after stop", ErrTimeout, d)
			if s.e.endSearch(s, Result{}, err) {
				s.e.logger().Warn("engine ignored stop; killing it", "timeout", d)
				s.e.kill("ignored stop")
			}
		})
		return true
	})
}

// Ponderhit sends "ponderhit" (once) to a search started with Go.Ponder: the
// opponent played the expected move and the search goes on as a normal one.
// After the search has ended it does nothing.
func (s *Search) Ponderhit() error {
	if !s.ponder {
		return fmt.Errorf("%w: ponderhit for a search that is not pondering", ErrBadCommand)
	}
	sent := false
	err := s.send("ponderhit", func() bool {
		if s.stopping || s.ponderhit {
			return false
		}
		s.ponderhit, sent = true, true
		return true
	})
	if sent {
		close(s.hit)
	}
	return err
}

// Hit is closed once ponderhit has been sent to a pondering search: from
// then on the engine thinks on its own time. It is nil (never closed) for
// a search started without Go.Ponder. A ponderhit that came too late (the
// search stopping or ended) does not close it.
func (s *Search) Hit() <-chan struct{} { return s.hit }

// send writes a command meant for this search, if the search is still the
// one in flight and ok (called with s.mu held) agrees. Holding writeMu
// throughout means no later search's go can be written in between, so a
// late stop never reaches the next search.
func (s *Search) send(line string, ok func() bool) error {
	e := s.e
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	e.mu.Lock()
	active := e.search == s
	e.mu.Unlock()
	s.mu.Lock()
	send := active && !s.ended && ok()
	s.mu.Unlock()
	if !send {
		return nil
	}
	err := e.writeLocked(line + "\n")
	if err != nil {
		// The engine is gone or stuck: its exit fails the search.
		e.logger().Debug("not sent", "line", line, "err", err)
	}
	return err
}

// push queues an info line, or delivers it; called by the engine's stdout
// reader. more: another line is at hand (see Deliver).
func (s *Search) push(in Info, more bool) {
	s.dmu.Lock()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		s.dmu.Unlock()
		return
	}
	deliver := s.deliver
	if deliver == nil {
		s.q.push(in)
	}
	if in.Has(InfoPV) {
		k := lineKey(&in)
		if _, ok := s.lines[k]; ok || len(s.lines) < maxLines {
			if s.lines == nil {
				s.lines = make(map[int]Info)
			}
			s.lines[k] = in
		}
	}
	s.mu.Unlock()
	if deliver != nil {
		// Under dmu: a search that ends meanwhile (a timeout, the
		// process's exit) has its Wait return after this call.
		s.delivered = in
		deliver(&s.delivered, more)
		s.delivered = Info{}
		s.dmu.Unlock()
		return
	}
	s.dmu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// finish ends the search once; it reports whether this call ended it.
func (s *Search) finish(res Result, err error) bool {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	if err == nil {
		for _, k := range slices.Sorted(maps.Keys(s.lines)) {
			res.Lines = append(res.Lines, s.lines[k])
		}
	}
	s.result, s.err = res, err
	if s.stopTimer != nil {
		s.stopTimer.Stop()
	}
	unregister := s.stopAfter
	s.mu.Unlock()
	close(s.done)
	if unregister != nil {
		unregister()
	}
	return true
}

// watch arranges for s.Stop to run when ctx is done, for as long as the
// search runs.
func (s *Search) watch(ctx context.Context) {
	stop := context.AfterFunc(ctx, s.Stop)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		stop()
		return
	}
	s.stopAfter = stop
	s.mu.Unlock()
}

// lineKey says which line of the search an info belongs to: its multipv, 1
// for a pv without multipv, 0 for progress-only lines (nodes, currmove...).
func lineKey(in *Info) int {
	switch {
	case in.Has(InfoMultiPV):
		return in.MultiPV
	case in.Has(InfoPV):
		return 1
	}
	return 0
}

// infoQueue is a bounded FIFO of info lines that coalesces when full.
// Positions are absolute counters; slot i lives in buf[i%cap].
type infoQueue struct {
	cap        int
	buf        []Info
	head, tail uint64
	newest     map[int]uint64 // lineKey -> position of its newest queued line
	dropped    int64
	highWater  int // the most lines ever queued at once (for tests)
}

func (q *infoQueue) push(in Info) {
	if q.buf == nil {
		q.buf = make([]Info, q.cap)
		q.newest = make(map[int]uint64)
	}
	k := lineKey(&in)
	if int(q.tail-q.head) == q.cap {
		q.dropped++
		if pos, ok := q.newest[k]; ok && pos >= q.head {
			// Replace the newest queued line of the same multipv: order
			// within a multipv is kept, and the reader gets the latest.
			q.buf[q.slot(pos)] = in
			return
		}
		q.dropOne()
	}
	q.buf[q.slot(q.tail)] = in
	q.newest[k] = q.tail
	q.tail++
	if n := int(q.tail - q.head); n > q.highWater {
		q.highWater = n
	}
	if len(q.newest) > 4*q.cap {
		// An engine inventing multipv numbers: forget the stale entries.
		for k, pos := range q.newest {
			if pos < q.head {
				delete(q.newest, k)
			}
		}
	}
}

func (q *infoQueue) slot(pos uint64) int { return int(pos % uint64(q.cap)) }

// dropOne makes room in a full queue for a line of a multipv that has none
// queued. It drops the oldest line that a newer line of the same multipv
// supersedes, so that the latest line of every multipv stays; only when
// every queued line is the latest of its multipv does the oldest go. This
// is O(cap), but a full queue meets a new multipv rarely.
func (q *infoQueue) dropOne() {
	victim := q.head
	for p := q.head; p < q.tail; p++ {
		if q.newest[lineKey(&q.buf[q.slot(p)])] != p {
			victim = p
			break
		}
	}
	// Close the gap: move the lines before the victim up by one.
	for p := victim; p > q.head; p-- {
		q.buf[q.slot(p)] = q.buf[q.slot(p-1)]
		if k := lineKey(&q.buf[q.slot(p)]); q.newest[k] == p-1 {
			q.newest[k] = p
		}
	}
	q.buf[q.slot(q.head)] = Info{}
	q.head++
}

func (q *infoQueue) pop() (Info, bool) {
	if q.head == q.tail {
		return Info{}, false
	}
	i := q.slot(q.head)
	in := q.buf[i]
	q.buf[i] = Info{} // let the line's memory go
	q.head++
	return in, true
}
