package pool

import (
	"maps"
	"slices"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// EngineStatus describes one engine kind for operators and clients.
type EngineStatus struct {
	Name          string
	ID            usi.ID       // from the latest engine that started; zero before
	Options       []usi.Option // as the engine advertised them
	ClientOptions map[string]OptionRule
	// Levels are the strengths it plays at (see Levels), weakest first;
	// none before its options are known, or without a strength option.
	Levels     []Level
	Profile    *probe.Profile // nil until known
	LastError  string         // why the engine last failed to start, with its own words
	Instances  int            // configured
	Idle       int
	Busy       int
	Starting   int
	Resetting  int // released, being checked before reuse
	Checking   int // idle, answering a health check
	Queue      int // callers waiting
	Available  bool
	RetryAfter time.Duration // when not Available
}

// Status returns the state of every engine kind, in configuration order.
func (p *Pool) Status() []EngineStatus {
	out := make([]EngineStatus, 0, len(p.names))
	for _, name := range p.names {
		k := p.kinds[name]
		k.mu.Lock()
		st := EngineStatus{
			Name:          name,
			ID:            k.id,
			Options:       slices.Clone(k.options),
			ClientOptions: maps.Clone(k.cfg.ClientOptions),
			Levels:        k.levelsLocked(),
			Profile:       k.profile,
			LastError:     k.lastErr,
			Instances:     k.cfg.Instances,
			Idle:          k.counts[stateIdle],
			Busy:          k.counts[stateBusy],
			Starting:      k.counts[stateStarting],
			Resetting:     k.counts[stateResetting],
			Checking:      k.counts[stateChecking],
			Queue:         k.q.n,
			Available:     !k.down() && !k.closed,
		}
		if k.down() {
			st.RetryAfter = time.Until(k.downUntil)
		}
		k.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// levelsLocked is the kind's levels, from the options its latest engine
// advertised; k.mu is held.
func (k *kind) levelsLocked() []Level {
	proto := k.cfg.Protocol
	if k.profile != nil && k.profile.Protocol != "" {
		proto = k.profile.Protocol
	}
	return Levels(k.options, k.cfg.ClientOptions, proto)
}
