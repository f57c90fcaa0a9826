package broadcast

import (
	"fmt"
	"maps"
	"slices"
)

// Repair: batches travel over pub/sub (Redis), which drops what is sent
// while an instance's link is down. What they carry is also stored (the
// snapshot, the search numbers, the end), so a hub that may have missed
// some is brought in line from the store: when its instance's
// subscription comes back, every repairEvery, and at once when a line
// arrives whose position it never got. A repair delivers what the hub
// lacks as a batch of this instance only; the hub's keep sends each event
// to the viewers once, whichever way it came.

// repairEvery is how often every hub is repaired, in Checks.
const repairEvery = 4

// repairSoon repairs h in the background (once at a time); h.mu is held.
func (m *Manager) repairSoon(h *hub) {
	if h.repairing || !m.be.lossy() {
		return
	}
	h.repairing = true
	go m.repair(h) // bounded by the store's call timeout, and by m.ctx

}

// repairAll repairs every hub of this instance.
func (m *Manager) repairAll() {
	m.mu.Lock()
	hubs := slices.Collect(maps.Values(m.hubs))
	m.mu.Unlock()
	for _, h := range hubs {
		h.mu.Lock()
		busy := h.repairing
		h.repairing = true
		h.mu.Unlock()
		if !busy {
			m.repair(h)
		}
	}
}

// repair brings h in line with the stored state: ended (or gone) ends it;
// a newer search, a missed position or terminal event comes from the
// snapshot.
func (m *Manager) repair(h *hub) {
	defer func() {
		h.mu.Lock()
		h.repairing = false
		h.mu.Unlock()
	}()
	n, term, ended, err := m.be.stored(m.ctx, h.id)
	if err != nil && err.Code != CodeNotFound && err.Code != CodeInvalid {
		return // the store does not answer: the next repair
	}
	if err != nil || ended {
		var b batch
		b.add(kindEnded, 0, 0, fmt.Appendf(nil, `{"type":"ended","id":%q}`, h.id))
		m.deliver(h.id, b.bytes())
		return
	}
	h.mu.Lock()
	need := n > h.search || h.pos == nil || term >= h.search && h.term == nil
	h.mu.Unlock()
	if !need {
		return
	}
	snap, serr := m.be.snapshot(m.ctx, h.id)
	if serr != nil {
		return
	}
	// Only what the stored state holds: a snapshot as written, in order.
	var b batch
	for _, it := range parseStored(snap) {
		b.add(it.kind, it.search, it.mpv, it.json)
	}
	if len(b.bytes()) > 0 {
		m.deliver(h.id, b.bytes())
	}
}
