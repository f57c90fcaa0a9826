package session

import (
	"context"
	"sync"
	"time"

	"github.com/usid/usid/pool"
)

// Budget is a caller's engine time: the server's engine-time quota of one
// client. Implementations are safe for concurrent use and may block
// briefly (a Redis call).
type Budget interface {
	// Take reserves d of engine time when the balance is above zero, in one
	// step with that check, and returns 0; otherwise it reserves nothing
	// and returns how long until the balance is above zero. d may be 0 (a
	// check).
	Take(ctx context.Context, d time.Duration) (retryAfter time.Duration)
	// TakeBackground is Take for background work (a Background caller's
	// searches): it reserves d only while the balance stays at or above
	// the share kept for interactive searches, so that a game analysis
	// never locks its owner out of live analysis.
	TakeBackground(ctx context.Context, d time.Duration) (retryAfter time.Duration)
	// TakeUpTo is Take (background: TakeBackground) for a search whose
	// limit is cut to the balance: where they would reserve d it reserves
	// at most the balance and returns what it reserved (granted).
	TakeUpTo(ctx context.Context, d time.Duration, background bool) (granted, retryAfter time.Duration)
	// Charge debits d more, or, negative, gives back time taken and not
	// used.
	Charge(ctx context.Context, d time.Duration)
}

// meterTick is how much engine time a search without a time bound takes
// at a time, as it goes.
const meterTick = time.Second

// meter charges one search's engine time to its caller, from go to
// bestmove. A search starts only while the caller's balance is above zero
// and takes, as it starts, what it may spend, never more than the balance
// (issue 35: a 10 s search on 5 s left ran 10 s): the whole of its time
// bound when it has one (movetime, a mate's timeout), so that searches
// queued on one balance cannot all start on it, or the balance when that
// is less, and the search's limit is then cut to it (cut); without one
// (until stop, depth or nodes alone, a game clock, pondering) a tick at a
// time as it goes, each at most the balance, and the search is stopped
// when what it took runs out and no more can be taken. When it ends, the
// real time is settled: what was taken and not used comes back.
//
// Pondering (go ponder) is the engine thinking on its opponent's time,
// which the player did not ask to be searched: it is charged to nobody
// (the operator offers it) until ponderhit, when the engine's own search
// begins and is charged as it goes from then (hit).
type meter struct {
	budget Budget
	bg     bool            // a Background caller: takes stop at the interactive share
	ctx    context.Context // outlives the request: time spent is charged

	mu        sync.Mutex // the search's watcher (more, hit, until) and its end (settle)
	start     time.Time
	taken     time.Duration
	pondering bool // go ponder, no ponderhit yet: nothing charged
	// cut: the balance was less than the search's time bound, and taken
	// (the balance) is its limit now.
	cut bool
}

// startMeter takes what a search with time bound bound (0: none) may spend
// before it starts, at most the caller's balance, or refuses it when that
// balance is spent. A ponder search takes nothing (it starts only while the
// balance is above zero).
func startMeter(ctx context.Context, who Caller, bound time.Duration, ponder bool) (*meter, *Error) {
	m := &meter{budget: who.Budget, bg: who.Class == pool.Background, ctx: context.WithoutCancel(ctx), pondering: ponder}
	if ponder {
		if m.budget != nil {
			take := m.budget.Take
			if m.bg {
				take = m.budget.TakeBackground
			}
			if wait := take(m.ctx, 0); wait > 0 { // a check: the balance is above zero
				return nil, budgetSpent(wait, spentWhy(m.bg))
			}
		}
		m.start = time.Now()
		return m, nil
	}
	d := bound
	if d <= 0 {
		d = meterTick
	}
	m.taken = d
	if m.budget != nil {
		g, wait := m.budget.TakeUpTo(m.ctx, d, m.bg)
		if wait > 0 {
			return nil, budgetSpent(wait, spentWhy(m.bg))
		}
		m.taken, m.cut = g, bound > 0 && g < bound
	}
	m.start = time.Now()
	return m, nil
}

// more takes the next tick, at most the balance, for a search without a
// time bound; it returns the wait announced when the balance is spent
// (the search is to stop).
func (m *meter) more() (retryAfter time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.budget == nil || m.pondering {
		return 0
	}
	g, wait := m.budget.TakeUpTo(m.ctx, meterTick, m.bg)
	if wait > 0 {
		return wait
	}
	m.taken += g
	return 0
}

// hit starts charging a ponder search at ponderhit: the engine's own time
// from now, a tick (at most the balance) taken at once. It returns the wait
// announced when the balance is spent (the search is to stop).
func (m *meter) hit() (retryAfter time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pondering {
		return 0
	}
	m.pondering, m.start = false, time.Now()
	if m.budget == nil {
		return 0
	}
	g, wait := m.budget.TakeUpTo(m.ctx, meterTick, m.bg)
	if wait > 0 {
		return wait
	}
	m.taken = g
	return 0
}

// until is how long from now the time taken lasts (a tick while pondering:
// nothing is taken then, and nothing runs out).
func (m *meter) until() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pondering {
		return meterTick
	}
	return time.Until(m.start.Add(m.taken))
}

// settle charges the engine time the search held and returns it; a
// preempted search is charged nothing (it gave its engine away and will be
// searched again: the caller pays once, for the search that answers).
func (m *meter) settle(preempted bool) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	held := time.Since(m.start)
	if m.budget != nil {
		spent := held
		if preempted || m.pondering {
			spent = 0
		}
		if d := spent - m.taken; d != 0 {
			m.budget.Charge(m.ctx, d)
		}
	}
	return held
}

// budgetSpent is the error for a search refused, or stopped, because its
// caller's engine time is spent; wait is rounded up to whole seconds, as
// Retry-After says it.
func budgetSpent(wait time.Duration, why string) *Error {
	wait = wait.Truncate(time.Second) + time.Second
	if why == "" {
		why = "this client's engine time is spent"
	}
	e := errorf(CodeTooManyRequests, "%s; retry in %ds", why, int(wait.Seconds()))
	e.Retry = wait
	return e
}

// checkBudget refuses a search at once when who's balance is spent, before
// it waits for an engine it could not use.
func checkBudget(ctx context.Context, who Caller) *Error {
	if who.Budget == nil {
		return nil
	}
	take := who.Budget.Take
	if who.Class == pool.Background {
		take = who.Budget.TakeBackground
	}
	if wait := take(context.WithoutCancel(ctx), 0); wait > 0 {
		return budgetSpent(wait, spentWhy(who.Class == pool.Background))
	}
	return nil
}

// spentWhy says what is spent: for background work, the budget but for the
// share kept for the client's interactive searches.
func spentWhy(background bool) string {
	if background {
		return "this client's engine time is spent but for the share kept for its live analysis"
	}
	return ""
}
