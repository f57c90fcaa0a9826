package broadcast

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	_ "github.com/usid/usid/game/builtin"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// fakeViewer records what a hub sends it; full makes it refuse (a viewer
// too slow to take more).
type fakeViewer struct {
	mu     sync.Mutex
	got    [][]byte
	full   bool
	closed int // 0 open, 1 closed normally, 2 dropped
}

func (v *fakeViewer) Send(b []byte) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.full {
		return false
	}
	v.got = append(v.got, b)
	return true
}

func (v *fakeViewer) Close(why CloseReason) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = 2
	if why != TooSlow {
		v.closed = 1
	}
}

func (v *fakeViewer) sends() [][]byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([][]byte(nil), v.got...)
}

// newTestManager is a Manager in memory whose broadcasts have no engine to
// run on: their searches end in an error at once; the tests feed batches.
func newTestManager(t *testing.T, tweak func(*Config)) *Manager {
	cfg := Config{Service: session.NewService(session.Config{}), Check: 10 * time.Millisecond, noSearch: true}
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func testBatch(search int, lines ...int) []byte {
	var b batch
	b.add(kindPosition, search, 0, fmt.Appendf(nil, `{"type":"position","search":%d}`, search))
	for _, k := range lines {
		b.add(kindInfo, search, k, fmt.Appendf(nil, `{"type":"info","multipv":%d,"search":%d}`, k, search))
	}
	return b.bytes()
}

// TestFanoutOneEncoding: every viewer of a batch gets the very same bytes
// (one framing for all), and a viewer that cannot take them is dropped
// without holding the others up.
func TestFanoutOneEncoding(t *testing.T) {
	m := newTestManager(t, func(c *Config) { c.MaxViewersPerClient = 100 })
	v, err := m.Create("owner", &Request{})
	if err != nil {
		t.Fatal(err)
	}
	vs := make([]*fakeViewer, 5)
	for i := range vs {
		vs[i] = &fakeViewer{}
		if _, err := m.Watch("viewer", v.ID, vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	vs[2].mu.Lock()
	vs[2].full = true
	vs[2].mu.Unlock()
	m.deliver(v.ID, testBatch(7, 1, 2))
	m.deliver(v.ID, testBatch(8, 1))
	for _, i := range []int{0, 1, 3, 4} {
		testwait.For(t, "both batches", 5*time.Second, func() bool {
			return bytes.Contains(bytes.Join(vs[i].sends(), nil), []byte(`"search":8`))
		})
	}
	first := func(v *fakeViewer) []byte {
		for _, b := range v.sends() {
			if bytes.Contains(b, []byte(`"search":7`)) {
				return b
			}
		}
		return nil
	}
	a, b := first(vs[0]), first(vs[4])
	if a == nil || &a[0] != &b[0] {
		t.Errorf("viewers got different copies of one batch")
	}
	if !bytes.Contains(a, []byte(`"multipv":2`)) || a[0] != 0x81 {
		t.Errorf("batch frames: % x", a[:min(len(a), 16)])
	}
	testwait.For(t, "the slow viewer dropped", 5*time.Second, func() bool {
		vs[2].mu.Lock()
		defer vs[2].mu.Unlock()
		return vs[2].closed == 2
	})
	if n := m.hubOf(v.ID, false).count(); n != 4 {
		t.Errorf("%d viewers left, want 4", n)
	}
}

// TestLateJoiner: a viewer that joins gets the current position and its
// latest line per multipv at once, not the lines of searches before.
func TestLateJoiner(t *testing.T) {
	m := newTestManager(t, nil)
	v, err := m.Create("owner", &Request{})
	if err != nil {
		t.Fatal(err)
	}
	early := &fakeViewer{}
	if _, err := m.Watch("a", v.ID, early); err != nil {
		t.Fatal(err)
	}
	m.deliver(v.ID, testBatch(5, 1, 2))
	m.deliver(v.ID, testBatch(6, 2))
	testwait.For(t, "the batches", 5*time.Second, func() bool {
		return bytes.Contains(bytes.Join(early.sends(), nil), []byte(`"search":6`))
	})
	late := &fakeViewer{}
	if _, err := m.Watch("b", v.ID, late); err != nil {
		t.Fatal(err)
	}
	got := late.sends()
	if len(got) != 1 {
		t.Fatalf("late joiner got %d sends, want 1 (the state)", len(got))
	}
	s := string(got[0])
	if !bytes.Contains(got[0], []byte(`{"type":"position","search":6}`)) || !bytes.Contains(got[0], []byte(`{"type":"info","multipv":2,"search":6}`)) ||
		bytes.Contains(got[0], []byte(`"search":5`)) {
		t.Errorf("late joiner's state: %q", s)
	}
	view, _ := m.Get(v.ID)
	if len(view.Lines) != 1 {
		t.Errorf("GET lines %s", view.Lines)
	}
}

// TestBounds: broadcasts per client and in all, viewers per client and per
// instance.
func TestBounds(t *testing.T) {
	m := newTestManager(t, func(c *Config) {
		c.MaxPerClient, c.MaxBroadcasts, c.MaxViewersPerClient, c.MaxViewers = 1, 2, 2, 3
	})
	v, err := m.Create("a", &Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("a", &Request{}); err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("a second broadcast of one client: %v", err)
	}
	if _, err := m.Create("b", &Request{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("c", &Request{}); err == nil || err.Code != session.CodeQueueFull {
		t.Errorf("a third broadcast in all: %v", err)
	}
	if _, err := m.Moves("b", v.ID, []string{"7g7f"}, nil); err == nil || err.Code != CodeNotOwner {
		t.Errorf("moves by another client: %v", err)
	}
	var unwatch []func()
	for _, c := range []string{"x", "x", "y"} {
		u, err := m.Watch(c, v.ID, &fakeViewer{})
		if err != nil {
			t.Fatal(err)
		}
		unwatch = append(unwatch, u)
	}
	if _, err := m.Watch("x", v.ID, &fakeViewer{}); err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("a third viewer of one client: %v", err)
	}
	if _, err := m.Watch("z", v.ID, &fakeViewer{}); err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("a fourth viewer on the instance: %v", err)
	}
	unwatch[0]()
	if _, err := m.Watch("z", v.ID, &fakeViewer{}); err != nil {
		t.Errorf("a viewer after one left: %v", err)
	}
	if _, err := m.End("a", v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("a", &Request{}); err != nil {
		t.Errorf("a new broadcast after the first ended: %v", err)
	}
}
