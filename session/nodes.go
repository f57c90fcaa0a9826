// Emulated node limits on engines that report rarely.

package session

import (
	"sync"
	"time"

	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// minRateSpan is the shortest search time a speed is computed over.
const minRateSpan = 100 * time.Millisecond

// nodeStop stops an emulated "nodes" search close to its limit even when the
// engine prints few info lines (Apery prints one now and then: waiting for
// a line past the limit searched 8× too many nodes). It estimates the nodes
// searched by now from the last count the engine reported and its speed -
// the nps it reports, else its count over its time, else the speed the
// probe measured - and stops the search when the estimate reaches the
// limit. Each info line corrects the estimate, so the error is that of the
// speed over the time since the last line, not the time between lines.
// Safe for concurrent use (the timer fires on its own goroutine).
type nodeStop struct {
	mu     sync.Mutex
	limit  int64
	nps    float64   // nodes per second; 0 while unknown
	nodes  int64     // the last count reported
	at     time.Time // when it was read (the go, before any)
	timer  *time.Timer
	stop   func()
	closed bool
}

// newNodeStop starts the estimate at the go, sent at start, with the probed
// speed (0: none; the search then stops at the first line past the limit).
func newNodeStop(limit, probedNPS int64, start time.Time, stop func()) *nodeStop {
	n := &nodeStop{limit: limit, nps: float64(probedNPS), at: start, stop: stop}
	n.mu.Lock()
	n.armLocked()
	n.mu.Unlock()
	return n
}

// seen takes an info line read at now: its nodes and, for the speed, its
// nps or time.
func (n *nodeStop) seen(in *usi.Info, now time.Time, searchStart time.Time) {
	if !in.Has(usi.InfoNodes) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || in.Nodes < n.nodes {
		return
	}
	n.nodes, n.at = in.Nodes, now
	// A speed over a few milliseconds says little (the first lines come at
	// once): below minRateSpan the previous speed stands.
	switch {
	case in.Has(usi.InfoNPS) && in.NPS > 0:
		n.nps = float64(in.NPS)
	case in.Has(usi.InfoTime) && in.Time >= minRateSpan.Milliseconds():
		n.nps = float64(in.Nodes) * 1000 / float64(in.Time)
	case now.Sub(searchStart) >= minRateSpan && in.Nodes > 0:
		n.nps = float64(in.Nodes) / now.Sub(searchStart).Seconds()
	}
	n.armLocked()
}

// armLocked sets the timer for when the estimate reaches the limit.
func (n *nodeStop) armLocked() {
	if n.timer != nil {
		n.timer.Stop()
	}
	if n.nps <= 0 {
		return
	}
	d := time.Duration(float64(n.limit-n.nodes) / n.nps * float64(time.Second))
	n.timer = time.AfterFunc(time.Until(n.at.Add(d)), n.stop)
}

// close stops the timer.
func (n *nodeStop) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	if n.timer != nil {
		n.timer.Stop()
	}
}

// checkNative reports a native nodes limit that the engine overshot
// (probe.NodesOvershot): the pool then emulates it on this engine kind
// from the next search on.
func (c *Service) checkNative(lease *pool.Lease, p searchPlan, reached int64) {
	if p.cmd.Nodes > 0 && probe.NodesOvershot(p.cmd.Nodes, reached) {
		c.Logger.Warn("engine overshot a native nodes limit; emulating it from now on", "engine", lease.Name(), "limit", p.cmd.Nodes, "searched", reached)
		lease.Overshot("nodes", p.cmd.Nodes, reached)
	}
}
