package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

func info(id string, multipv, depth int, pv ...string) *Event {
	return &Event{Type: EventInfo, ID: id, MultiPV: multipv, Depth: depth, PV: pv}
}

// TestOutboxCoalesces: unsent infos of a line collapse into the latest, with
// the pv of an earlier one kept when the latest has none; other events stay
// in order and are never dropped.
func TestOutboxCoalesces(t *testing.T) {
	o := newOutbox(1000, 1000, 100)
	o.push(info("a", 1, 1, "7g7f"))
	o.push(info("a", 2, 1, "2g2f"))
	o.push(info("a", 1, 2, "7g7f", "3c3d"))
	o.push(&Event{Type: EventInfo, ID: "a", MultiPV: 1, Nodes: 5000}) // a heartbeat without pv
	o.push(&Event{Type: EventBestMove, ID: "a", Move: "7g7f"})
	o.push(info("b", 1, 1, "2g2f"))
	got, err := o.next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Type+"/"+e.ID)
	}
	want := []string{"info/a", "info/a", "bestmove/a", "info/b"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("got %v, want %v", kinds, want)
		}
	}
	if l1 := got[0]; l1.MultiPV != 1 || l1.Depth != 2 || len(l1.PV) != 2 || l1.Nodes != 5000 {
		t.Errorf("merged line 1 = %+v, want depth 2, its pv, and the heartbeat's nodes", l1)
	}
}

// TestOutboxKeepsCachedLine: a live line does not replace an unsent cached
// line of the same multipv, however slowly the client reads; later live
// lines coalesce among themselves.
func TestOutboxKeepsCachedLine(t *testing.T) {
	o := newOutbox(1000, 1000, 100)
	cached := info("a", 1, 18, "7g7f", "3c3d")
	cached.Cached = true
	o.push(cached)
	o.push(info("a", 1, 1, "2g2f"))
	o.push(info("a", 1, 2, "2g2f", "8c8d"))
	got, err := o.next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Cached || got[0].Depth != 18 || got[1].Cached || got[1].Depth != 2 {
		t.Fatalf("got %d events %+v, want the cached depth-18 line, then live depth 2", len(got), got)
	}
}

func TestOutboxDropInfo(t *testing.T) {
	o := newOutbox(1000, 1000, 100)
	o.push(info("old", 1, 5, "7g7f"))
	o.push(&Event{Type: EventBestMove, ID: "old", Move: "7g7f"})
	o.push(info("new", 1, 1, "2g2f"))
	o.dropInfo("old")
	got, _ := o.next(context.Background())
	if len(got) != 2 || got[0].Type != EventBestMove || got[1].ID != "new" {
		t.Errorf("after dropInfo(old): %v", got)
	}
}

// TestOutboxRate: infos come in batches at a bounded rate; a bestmove skips the wait.
func TestOutboxRate(t *testing.T) {
	o := newOutbox(10, 1, 100) // one batch per 100ms
	o.push(info("a", 1, 1))
	if b, _ := o.next(context.Background()); len(b) != 1 {
		t.Fatalf("first batch %v", b)
	}
	o.push(info("a", 1, 2))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if b, err := o.next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second batch came at once: %v %v", b, err)
	}
	o.push(&Event{Type: EventBestMove, ID: "a"})
	if b, err := o.next(context.Background()); err != nil || len(b) != 2 {
		t.Fatalf("with a bestmove queued: %v %v, want both events at once", b, err)
	}
}

// TestOutboxSlowClient: too many undelivered must-deliver events close it.
func TestOutboxSlowClient(t *testing.T) {
	o := newOutbox(1000, 1000, 3)
	for i := range 3 {
		if !o.push(&Event{Type: EventQueued, Position: i}) {
			t.Fatal("refused too early")
		}
	}
	if o.push(&Event{Type: EventBestMove}) {
		t.Fatal("the 4th pending event was accepted")
	}
	if _, err := o.next(context.Background()); !errors.Is(err, ErrSlowClient) {
		t.Errorf("next = %v, want ErrSlowClient", err)
	}
}

func TestOutboxClose(t *testing.T) {
	o := newOutbox(1000, 1000, 100)
	o.push(&Event{Type: EventBestMove, ID: "a"})
	o.close()
	if b, err := o.next(context.Background()); err != nil || len(b) != 1 {
		t.Errorf("queued events are delivered after close: %v %v", b, err)
	}
	if _, err := o.next(context.Background()); err == nil {
		t.Error("next after the last event: no error")
	}
}

// TestReady: the ready callback runs for every queued event and at close,
// and Pending says whether next has something.
func TestReady(t *testing.T) {
	o := newOutbox(1000, 10, 10)
	calls := 0
	o.ready = func() { calls++ }
	if o.pending() {
		t.Fatal("pending with nothing queued")
	}
	o.push(&Event{Type: EventInfo, ID: "a", Depth: 1})
	o.push(&Event{Type: EventInfo, ID: "a", Depth: 2}) // merged into the queued one: no new wake-up
	if calls != 1 || !o.pending() {
		t.Fatalf("after two pushes: %d calls, pending %v; want 1, true", calls, o.pending())
	}
	if evs, err := o.next(t.Context()); err != nil || len(evs) != 1 || evs[0].Depth != 2 {
		t.Fatalf("next: %v %v", evs, err)
	}
	if o.pending() {
		t.Fatal("pending after next took everything")
	}
	o.close()
	if calls != 2 || !o.pending() {
		t.Fatalf("after close: %d calls, pending %v; want 2, true", calls, o.pending())
	}
}
