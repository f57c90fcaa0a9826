package pool

import (
	"context"
	"time"
)

// UsageExchange shares the fair queue's record of clients' recent engine
// time between instances of usid (Options.Usage), so that a client whose
// requests are spread over many instances is ordered by all it used, not
// by the part one instance saw. quota.UsageRecord keeps it in Redis.
//
// The record is only ever a hint for ordering: an exchange that fails or
// comes late costs fairness, never correctness.
type UsageExchange interface {
	// Exchange adds, for each client in add, that many seconds of engine
	// time used on kind just now to the shared record, and returns the
	// shared record of every client in add or ask: its engine time on kind
	// over all instances, decayed with halfLife to now.
	Exchange(ctx context.Context, kind string, halfLife time.Duration, add map[string]float64, ask []string) (map[string]float64, error)
}

// DefaultUsageSync is how often a pool exchanges its record when
// Options.UsageSync is zero.
const DefaultUsageSync = time.Second

// shareUsage exchanges every kind's record each interval until ctx ends.
func (p *Pool) shareUsage(ctx context.Context, x UsageExchange, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, name := range p.names {
			p.kinds[name].exchangeUsage(ctx, x, every)
		}
	}
}

// exchangeUsage sends the engine time charged since the last exchange and
// learns what the clients that matter now (waiting, holding an engine, or
// just charged) used on other instances.
func (k *kind) exchangeUsage(ctx context.Context, x UsageExchange, within time.Duration) {
	k.mu.Lock()
	add := k.q.pending
	k.q.pending = map[string]float64{}
	ask := k.q.active()
	k.mu.Unlock()
	if len(add) == 0 && len(ask) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, within)
	got, err := x.Exchange(cctx, k.cfg.Name, usageHalfLife, add, ask)
	cancel()
	if err != nil {
		// What was added is lost to the other instances' view: fairness
		// only, and the next exchange carries on.
		k.log.Debug("fair queue: usage exchange failed", "err", err)
		return
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.q.others(got, now)
	if k.q.n > 0 {
		k.renumberLocked()
	}
}

// active lists the clients whose place in the queue matters now: those
// waiting and those holding an engine.
func (q *queue) active() []string {
	var out []string
	seen := map[string]bool{}
	for c := range q.byClass {
		for id := range q.byClass[c] {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	for id, u := range q.usage {
		if u.held > 0 && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// others records the shared record's values: what each client used on
// other instances is the shared value less what this instance added to it
// (its own record, without what was charged since the exchange began).
func (q *queue) others(shared map[string]float64, now time.Time) {
	for id, g := range shared {
		u := q.usage[id]
		if u == nil {
			if g < 1e-3 || !q.waiting(id) {
				continue
			}
			u = &usage{} // a client seen only elsewhere so far
			q.usage[id] = u
		}
		mine := u.value(now) - q.pending[id]
		u.others, u.othersAt = max(0, g-mine), now
	}
}

func (q *queue) waiting(client string) bool {
	for c := range q.byClass {
		if len(q.byClass[c][client]) > 0 {
			return true
		}
	}
	return false
}
