package quota

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time for the memory store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// TestMemoryArithmetic: a client starts full, may start a search while its
// balance is above zero, goes into debt by what its searches held, and is
// told exactly when the refill brings it back above zero.
func TestMemoryArithmetic(t *testing.T) {
	ck := newClock()
	m := NewMemory(MemoryConfig{Now: ck.now})
	ctx := t.Context()
	b := Budget{Seconds: 10, Period: time.Minute, Burst: 20} // 1/6 engine-second per second, 20 saved
	if d := m.Allow(ctx, "a", b); d != 0 {
		t.Fatalf("new client refused for %v", d)
	}
	m.Charge(ctx, "a", b, 15*time.Second)
	if d := m.Allow(ctx, "a", b); d != 0 {
		t.Fatalf("balance 5s refused for %v", d)
	}
	m.Charge(ctx, "a", b, 10*time.Second) // balance -5s
	if d := m.Allow(ctx, "a", b); d != 30001*time.Millisecond {
		t.Fatalf("balance -5s: retry after %v, want 30.001s (5s at 1/6 per second, rounded up)", d)
	}
	if d := m.Allow(ctx, "b", b); d != 0 {
		t.Errorf("another client refused for %v", d)
	}
	ck.advance(30 * time.Second) // balance exactly 0: not above it
	if d := m.Allow(ctx, "a", b); d <= 0 || d > 2*time.Millisecond {
		t.Errorf("balance 0: retry after %v, want about 1ms", d)
	}
	ck.advance(30001*time.Millisecond - 30*time.Second)
	if d := m.Allow(ctx, "a", b); d != 0 {
		t.Errorf("after the retry-after: still refused for %v", d)
	}
	// The balance never rises above Burst: after an hour, 20s, not 600s.
	ck.advance(time.Hour)
	m.Charge(ctx, "a", b, 20*time.Second)
	if d := m.Allow(ctx, "a", b); d != 1*time.Millisecond {
		t.Errorf("after saving an hour and spending Burst: retry after %v, want 1ms", d)
	}
	if m.Len() != 1 {
		t.Errorf("Len %d, want 1", m.Len())
	}
	// Refilled buckets are dropped at the next sweep of their shard, which a
	// new client in that shard starts: the first of the 200 is in a's.
	ck.advance(time.Hour)
	first := "c0"
	for i := 0; m.shard(first) != m.shard("a"); i++ {
		first = fmt.Sprint("x", i)
	}
	for i := range 200 {
		name := fmt.Sprint("c", i)
		if i == 0 {
			name = first
		}
		m.Charge(ctx, name, b, time.Second)
	}
	if m.Len() != 200 {
		t.Errorf("Len %d after the full bucket's sweep, want 200", m.Len())
	}
}

func TestBudgetDefaults(t *testing.T) {
	ck := newClock()
	m := NewMemory(MemoryConfig{Now: ck.now})
	ctx := t.Context()
	b := Budget{Seconds: 6} // per minute, Burst 6
	m.Charge(ctx, "a", b, 12*time.Second)
	if d := m.Allow(ctx, "a", b); d != 60001*time.Millisecond {
		t.Errorf("retry after %v, want 60.001s", d)
	}
	for _, u := range []Budget{{}, {Seconds: 0, Burst: 5}} {
		m.Charge(ctx, "u", u, time.Hour)
		if d := m.Allow(ctx, "u", u); d != 0 || !u.Unlimited() {
			t.Errorf("%+v: refused for %v; want no limit", u, d)
		}
	}
	for _, bad := range []Budget{{Seconds: -1}, {Seconds: 1, Period: -time.Second}, {Seconds: 1, Burst: -1}} {
		if bad.Check() == nil {
			t.Errorf("%+v passes Check", bad)
		}
	}
	if (Budget{Seconds: 1, Period: time.Second, Burst: 3}).Check() != nil {
		t.Error("a good budget fails Check")
	}
}

