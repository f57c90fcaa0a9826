// The session's worker. One goroutine per session runs its requests one at a
// time - leasing an engine, restoring the options set on it, serving a search
// or a control request - and gives the engine back when the session idles.

package session

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/usi"
)

// worker serves the session's requests one at a time and owns its lease.
func (s *Session) worker() {
	var lease *pool.Lease
	defer func() {
		if lease != nil {
			lease.Release()
		}
		close(s.done)
	}()
	for {
		var item any
		// While the session is between requests, a caller waiting for its
		// engine's kind gets the engine at once (Lease.Wanted): an idle
		// lease yields, and the next request leases again, with the
		// client's options restored.
		var wanted <-chan struct{}
		if lease != nil {
			wanted = lease.Wanted()
		}
		select {
		case item = <-s.work:
		case <-wanted:
			select {
			case item = <-s.work: // a request came too: it keeps the engine
			default:
				s.log.Debug("idle engine given to a waiting caller", "engine", lease.Name())
				lease.Release()
				lease = nil
				continue
			}
		case <-s.ctx.Done():
			return
		}
		switch it := item.(type) {
		case idleTick:
			s.mu.Lock()
			idle := s.cur == nil && len(s.work) == 0
			s.mu.Unlock()
			if idle && lease != nil {
				lease.Release()
				lease = nil
			}
		case *job:
			lease = s.serve(it, lease)
		case *Request:
			lease = s.control(it, lease)
		case drainMark:
			close(it)
		}
		s.armIdle()
	}
}

func (s *Session) armIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.idleTimer = time.AfterFunc(s.svc.IdleRelease, func() {
		select {
		case s.work <- idleTick{}:
		default: // busy with requests: not idle
		}
	})
}

// lease returns a lease on engine, keeping the one held when it fits.
// Waiting in the pool's queue sends queued events for request id.
func (s *Session) lease(ctx context.Context, held *pool.Lease, engine, id string) (*pool.Lease, *Error) {
	if held != nil {
		select {
		case <-held.Done():
		default:
			if held.Name() == engine && time.Since(held.Acquired()) < s.svc.MaxLease {
				return held, nil
			}
		}
		held.Release()
	}
	actx, cancel := context.WithTimeout(ctx, s.svc.QueueTimeout)
	defer cancel()
	l, err := s.svc.acquire(actx, engine, s.caller, func(pos int) {
		s.out.push(&Event{Type: EventQueued, ID: id, Position: pos})
	})
	if err != nil {
		return nil, acquireError(engine, err)
	}
	s.clientOpts = false // a fresh lease has the configured options
	s.repeated = false   // and a hash cleared by usinewgame
	s.replacePaid = false
	restored := s.restore(l, engine)
	s.out.push(&Event{Type: EventEngine, ID: id, Name: engine, USIName: l.Engine().ID().Name, Restored: restored})
	return l, nil
}

// kept is what a client set on one engine kind during the session.
type kept struct {
	names  []string // option names, in the order first set
	values map[string]string
}

// keep records an option the engine took.
func (s *Session) keep(engine string, r *Request) {
	if s.kept == nil {
		s.kept = map[string]*kept{}
	}
	k := s.kept[engine]
	if k == nil {
		k = &kept{values: map[string]string{}}
		s.kept[engine] = k
	}
	if _, ok := k.values[r.Name]; !ok {
		k.names = append(k.names, r.Name)
	}
	k.values[r.Name] = r.Value
}

