package pool

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/usi"
)

// pending is a caller waiting in the queue, run in its own goroutine.
type pending struct {
	name   string
	cancel context.CancelFunc
	done   chan pendingResult

	mu     sync.Mutex
	places []int // every place OnQueue reported, in order
}

type pendingResult struct {
	who string
	l   *Lease
	err error
}

func (w *pending) last() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.places) == 0 {
		return 0
	}
	return w.places[len(w.places)-1]
}

// enqueue starts a caller of the given client and class, and returns once
// it waits in the queue (so that arrivals are ordered). Its results go to
// granted, in the order the pool hands out engines.
func enqueue(t *testing.T, p *Pool, engine, name, client string, class Class, granted chan pendingResult) *pending {
	t.Helper()
	before := status(p, engine).Queue
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	w := &pending{name: name, cancel: cancel, done: make(chan pendingResult, 1)}
	go func() {
		l, err := p.AcquireWith(ctx, engine, AcquireOptions{Client: client, Class: class, OnQueue: func(n int) {
			w.mu.Lock()
			w.places = append(w.places, n)
			w.mu.Unlock()
		}})
		r := pendingResult{name, l, err}
		if granted != nil && err == nil {
			granted <- r
		}
		w.done <- r
	}()
	testwait.For(t, name+" in the queue", 30*time.Second, func() bool { return status(p, engine).Queue == before+1 })
	return w
}

