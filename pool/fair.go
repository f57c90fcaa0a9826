package pool

import (
	"container/heap"
	"fmt"
	"math"
	"time"
)

// Class is a waiter's priority class. When an engine frees up, any
// Interactive waiter goes before any Background one.
type Class int

const (
	// Interactive is for a person waiting on the answer: WebSocket analysis,
	// play, mate, REST. The zero value.
	Interactive Class = iota
	// Background is for work nobody watches move by move (analysing a whole
	// game): it gets an engine only when no interactive caller waits.
	Background
	numClasses
)

// classes lists the classes in the order they are served.
var classes = [numClasses]Class{Interactive, Background}

func (c Class) String() string {
	switch c {
	case Interactive:
		return "interactive"
	case Background:
		return "background"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// AcquireOptions say who asks for an engine and how urgently.
type AcquireOptions struct {
	Class Class
	// Client identifies the caller for fair sharing (an API key, an
	// address); callers with the same Client share one turn. "" is a
	// client like any other.
	Client string
	// OnQueue, if not nil, is called in the caller's goroutine with the
	// caller's place in the order engines will be handed out (1 is next)
	// each time it changes.
	OnQueue func(position int)
}

// usageHalfLife is how fast a client's engine time is forgotten: engine
// time held a half-life ago counts half. It bounds both how long a client
// that used a lot stays behind and how much credit a client that used
// nothing for a while has over the others.
const usageHalfLife = time.Minute

// maxTracked bounds the clients whose engine time a kind remembers beyond
// those waiting or holding a lease. Forgetting a client only makes it look
// light, which costs fairness, never correctness.
const maxTracked = 4096

// usage is a client's engine time on a kind, decaying with usageHalfLife:
// its value at time t is sec * 2^-((t-at)/usageHalfLife).
type usage struct {
	sec  float64
	at   time.Time
	held int // leases of this kind the client holds now
	// others is what the client used on other instances, as the last
	// usage exchange found it at othersAt (Options.Usage), decaying alike.
	others   float64
	othersAt time.Time
}

func (u *usage) value(now time.Time) float64 {
	if u == nil || u.sec == 0 {
		return 0
	}
	return decay(u.sec, u.at, now)
}

func (u *usage) othersValue(now time.Time) float64 {
	if u == nil || u.others == 0 {
		return 0
	}
	return decay(u.others, u.othersAt, now)
}

func decay(sec float64, at, now time.Time) float64 {
	return sec * math.Exp2(-now.Sub(at).Seconds()/usageHalfLife.Seconds())
}

// queue is a kind's waiters: per class, per client, each client's in FIFO
// order. Guarded by kind.mu.
type queue struct {
	byClass [numClasses]map[string][]*waiter
	n       int // waiters in all classes
	count   [numClasses]int
	seq     uint64 // arrival counter: ties go to the earlier arrival
	usage   map[string]*usage
	// pending is the engine time charged since the last usage exchange,
	// per client; nil when the record is not shared.
	pending map[string]float64
	// meanHeld is a moving average of lease lengths, the guess of what
	// serving a waiter will cost when predicting places beyond the first.
	meanHeld float64
}

func (q *queue) init() {
	q.clear()
	q.usage = map[string]*usage{}
	q.meanHeld = 1
}

// clear empties the queue (its waiters told otherwise); usage stays.
func (q *queue) clear() {
	for c := range q.byClass {
		q.byClass[c] = map[string][]*waiter{}
	}
	q.n, q.count = 0, [numClasses]int{}
}

func (q *queue) push(w *waiter) {
	q.seq++
	w.seq = q.seq
	m := q.byClass[w.class]
	m[w.client] = append(m[w.client], w)
	q.n++
	q.count[w.class]++
}

// remove takes w out of the queue; it reports whether w was there.
func (q *queue) remove(w *waiter) bool {
	m := q.byClass[w.class]
	ws := m[w.client]
	for i, x := range ws {
		if x == w {
			if len(ws) == 1 {
				delete(m, w.client)
			} else {
				m[w.client] = append(ws[:i:i], ws[i+1:]...)
			}
			q.n--
			q.count[w.class]--
			return true
		}
	}
	return false
}

// next picks the waiter to serve: the first class with waiters; in it, the
// client with the least recent engine time; its oldest waiter. Ties go to
// the earlier arrival.
func (q *queue) next(now time.Time) *waiter {
	for _, c := range classes {
		var best *waiter
		var bestKey float64
		for id, ws := range q.byClass[c] {
			key := q.key(id, now)
			if best == nil || key < bestKey || key == bestKey && ws[0].seq < best.seq {
				best, bestKey = ws[0], key
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// order returns every waiter in the order engines will be handed out if
// nothing changes: next first, and beyond it each client's turn as if each
// lease cost meanHeld. Place 1 is exact; later places are the best guess,
// recomputed whenever something changes.
func (q *queue) order(now time.Time) []*waiter {
	out := make([]*waiter, 0, q.n)
	var served map[string]int // turns a client gets in the classes before
	for i, c := range classes {
		h := make(turns, 0, len(q.byClass[c]))
		for id, ws := range q.byClass[c] {
			h = append(h, turn{id: id, key: q.key(id, now) + float64(served[id])*q.meanHeld, ws: ws})
		}
		heap.Init(&h)
		if i+1 < len(classes) && q.count[classes[i+1]] > 0 && served == nil {
			served = map[string]int{}
		}
		for len(h) > 0 {
			t := &h[0]
			out = append(out, t.ws[0])
			if served != nil {
				served[t.id]++
			}
			t.ws = t.ws[1:]
			if len(t.ws) == 0 {
				heap.Pop(&h)
				continue
			}
			t.key += q.meanHeld
			heap.Fix(&h, 0)
		}
	}
	return out
}

// key is what orders clients: their recent engine time, with each lease
// they hold now counted as an average one until it ends and its real
// length replaces it (so that a client holding an engine does not get a
// second one before a client holding none).
func (q *queue) key(client string, now time.Time) float64 {
	u := q.usage[client]
	if u == nil {
		return 0
	}
	return u.value(now) + u.othersValue(now) + float64(u.held)*q.meanHeld
}

// granted records that client got a lease.
func (q *queue) granted(client string) {
	u := q.usage[client]
	if u == nil {
		u = &usage{}
		q.usage[client] = u
	}
	u.held++
}

// charge adds a finished lease's engine time to its client.
func (q *queue) charge(client string, held time.Duration, now time.Time) {
	u := q.usage[client]
	if u == nil {
		u = &usage{}
		q.usage[client] = u
	}
	u.sec = u.value(now) + held.Seconds()
	u.at = now
	if q.pending != nil {
		q.pending[client] += held.Seconds()
	}
	if u.held > 0 {
		u.held--
	}
	q.meanHeld += 0.2 * (held.Seconds() - q.meanHeld)
	if len(q.usage) > maxTracked+q.n {
		q.prune(now)
	}
}

// prune forgets clients that neither wait nor hold a lease: first those
// whose engine time has decayed to nothing, then any, until maxTracked.
func (q *queue) prune(now time.Time) {
	busy := func(id string) bool {
		if q.usage[id].held > 0 {
			return true
		}
		for c := range q.byClass {
			if len(q.byClass[c][id]) > 0 {
				return true
			}
		}
		return false
	}
	for id, u := range q.usage {
		if u.value(now)+u.othersValue(now) < 1e-3 && !busy(id) {
			delete(q.usage, id)
		}
	}
	for id := range q.usage {
		if len(q.usage) <= maxTracked {
			break
		}
		if !busy(id) {
			delete(q.usage, id)
		}
	}
}

// turn is one client's remaining waiters in a class, keyed by its
// (predicted) engine time.
type turn struct {
	id  string
	key float64
	ws  []*waiter
}

type turns []turn

func (h turns) Len() int { return len(h) }
func (h turns) Less(i, j int) bool {
	return h[i].key < h[j].key || h[i].key == h[j].key && h[i].ws[0].seq < h[j].ws[0].seq
}
func (h turns) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *turns) Push(x any)   { *h = append(*h, x.(turn)) }
func (h *turns) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