// restore re-applies to a fresh lease what the client set on engine's kind
// before, and returns the option names it set again. An option the engine
// no longer takes is forgotten (and logged): the lease is of the same kind,
// so that only happens when the operator changed the configuration.
func (s *Session) restore(l *pool.Lease, engine string) []string {
	k := s.kept[engine]
	if k == nil {
		return nil
	}
	var done []string
	for _, name := range slices.Clone(k.names) {
		if err := l.SetOption(name, k.values[name]); err != nil {
			s.log.Warn("option not restored on a new lease", "engine", engine, "option", name, "err", err)
			delete(k.values, name)
			k.names = slices.DeleteFunc(k.names, func(n string) bool { return n == name })
			continue
		}
		// A text option set again has this engine replaced too: charged as
		// when the client set it (the search that leased it was allowed).
		if cost := l.ReplacementCost(name); cost > 0 && s.caller.Budget != nil && !s.replacePaid {
			s.caller.Budget.Charge(context.WithoutCancel(s.ctx), cost)
			s.replacePaid = true
		}
		done = append(done, name)
	}
	s.clientOpts = len(done) > 0
	return done
}

// serve runs one search request to its terminal event.
func (s *Session) serve(j *job, held *pool.Lease) *pool.Lease {
	ctx, cancel := context.WithCancel(WithCaller(s.ctx, s.caller))
	defer cancel()
	r := &run{id: j.id, cancel: cancel, unbounded: (j.kind == jobAnalyze && !j.bounded) || (j.kind == jobPlay && j.ponder)}
	defer s.markEnded(j.id) // every way out of serve has sent j's terminal event
	s.mu.Lock()
	delete(s.pending, j.id)
	switch {
	case j.cancelled:
		s.mu.Unlock()
		s.out.push(errorEvent(j.id, errorf(CodeCancelled, "stopped before it started")))
		return held
	case s.latest != j.id:
		s.mu.Unlock()
		s.out.push(errorEvent(j.id, errorf(CodeSuperseded, "a newer request replaced it before it started")))
		return held
	}
	s.cur = r
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
	}()

	emit := func(ev *Event) {
		s.mu.Lock()
		stale := r.superseded && ev.Type == EventInfo
		s.mu.Unlock()
		if !stale {
			s.out.push(ev)
		}
	}
	if j.kind == jobAnalyze && !s.clientOpts {
		// What the cache knows of the position, at once; then live.
		if cr := s.svc.fromCache(ctx, j, func(evalcache.Entry) bool { return true }); cr != nil {
			for _, l := range cr.Lines {
				emit(&Event{Type: EventInfo, ID: j.id, MultiPV: l.MultiPV, Depth: l.Depth, SelDepth: l.SelDepth, Score: l.Score,
					Bound: l.Bound, Nodes: l.Nodes, TimeMS: l.TimeMS, PV: l.PV, PVKIF: l.PVKIF, PVSAN: l.PVSAN, Cached: true})
			}
		}
	}
	err := s.svc.pickMateEngine(ctx, j, s.svc.QueueTimeout, func(probing []string) {
		s.out.push(&Event{Type: EventQueued, ID: j.id, Position: 1, Probing: probing})
	})
	var lease *pool.Lease
	if err == nil {
		lease, err = s.lease(ctx, held, j.engine, j.id)
	}
	if err != nil {
		s.mu.Lock()
		switch {
		case r.superseded && ctx.Err() != nil:
			err = errorf(CodeSuperseded, "a newer request replaced it while it waited for an engine")
		case s.draining && ctx.Err() != nil:
			err = errorf(CodeShuttingDown, "the server is shutting down; reconnect to another instance")
		case r.stopped && ctx.Err() != nil:
			err = errorf(CodeCancelled, "stopped while it waited for an engine")
		}
		s.mu.Unlock()
		emit(errorEvent(j.id, err))
		return nil
	}
	j.noCache, j.noStore = s.clientOpts, s.repeated
	j.flush = s.out.flush
	s.repeated = s.repeated || j.historyRepeats()
	_, discard := s.svc.runSearch(ctx, lease, j, emit, func(srch *usi.Search) {
		s.mu.Lock()
		r.search = srch
		s.mu.Unlock()
	})
	if discard {
		lease.Discard()
		return nil
	}
	return lease
}