// waitPlaces waits until each caller's latest reported place is the one
// wanted: places are told asynchronously.
func waitPlaces(t *testing.T, want map[*pending]int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok := true
		for w, n := range want {
			if w.last() != n {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			got := map[string]int{}
			exp := map[string]int{}
			for w, n := range want {
				got[w.name], exp[w.name] = w.last(), n
			}
			t.Fatalf("places %v, want %v", got, exp)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serveInOrder releases holder, then each lease as soon as it is granted,
// and returns who got the engine, in order.
func serveInOrder(t *testing.T, holder *Lease, granted chan pendingResult, n int) []string {
	t.Helper()
	holder.Release()
	var order []string
	for range n {
		select {
		case r := <-granted:
			order = append(order, r.who)
			r.l.Release()
		case <-time.After(10 * time.Second):
			t.Fatalf("no grant after %v", order)
		}
	}
	return order
}

// TestClassOrder: interactive waiters go before background ones whatever
// the order they came in, and are told so. A client's engine time counts
// across classes: x, served as an interactive caller, then lets z's
// background request go before its own.
func TestClassOrder(t *testing.T) {
	p, reg := newPool(t, fake(fakeengine.Normal, 1))
	waitIdle(t, p, "fake", 1)
	holder := acquire(t, p, "fake")
	granted := make(chan pendingResult, 8)
	b1 := enqueue(t, p, "fake", "b1", "x", Background, granted)
	i1 := enqueue(t, p, "fake", "i1", "y", Interactive, granted)
	b2 := enqueue(t, p, "fake", "b2", "z", Background, granted)
	i2 := enqueue(t, p, "fake", "i2", "x", Interactive, granted)
	waitPlaces(t, map[*pending]int{i1: 1, i2: 2, b2: 3, b1: 4})
	if got := metric(reg, "usid_pool_queue_length", map[string]string{"engine": "fake", "class": "background"}); got != 2 {
		t.Errorf("background queue length %v, want 2", got)
	}
	if got := metric(reg, "usid_pool_queue_length", map[string]string{"engine": "fake", "class": "interactive"}); got != 2 {
		t.Errorf("interactive queue length %v, want 2", got)
	}
	if got := serveInOrder(t, holder, granted, 4); !slices.Equal(got, []string{"i1", "i2", "b2", "b1"}) {
		t.Errorf("served %v, want i1 i2 b2 b1", got)
	}
	for _, c := range []string{"interactive", "background"} {
		if n := metric(reg, "usid_pool_lease_wait_seconds", map[string]string{"engine": "fake", "class": c}); n < 2 {
			t.Errorf("%s waits observed: %v, want 2 or more", c, n)
		}
	}
}

// TestClientsTakeTurns: client a queued five requests before b and c came;
// b and c do not wait for all of a's.
func TestClientsTakeTurns(t *testing.T) {
	p, _ := newPool(t, fake(fakeengine.Normal, 1))
	waitIdle(t, p, "fake", 1)
	holder := acquire(t, p, "fake")
	granted := make(chan pendingResult, 8)
	var as []*pending
	for i := range 5 {
		as = append(as, enqueue(t, p, "fake", fmt.Sprintf("a%d", i+1), "a", Interactive, granted))
	}
	b := enqueue(t, p, "fake", "b", "b", Interactive, granted)
	c := enqueue(t, p, "fake", "c", "c", Interactive, granted)
	waitPlaces(t, map[*pending]int{as[0]: 1, b: 2, c: 3, as[1]: 4, as[2]: 5, as[3]: 6, as[4]: 7})
	got := serveInOrder(t, holder, granted, 7)
	if want := []string{"a1", "b", "c", "a2", "a3", "a4", "a5"}; !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
}

// TestCancelKeepsOrder: a waiter that gives up leaves the others' order
// intact, and those behind it move up.
func TestCancelKeepsOrder(t *testing.T) {
	p, _ := newPool(t, fake(fakeengine.Normal, 1))
	waitIdle(t, p, "fake", 1)
	holder := acquire(t, p, "fake")
	granted := make(chan pendingResult, 8)
	a1 := enqueue(t, p, "fake", "a1", "a", Interactive, granted)
	a2 := enqueue(t, p, "fake", "a2", "a", Interactive, granted)
	a3 := enqueue(t, p, "fake", "a3", "a", Interactive, granted)
	b := enqueue(t, p, "fake", "b", "b", Interactive, granted)
	c := enqueue(t, p, "fake", "c", "c", Interactive, granted)
	waitPlaces(t, map[*pending]int{a1: 1, b: 2, c: 3, a2: 4, a3: 5})
	b.cancel()
	if r := <-b.done; r.err == nil {
		t.Fatal("cancelled waiter got a lease")
	}
	a1.cancel()
	<-a1.done
	waitPlaces(t, map[*pending]int{a2: 1, c: 2, a3: 3})
	if got := serveInOrder(t, holder, granted, 3); !slices.Equal(got, []string{"a2", "c", "a3"}) {
		t.Errorf("served %v, want a2 c a3", got)
	}
}

// TestLightClientGoesNext: four clients that held a real engine for long
// searches and one that held it briefly; with the heavy ones waiting, the
// light client comes last yet is next, so that it waits at most for the
// search in progress.
func TestLightClientGoesNext(t *testing.T) {
	needBinary(t, fairyPath)
	p, _ := newPool(t, fairy(1))
	waitIdle(t, p, "fairy", 1)
	searchAs := func(client string, movetime time.Duration) *Lease {
		t.Helper()
		l, err := p.AcquireWith(t.Context(), "fairy", AcquireOptions{Client: client})
		if err != nil {
			t.Fatal(err)
		}
		search(t, l, usi.Go{MoveTime: movetime})
		return l
	}
	heavy := []string{"h1", "h2", "h3", "h4"}
	for _, h := range heavy {
		searchAs(h, 200*time.Millisecond).Release()
	}
	// The lease was held at least from Acquire's return to Release's call
	// (not the movetime: fairy may answer a 20 ms search in 19.7).
	l, err := p.AcquireWith(t.Context(), "fairy", AcquireOptions{Client: "light"})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	search(t, l, usi.Go{MoveTime: 20 * time.Millisecond})
	atLeast := time.Since(since)
	l.Release()
	if l.Held() < atLeast || l.Client() != "light" || l.Class() != Interactive {
		t.Errorf("light lease: held %v (at least %v), client %q, class %v", l.Held(), atLeast, l.Client(), l.Class())
	}

	holder := searchAs("h1", 200*time.Millisecond)
	granted := make(chan pendingResult, 8)
	var ws []*pending
	defer func() {
		for _, w := range ws {
			w.cancel()
		}
	}()
	for _, h := range heavy[1:] {
		ws = append(ws, enqueue(t, p, "fairy", h, h, Interactive, granted))
	}
	light := enqueue(t, p, "fairy", "light", "light", Interactive, granted)
	// The heavy clients' order among themselves depends on how long each
	// search really took; the light client's place does not.
	waitPlaces(t, map[*pending]int{light: 1})
	testwait.For(t, "the heavy clients at places 2, 3 and 4", 30*time.Second, func() bool {
		places := map[int]bool{}
		for _, w := range ws {
			places[w.last()] = true
		}
		return len(places) == 3 && !places[1]
	})
	if got := serveInOrder(t, holder, granted, 4); got[0] != "light" {
		t.Errorf("served %v, want light first", got)
	}
}

// TestHeld: a lease knows how long it held its engine, for whom.
func TestHeld(t *testing.T) {
	p, _ := newPool(t, fake(fakeengine.Normal, 1))
	waitIdle(t, p, "fake", 1)
	l, err := p.AcquireWith(t.Context(), "fake", AcquireOptions{Client: "k", Class: Background})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	l.Release()
	held := l.Held()
	if held < 30*time.Millisecond {
		t.Errorf("Held() = %v after 30ms", held)
	}
	time.Sleep(10 * time.Millisecond)
	if l.Held() != held {
		t.Errorf("Held() moved after release: %v, then %v", held, l.Held())
	}
	if l.Client() != "k" || l.Class() != Background || l.Class().String() != "background" {
		t.Errorf("client %q class %v", l.Client(), l.Class())
	}
	if _, err := p.AcquireWith(t.Context(), "fake", AcquireOptions{Class: 7}); err == nil {
		t.Error("AcquireWith accepted class 7")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestWanted: a lease learns that someone waits for its kind, and only
// then: not while an engine is idle.
func TestWanted(t *testing.T) {
	p, _ := newPool(t, fake(fakeengine.Normal, 2))
	waitIdle(t, p, "fake", 2)
	first := acquire(t, p, "fake")
	if isClosed(first.Wanted()) {
		t.Fatal("Wanted closed with no one waiting")
	}
	second := acquire(t, p, "fake") // the idle one: nobody waits
	if isClosed(first.Wanted()) || isClosed(second.Wanted()) {
		t.Fatal("Wanted closed after a caller got an idle engine")
	}
	wanted := first.Wanted()
	w := enqueue(t, p, "fake", "w", "other", Background, nil)
	select {
	case <-wanted:
	case <-time.After(5 * time.Second):
		t.Fatal("Wanted not closed with a caller waiting")
	}
	if !isClosed(second.Wanted()) {
		t.Error("Wanted of the other lease not closed")
	}
	first.Release() // what a session with an idle lease does
	r := <-w.done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if isClosed(second.Wanted()) {
		t.Error("Wanted still closed after the waiter was served")
	}
	// A waiter that gives up: the next Wanted is open again.
	w = enqueue(t, p, "fake", "w2", "other", Interactive, nil)
	if !isClosed(second.Wanted()) {
		t.Error("Wanted not closed for the second waiter")
	}
	w.cancel()
	<-w.done
	if isClosed(second.Wanted()) {
		t.Error("Wanted still closed after the waiter gave up")
	}
	r.l.Release()
	second.Release()
}

// BenchmarkLightVsHeavy: four clients keep one engine busy with long
// leases; a fifth asks for a short one at intervals. It reports the light
// client's wait (p50, p99) as a fraction of a heavy lease, shared fairly
// (each client its own) and in one FIFO (every caller the same client):
// fair sharing should keep the p99 at about one heavy lease or less, FIFO
// near four.
func BenchmarkLightVsHeavy(b *testing.B) {
	const heavy, light = 20 * time.Millisecond, 2 * time.Millisecond
	for _, mode := range []string{"fair", "fifo"} {
		b.Run(mode, func(b *testing.B) {
			c := fake(fakeengine.Normal, 1)
			p, err := New([]EngineConfig{c}, Options{ProfileDir: profileDir})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background())
			deadline := time.Now().Add(20 * time.Second)
			for status(p, "fake").Idle != 1 {
				if time.Now().After(deadline) {
					b.Fatal("engine did not start")
				}
				time.Sleep(5 * time.Millisecond)
			}
			client := func(name string) string {
				if mode == "fifo" {
					return ""
				}
				return name
			}
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Go(func() {
					for ctx.Err() == nil {
						l, err := p.AcquireWith(ctx, "fake", AcquireOptions{Client: client(fmt.Sprint("heavy", i))})
						if err != nil {
							return
						}
						time.Sleep(heavy)
						l.Release()
					}
				})
			}
			time.Sleep(5 * heavy) // the heavy clients fill the queue
			var waits []time.Duration
			for b.Loop() {
				start := time.Now()
				l, err := p.AcquireWith(ctx, "fake", AcquireOptions{Client: client("light")})
				if err != nil {
					b.Fatal(err)
				}
				waits = append(waits, time.Since(start))
				time.Sleep(light)
				l.Release()
				time.Sleep(heavy - light)
			}
			stop()
			wg.Wait()
			slices.Sort(waits)
			pct := func(q float64) float64 {
				return float64(waits[int(q*float64(len(waits)-1))]) / float64(heavy)
			}
			b.ReportMetric(pct(0.5), "p50-wait/heavy")
			b.ReportMetric(pct(0.99), "p99-wait/heavy")
		})
	}
}

// BenchmarkQueueOrder: what recomputing every waiter's place costs, as the
// pool does on each arrival, departure, grant and charge, with a full
// default queue (64 waiters of 16 clients, both classes).
func BenchmarkQueueOrder(b *testing.B) {
	var q queue
	q.init()
	now := time.Now()
	for i := range 64 {
		client := fmt.Sprint("c", i%16)
		q.push(&waiter{client: client, class: Class(i % 2)})
		q.charge(client, time.Duration(i)*time.Millisecond, now)
	}
	for b.Loop() {
		if len(q.order(now)) != 64 {
			b.Fatal("lost waiters")
		}
	}
}

// TestUrgent: Urgent closes for an Interactive waiter only, and opens again
// once none waits.
func TestUrgent(t *testing.T) {
	p, _ := newPool(t, fake(fakeengine.Normal, 1))
	waitIdle(t, p, "fake", 1)
	held := acquire(t, p, "fake")
	bg := enqueue(t, p, "fake", "bg", "job", Background, nil)
	if !isClosed(held.Wanted()) {
		t.Fatal("Wanted not closed with a background caller waiting")
	}
	if isClosed(held.Urgent()) {
		t.Fatal("Urgent closed for a background caller")
	}
	fg := enqueue(t, p, "fake", "fg", "person", Interactive, nil)
	if !isClosed(held.Urgent()) {
		t.Fatal("Urgent not closed with an interactive caller waiting")
	}
	held.Release() // the interactive caller goes first
	r := <-fg.done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if isClosed(r.l.Urgent()) {
		t.Error("Urgent still closed with only a background caller left")
	}
	r.l.Release()
	if r := <-bg.done; r.err != nil {
		t.Fatal(r.err)
	} else {
		r.l.Release()
	}
}
