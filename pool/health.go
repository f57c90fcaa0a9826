// Health. A slot watches its engine process (exit, and its state in /proc)
// while it is idle or leased.

package pool

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"time"
)

// watch returns when in must be replaced, with the reason, or "" when ctx
// ends. While in is idle its process is checked every HealthInterval, at no
// cost to the engine (no isready: some engines re-initialise on it).
func (k *kind) watch(ctx context.Context, in *instance) string {
	t := time.NewTicker(k.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-in.eng.Done():
			return reasonCrash
		case r := <-in.retire:
			return r
		case <-t.C:
			if r := k.check(in); r != "" {
				return r
			}
		}
	}
}

// check retires an idle engine whose process is stopped (SIGSTOP, a
// debugger) or a zombie, or that is due for recycling. A leased engine is
// its holder's to judge, by the answer to its next search.
func (k *kind) check(in *instance) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !slices.Contains(k.idle, in) {
		return ""
	}
	if st := procState(in.eng.PID()); st == 'T' || st == 't' || st == 'Z' {
		k.takeIdleLocked(in)
		k.log.Warn("idle engine is not running", "pid", in.eng.PID(), "state", string(st))
		return reasonUnhealthy
	}
	if k.cfg.MaxAge > 0 && time.Since(in.born) >= k.cfg.MaxAge {
		k.takeIdleLocked(in)
		return reasonRecycle
	}
	return ""
}

// procState returns the state letter of a process from /proc (R, S, D, T,
// t, Z, ...), or 0 where it cannot be read.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