// control serves setoption, newgame and gameover.
func (s *Session) control(r *Request, held *pool.Lease) *pool.Lease {
	engine := r.Engine
	if engine == "" {
		engine = s.svc.DefaultEngine
	}
	if err := checkText("engine", engine, 64); err != nil {
		s.out.push(errorEvent(r.ID, err))
		return held
	}
	var perr *Error
	switch r.Type {
	case TypeSetOption:
		perr = checkText("name", r.Name, 64)
		if perr == nil {
			perr = checkText("value", r.Value, 256)
		}
	case TypeGameOver:
		if r.Result != "win" && r.Result != "lose" && r.Result != "draw" {
			perr = errorf(CodeInvalidField, "result %q: want win, lose or draw", clip(r.Result))
		}
	}
	if perr != nil {
		s.out.push(errorEvent(r.ID, perr))
		return held
	}
	lease, perr := s.lease(s.ctx, held, engine, r.ID)
	if perr != nil {
		s.out.push(errorEvent(r.ID, perr))
		return nil
	}
	var err error
	switch r.Type {
	case TypeSetOption:
		// An option no setoption undoes (a button such as Clear Hash, a
		// string) has the engine replaced after the lease: the client pays
		// for the replacement's start as engine time, so that pressing a
		// button in a loop is bounded by its budget like searching is.
		cost := lease.ReplacementCost(r.Name)
		if s.replacePaid || s.caller.Budget == nil {
			cost = 0
		}
		if cost > 0 {
			if wait := s.caller.Budget.Take(context.WithoutCancel(s.ctx), cost); wait > 0 {
				s.out.push(errorEvent(r.ID, budgetSpent(wait, "this client's engine time is spent (an option that has the engine replaced costs the replacement's start)")))
				return lease
			}
		}
		err = lease.SetOption(r.Name, r.Value)
		switch {
		case err != nil && cost > 0:
			s.caller.Budget.Charge(context.WithoutCancel(s.ctx), -cost) // not set: nothing to replace
		case cost > 0:
			s.replacePaid = true
		}
		if err == nil {
			s.clientOpts = true
			if !isButton(lease, r.Name) {
				s.keep(engine, r) // a button is an action, not a setting: never pressed again on a new lease
			}
			// Echo the value as the engine was sent it (5, not +5 or 05).
			v, ok := lease.Engine().OptionValue(r.Name)
			if !ok {
				v = r.Value
			}
			s.out.push(&Event{Type: EventOption, ID: r.ID, Name: r.Name, Value: v})
			return lease
		}
	case TypeNewGame:
		// usinewgame, never followed by isready: the GUIs' order, which some
		// engines insist on (they exit otherwise).
		err = lease.NewGame()
	case TypeGameOver:
		err = lease.GameOver(usi.GameResult(r.Result))
	}
	if err != nil {
		s.out.push(errorEvent(r.ID, controlError(err)))
		return lease
	}
	s.out.push(&Event{Type: EventReady, ID: r.ID})
	return lease
}

// isButton reports whether the leased engine advertises name as a button.
func isButton(l *pool.Lease, name string) bool {
	return slices.ContainsFunc(l.Engine().Options(), func(o usi.Option) bool { return o.Name == name && o.Type == usi.TypeButton })
}

// CheckOption refuses, with the code a session's setoption would get
// (option_not_allowed), an option a client may not set on engine.
func (c *Service) CheckOption(engine, name, value string) *Error {
	if c.Pool == nil {
		return nil
	}
	if err := c.Pool.CheckOption(engine, name, value); err != nil {
		return controlError(err)
	}
	return nil
}

func controlError(err error) *Error {
	switch {
	case errors.Is(err, pool.ErrOptionNotAllowed), errors.Is(err, usi.ErrBadCommand), errors.Is(err, usi.ErrUnknownOption):
		return errorf(CodeOptionNotAllowed, "%v", err)
	case errors.Is(err, usi.ErrBusy):
		return errorf(CodeBusy, "the engine is searching; stop first")
	}
	return errorf(CodeEngineError, "%v", err)
}