// TestMemoryBounded: past MaxClients, new clients share one bucket rather
// than grow the table.
func TestMemoryBounded(t *testing.T) {
	ck := newClock()
	m := NewMemory(MemoryConfig{Now: ck.now, MaxClients: 2})
	ctx := t.Context()
	b := Budget{Seconds: 1, Period: time.Hour, Burst: 10}
	m.Charge(ctx, "a", b, time.Second)
	m.Charge(ctx, "b", b, time.Second)
	m.Charge(ctx, "c", b, 11*time.Second)
	if m.Len() != 2 {
		t.Errorf("Len %d, want 2", m.Len())
	}
	if d := m.Allow(ctx, "d", b); d == 0 {
		t.Error("a client past MaxClients is not held to the shared bucket's debt")
	}
	if d := m.Allow(ctx, "a", b); d != 0 {
		t.Errorf("a tracked client refused for %v", d)
	}
}

// FuzzMemory: whatever the sequence of waits and searches, the engine time
// admitted over a span T is at most Burst + T*rate + the longest search
// (a search starts only with a positive balance, and may then overdraw it
// by its own length), and the balance never exceeds Burst.
func FuzzMemory(f *testing.F) {
	f.Add([]byte{0, 0, 10, 0, 0, 0, 0, 200})
	f.Add([]byte{255, 255, 0, 1, 3, 0, 0, 9, 0, 0, 9, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ck := newClock()
		m := NewMemory(MemoryConfig{Now: ck.now})
		ctx := context.Background()
		b := Budget{Seconds: 2, Period: 10 * time.Second, Burst: 5}
		var span, admitted, longest time.Duration
		for ; len(ops) >= 4; ops = ops[4:] {
			wait := time.Duration(binary.BigEndian.Uint16(ops)) * time.Millisecond
			held := time.Duration(binary.BigEndian.Uint16(ops[2:])) * time.Millisecond
			ck.advance(wait)
			span += wait
			if m.Allow(ctx, "c", b) != 0 {
				continue
			}
			m.Charge(ctx, "c", b, held)
			admitted += held
			longest = max(longest, held)
			if admitted.Seconds() > b.capacity()+span.Seconds()*b.rate()+longest.Seconds()+1e-6 {
				t.Fatalf("admitted %v over %v: more than the budget allows", admitted, span)
			}
		}
		sh := m.shard("c")
		if k := sh.m["c"]; k != nil && k.balance(ck.now(), b) > b.capacity() {
			t.Fatalf("balance %v above Burst", k.balance(ck.now(), b))
		}
	})
}

// FuzzTake: searches that take what they may spend as they start and give
// back what they did not use (or pay what they ran over) are admitted
// within the same bound as FuzzMemory's, counted in the time they really
// used, and the balance never exceeds Burst.
func FuzzTake(f *testing.F) {
	f.Add([]byte{0, 0, 10, 0, 0, 1, 0, 0, 0, 200, 0, 10})
	f.Add([]byte{255, 255, 0, 1, 3, 0, 0, 0, 9, 0, 0, 9, 9, 9, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ck := newClock()
		m := NewMemory(MemoryConfig{Now: ck.now})
		ctx := context.Background()
		b := Budget{Seconds: 2, Period: 10 * time.Second, Burst: 5}
		var span, used, longest time.Duration
		for ; len(ops) >= 6; ops = ops[6:] {
			wait := time.Duration(binary.BigEndian.Uint16(ops)) * time.Millisecond
			reserve := time.Duration(binary.BigEndian.Uint16(ops[2:])) * time.Millisecond
			held := time.Duration(binary.BigEndian.Uint16(ops[4:])) * time.Millisecond
			ck.advance(wait)
			span += wait
			if m.Take(ctx, "c", b, reserve) != 0 {
				continue
			}
			m.Charge(ctx, "c", b, held-reserve)
			used += held
			longest = max(longest, held)
			if used.Seconds() > b.capacity()+span.Seconds()*b.rate()+longest.Seconds()+1e-6 {
				t.Fatalf("used %v over %v: more than the budget allows", used, span)
			}
		}
		sh := m.shard("c")
		if k := sh.m["c"]; k != nil && k.balance(ck.now(), b) > b.capacity()+1e-9 {
			t.Fatalf("balance %v above Burst", k.balance(ck.now(), b))
		}
	})
}

func BenchmarkMemory(b *testing.B) {
	m := NewMemory(MemoryConfig{})
	bud := Budget{Seconds: 1e6, Period: time.Second, Burst: 1e6}
	ctx := context.Background()
	b.Run("Allow", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.Allow(ctx, clients[i%len(clients)], bud)
				i++
			}
		})
	})
	b.Run("Charge", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.Charge(ctx, clients[i%len(clients)], bud, time.Millisecond)
				i++
			}
		})
	})
}

