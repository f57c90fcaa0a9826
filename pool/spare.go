// The probe's engine, kept to serve. An engine that is slow to get ready
// (nshogi loads an 8 GB evaluation cache on isready: a minute) would
// otherwise be started twice before its first search: once for the probe,
// once for its slot. The probe gives its last engine to the kind
// (probe.Config.Keep), and the first slot to start an engine takes it
// instead, once nothing the probe did can change what a client gets:
//
//   - every option is set back to what a fresh start sets (the configured
//     value, USI_Hash and USI_Ponder as applyOptions sends them, else the
//     advertised default): the probe sets USI_AnalyseMode, UCI_AnalyseMode
//     and USI_OwnBook for its searches; an option that differs and holds
//     more than a value (a string, a filename, a button) cannot be set
//     back, and the engine is closed and a fresh one started;
//   - its game ends and the next begins as after a lease that played
//     (newGame: gameover, isready where the profile says it is cheap,
//     usinewgame), so the first lease finds a fresh game, as from a fresh
//     start; what the engine's hash holds of the probe's positions is what
//     it would hold of any earlier lease's analyses (one game goes on
//     across analyses, see Lease.Go);
//   - it logs as a serving engine, no longer as the probe's.
//
// A kept engine no slot took (the pool closed first) is closed by Close.

package pool

import (
	"context"
	"fmt"
	"time"

	"github.com/usid/usid/usi"
)

// keepSpare takes the probe's last engine for the first slot.
func (k *kind) keepSpare(eng *usi.Engine) {
	k.mu.Lock()
	old := k.spare
	k.spare = eng
	k.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// closeSpare closes a kept engine no slot took.
func (k *kind) closeSpare() {
	k.mu.Lock()
	eng := k.spare
	k.spare = nil
	k.mu.Unlock()
	if eng != nil {
		eng.Close()
	}
}

// takeSpare makes the probe's engine a serving instance, reset as the
// file's doc says, or returns nil (there is none, or it could not be
// reset: then it is closed, and the slot starts a fresh one).
func (k *kind) takeSpare(ctx context.Context) *instance {
	k.mu.Lock()
	eng := k.spare
	k.spare = nil
	k.mu.Unlock()
	if eng == nil {
		return nil
	}
	eng.Relabel(k.log, "")
	// It searched since its usinewgame: newGame ends that game first.
	in := &instance{eng: eng, born: time.Now(), retire: make(chan string, 1), inGame: true, played: true}
	k.mu.Lock()
	k.setState(in, stateStarting)
	k.mu.Unlock()
	err := k.resetOptions(eng)
	if err == nil {
		sctx, cancel := context.WithTimeout(ctx, k.cfg.Timeouts.Ready)
		err = k.newGame(sctx, in)
		cancel()
	}
	k.mu.Lock()
	if err != nil {
		k.setState(in, "")
	} else {
		k.id, k.options = eng.ID(), eng.Options()
		if p := k.profile; p != nil {
			k.startTook = time.Duration(p.ReadyFirstMS) * time.Millisecond
		}
	}
	k.mu.Unlock()
	if err != nil {
		k.log.Info("the probe's engine does not serve; starting a fresh one", "pid", eng.PID(), "why", err)
		eng.Close()
		return nil
	}
	k.log.Info("engine ready", "pid", eng.PID(), "id", eng.ID().Name, "from", "the probe")
	return in
}

// resetOptions sets every advertised option whose value differs from what
// a fresh start sets back to it; it fails on one that holds more than a
// value.
func (k *kind) resetOptions(eng *usi.Engine) error {
	start := k.startValues(eng.Options())
	for _, o := range eng.Options() {
		if o.Type == usi.TypeButton {
			continue
		}
		want, ok := start[o.Name]
		if !ok {
			want = o.Default
		}
		if cur, _ := eng.OptionValue(o.Name); cur == want {
			continue
		}
		if !restorable(eng, o.Name) {
			return fmt.Errorf("option %s (%s) changed, and it cannot be set back", o.Name, o.Type)
		}
		if err := eng.SetOption(o.Name, want); err != nil {
			return fmt.Errorf("setting option %s back: %w", o.Name, err)
		}
	}
	return nil
}
