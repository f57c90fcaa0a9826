package broadcast

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/usid/usid/session"
)

// backend keeps broadcasts and carries their batches: memory (this
// process) or Redis (every instance sharing it).
type backend interface {
	// create stores a new broadcast within the bounds (per owner, per
	// network of st.Networks, in all).
	create(ctx context.Context, st *State, b session.Bounds) *session.Error
	load(ctx context.Context, id string) (*State, *session.Error)
	// update changes a broadcast with f, atomically; a change that ends
	// it also takes it out of the bounds in the same step (it is
	// forgotten after Config.Keep).
	update(ctx context.Context, id string, f func(*State) *session.Error) (*State, *session.Error)
	// drop gives back the place of broadcast id (its state gone, invalid,
	// or ended while still counted), owner's if known: del, its keys go
	// too. True if the place was held: the caller tells the viewers.
	drop(ctx context.Context, id, owner string, del bool) bool
	// owns reports whether owner holds a place for id.
	owns(ctx context.Context, id, owner string) bool
	// poke tells the instance running id's search that it changed.
	poke(ctx context.Context, id string)
	// publishState sends batch b to every instance's viewers of id and
	// stores state (a batch of the position and lines it leaves).
	publishState(ctx context.Context, id string, b, state []byte)
	publish(ctx context.Context, id string, b []byte)
	snapshot(ctx context.Context, id string) ([]byte, *session.Error)
	addEval(ctx context.Context, id string, ply int, js []byte)
	evals(ctx context.Context, id string) ([]json.RawMessage, *session.Error)
	// nextSearch numbers the next search of id (0 on failure); searches
	// returns the last number given and the last whose terminal event went
	// out; claimTerm reports whether the caller is the one to send search
	// n's terminal event (once per search, whoever asks).
	nextSearch(ctx context.Context, id string) int
	searches(ctx context.Context, id string) (n, term int)
	// stored is what a hub is repaired from: the searches numbered and
	// ended, and whether the broadcast has ended (an error: it is gone,
	// invalid, or the store does not answer).
	stored(ctx context.Context, id string) (n, term int, ended bool, err *session.Error)
	claimTerm(ctx context.Context, id string, n int) bool
	// claimEnd reports whether the caller is the one to send id's ended
	// event (once per broadcast, whoever asks; true if the store does not
	// answer: told twice rather than never).
	claimEnd(ctx context.Context, id string) bool
	// The lease on running id's search.
	acquire(ctx context.Context, id string) bool
	renew(ctx context.Context, id string) bool
	release(ctx context.Context, id string)
	held(ctx context.Context, id string) bool
	// active lists the live broadcasts.
	active(ctx context.Context) []string
	// lossy reports whether batches can be lost on their way (pub/sub):
	// hubs are then repaired from the stored state.
	lossy() bool
	close()
}

// memory keeps broadcasts in this process.
type memory struct {
	m    *Manager
	mu   sync.Mutex
	bs   map[string]*memEntry
	live session.Places // the live ones, per owner and network
}

type memEntry struct {
	st       State
	search   int
	term     int
	snap     []byte
	evals    map[int]json.RawMessage
	held     bool
	live     bool
	endSent  bool
	forgetAt *time.Timer
}

func newMemory(m *Manager) *memory { return &memory{m: m, bs: map[string]*memEntry{}} }

func notFound(id string) *session.Error {
	return errorf(CodeNotFound, "no broadcast %q", clip(id))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func (b *memory) create(_ context.Context, st *State, bd session.Bounds) *session.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.live.Take(st.Owner, st.Networks, bd); f != nil {
		return full("broadcasts", f)
	}
	b.bs[st.ID] = &memEntry{st: *st, live: true, evals: map[int]json.RawMessage{}}
	return nil
}

func (b *memory) load(_ context.Context, id string) (*State, *session.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return nil, notFound(id)
	}
	st := e.st
	return &st, nil
}

func (b *memory) update(_ context.Context, id string, f func(*State) *session.Error) (*State, *session.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return nil, notFound(id)
	}
	st := e.st
	if err := f(&st); err != nil {
		return nil, err
	}
	e.st = st
	if st.Ended {
		b.endLocked(id, e)
	}
	return &st, nil
}

// endLocked takes e out of the bounds and forgets it after Keep; b.mu is held.
func (b *memory) endLocked(id string, e *memEntry) bool {
	if !e.live {
		return false
	}
	e.live = false
	b.live.Give(e.st.Owner, e.st.Networks)
	e.forgetAt = time.AfterFunc(b.m.cfg.Keep, func() {
		b.mu.Lock()
		delete(b.bs, id)
		b.mu.Unlock()
	})
	return true
}

func (b *memory) drop(_ context.Context, id, _ string, del bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return false
	}
	if del {
		delete(b.bs, id)
		return e.live
	}
	return b.endLocked(id, e)
}

func (b *memory) owns(_ context.Context, id, owner string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	return e != nil && e.live && e.st.Owner == owner
}

func (b *memory) poke(_ context.Context, id string) { b.m.poked(id) }

func (b *memory) publishState(ctx context.Context, id string, batch, state []byte) {
	b.mu.Lock()
	if e := b.bs[id]; e != nil {
		e.snap = state
	}
	b.mu.Unlock()
	b.publish(ctx, id, batch)
}

func (b *memory) publish(_ context.Context, id string, batch []byte) { b.m.deliver(id, batch) }

func (b *memory) snapshot(_ context.Context, id string) ([]byte, *session.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.bs[id]; e != nil {
		return e.snap, nil
	}
	return nil, notFound(id)
}

func (b *memory) addEval(_ context.Context, id string, ply int, js []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.bs[id]; e != nil {
		e.evals[ply] = js
	}
}

func (b *memory) evals(_ context.Context, id string) ([]json.RawMessage, *session.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return nil, notFound(id)
	}
	return sortedEvals(e.evals), nil
}

func sortedEvals(m map[int]json.RawMessage) []json.RawMessage {
	plies := make([]int, 0, len(m))
	for p := range m {
		plies = append(plies, p)
	}
	slices.Sort(plies)
	out := make([]json.RawMessage, 0, len(plies))
	for _, p := range plies {
		out = append(out, m[p])
	}
	return out
}

func (b *memory) nextSearch(_ context.Context, id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return 0
	}
	e.search++
	return e.search
}

func (b *memory) searches(_ context.Context, id string) (int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.bs[id]; e != nil {
		return e.search, e.term
	}
	return 0, 0
}

func (b *memory) stored(_ context.Context, id string) (int, int, bool, *session.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return 0, 0, false, notFound(id)
	}
	return e.search, e.term, e.st.Ended, nil
}

func (b *memory) claimTerm(_ context.Context, id string, n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil || e.term >= n {
		return false
	}
	e.term = n
	return true
}

func (b *memory) claimEnd(_ context.Context, id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil {
		return true
	}
	sent := e.endSent
	e.endSent = true
	return !sent
}

func (b *memory) acquire(_ context.Context, id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	if e == nil || e.held {
		return false
	}
	e.held = true
	return true
}

func (b *memory) renew(_ context.Context, id string) bool { return b.held(nil, id) }

func (b *memory) release(_ context.Context, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.bs[id]; e != nil {
		e.held = false
	}
}

func (b *memory) held(_ context.Context, id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.bs[id]
	return e != nil && e.held
}

// active is empty: in one process the runner starts with its broadcast,
// and a runner that stops (a drain) has no other instance to go to.
func (b *memory) active(context.Context) []string { return nil }

func (b *memory) lossy() bool { return false }

func (b *memory) close() {}