var clients = func() []string {
	c := make([]string, 1000)
	for i := range c {
		c[i] = fmt.Sprint("ip:10.0.", i/256, ".", i%256)
	}
	return c
}()

// testTake: a search that starts takes what it may spend in one step with
// the check, so that of concurrent searches on one positive balance only
// those that find it above zero start; time given back restores the
// balance, never above the capacity (issue 25: four queued 10 s searches
// on a 5 s budget all started).
func testTake(t *testing.T, s Store) {
	ctx := t.Context()
	b := Budget{Seconds: 5, Period: time.Hour, Burst: 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	started := 0
	for range 4 {
		wg.Go(func() {
			if s.Take(ctx, "ip:a", b, 10*time.Second) == 0 {
				mu.Lock()
				started++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if started != 1 {
		t.Fatalf("%d of four 10 s searches took a 5 s balance, want 1", started)
	}
	if d := s.Take(ctx, "ip:a", b, 0); d < 59*time.Minute {
		t.Errorf("balance -5s: a check says retry after %v, want about 1h", d)
	}
	// The search ended after 2 s: 8 s come back (balance 3 s).
	s.Charge(ctx, "ip:a", b, -8*time.Second)
	if d := s.Take(ctx, "ip:a", b, 4*time.Second); d != 0 {
		t.Fatalf("after the refund: refused for %v", d)
	}
	if d := s.Take(ctx, "ip:a", b, time.Second); d == 0 {
		t.Errorf("balance -1 s after taking 4 s of 3 s: a take passed")
	}
	// Giving back more than was taken stops at the capacity.
	s.Charge(ctx, "ip:a", b, -time.Hour)
	s.Take(ctx, "ip:a", b, 6*time.Second)
	if d := s.Take(ctx, "ip:a", b, 0); d == 0 {
		t.Errorf("the balance rose above the capacity (5 s) after a large refund")
	}
	// A client never seen is full, and a check or a refund makes no bucket.
	s.Charge(ctx, "ip:new", b, -time.Second)
	if d := s.Take(ctx, "ip:new", b, 0); d != 0 {
		t.Errorf("a new client refused for %v", d)
	}
}

func TestMemoryTake(t *testing.T) {
	m := NewMemory(MemoryConfig{Now: newClock().now})
	testTake(t, m)
	if m.Len() != 1 {
		t.Errorf("Len %d, want 1 (checks and refunds of full clients keep nothing)", m.Len())
	}
}

// testTakeBackground: background work (game analyses) stops at the share
// kept for interactive searches, which may then spend it (issue 26: a
// forgotten game analysis locked its owner out of live analysis).
func testTakeBackground(t *testing.T, s Store) {
	ctx := t.Context()
	b := Budget{Seconds: 8, Period: time.Hour, Burst: 8} // reserve: 2 s
	if got := b.Reserve(); got != 2 {
		t.Fatalf("Reserve %v, want 2 (the default quarter of 8)", got)
	}
	taken := 0
	for s.TakeBackground(ctx, "ip:j", b, time.Second) == 0 {
		if taken++; taken > 10 {
			t.Fatal("background takes never stop")
		}
	}
	if taken != 6 {
		t.Errorf("background took %d s of 8, want 6 (down to the 2 s kept for interactive searches)", taken)
	}
	if d := s.TakeBackground(ctx, "ip:j", b, 0); d != 0 {
		t.Errorf("a background check at the reserve's edge (balance 2 s): refused for %v", d)
	}
	// Refused: the wait is until the balance is 3 s (1 s at 8 per hour).
	if d := s.TakeBackground(ctx, "ip:j", b, time.Second); d < 440*time.Second || d > 451*time.Second {
		t.Errorf("a refused background take: retry after %v, want about 450s (1 s at 8 s per hour)", d)
	}
	// Interactive searches spend the reserve, and past zero are refused
	// (-0.5 s: Redis's clock refills a little meanwhile).
	for i, d := range []time.Duration{time.Second, 1500 * time.Millisecond} {
		if w := s.Take(ctx, "ip:j", b, d); w != 0 {
			t.Fatalf("interactive take %d of the reserve: refused for %v", i, w)
		}
	}
	if d := s.Take(ctx, "ip:j", b, time.Second); d == 0 {
		t.Error("an interactive take passed at balance -0.5 s")
	}
	// A search longer than the unreserved part needs a full bucket.
	s.Charge(ctx, "ip:j", b, -time.Hour)
	if d := s.TakeBackground(ctx, "ip:j", b, 7*time.Second); d != 0 {
		t.Errorf("a 7 s background search on a full 8 s bucket: refused for %v", d)
	}
	if d := s.TakeBackground(ctx, "ip:j", b, 0); d == 0 {
		t.Error("a background check passed at balance 1 s, inside the reserve")
	}
	// No share kept: background takes while the balance is above zero, as
	// Take does (8, 5, 2: three takes of 3 s).
	none := Budget{Seconds: 8, Period: time.Hour, Burst: 8, InteractiveShare: -1}
	n := 0
	for s.TakeBackground(ctx, "ip:none", none, 3*time.Second) == 0 && n < 10 {
		n++
	}
	if n != 3 {
		t.Errorf("no interactive share: background took 3 s %d times from 8 s, want 3", n)
	}
}

func TestMemoryTakeBackground(t *testing.T) {
	testTakeBackground(t, NewMemory(MemoryConfig{Now: newClock().now}))
}

func TestBudgetShare(t *testing.T) {
	for _, c := range []struct {
		share, want float64
		ok          bool
	}{{0, 0.25, true}, {0.5, 0.5, true}, {1, 1, true}, {-1, 0, true}, {1.5, 1, false}} {
		b := Budget{Seconds: 4, InteractiveShare: c.share}
		if got := b.Share(); got != c.want || (b.CheckShare() == nil) != c.ok || b.Unlimited() {
			t.Errorf("share %v: Share %v, CheckShare %v, unlimited %v; want %v, ok %v, limited", c.share, got, b.CheckShare(), b.Unlimited(), c.want, c.ok)
		}
	}
}

// testTakeUpTo (issue 35): a search whose limit is cut to what is left
// takes at most the balance. Four 10 s searches on a 5 s balance: one is
// granted 5 s (not 10), the balance is then zero and the others are
// refused; a background one stops at the share kept for interactive
// searches and is cut only where its search is longer than the bucket.
func testTakeUpTo(t *testing.T, s Store) {
	ctx := t.Context()
	b := Budget{Seconds: 5, Period: time.Hour, Burst: 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var grants []time.Duration
	for range 4 {
		wg.Go(func() {
			if g, w := s.TakeUpTo(ctx, "ip:u", b, 10*time.Second, false); w == 0 {
				mu.Lock()
				grants = append(grants, g)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(grants) != 1 || grants[0] < 4990*time.Millisecond || grants[0] > 5*time.Second {
		t.Fatalf("four 10 s searches on a 5 s balance were granted %v, want one of 5 s", grants)
	}
	if g, d := s.TakeUpTo(ctx, "ip:u", b, time.Second, false); d == 0 {
		t.Errorf("after a grant of the whole balance another take was granted %v", g)
	}
	// A grant smaller than the balance is the whole of it.
	s.Charge(ctx, "ip:u", b, -time.Hour)
	if g, w := s.TakeUpTo(ctx, "ip:u", b, 2*time.Second, false); w != 0 || g != 2*time.Second {
		t.Errorf("2 s of 5: granted %v (wait %v), want 2 s", g, w)
	}
	// Background: the level is as TakeBackground's; a search longer than
	// the bucket, on a full one, is cut to it.
	bg := Budget{Seconds: 8, Period: time.Hour, Burst: 8} // reserve 2 s
	if g, w := s.TakeUpTo(ctx, "ip:v", bg, 12*time.Second, true); w != 0 || g < 7990*time.Millisecond || g > 8*time.Second {
		t.Errorf("a 12 s background search on a full 8 s bucket: granted %v (wait %v), want 8 s", g, w)
	}
	s.Charge(ctx, "ip:v", bg, -3*time.Second) // balance 3 s
	if g, w := s.TakeUpTo(ctx, "ip:v", bg, 2*time.Second, true); w == 0 {
		t.Errorf("a 2 s background search at balance 3 s, reserve 2 s: granted %v", g)
	}
}

func TestMemoryTakeUpTo(t *testing.T) {
	testTakeUpTo(t, NewMemory(MemoryConfig{Now: newClock().now}))
}
