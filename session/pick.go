// Choosing the engine for a mate request that names none, once the pool
// knows what each engine can do.

package session

import (
	"context"
	"strings"
	"time"
)

// pickMateEngine settles j.engine for a mate request that named no engine:
// the first engine whose profile says it solves mates, else the default
// engine (which answers notimplemented). While some engine is still being
// probed the answer could be wrong (its probe may find the only mate
// solver), so it waits for the probes, at most wait; waiting tells the
// caller through waiting (the engines still probed), which may be nil.
// When the probes outlast the wait and no known engine solves mates, it
// fails with no_engine and a retry: never notimplemented by mistake.
func (c *Service) pickMateEngine(ctx context.Context, j *job, wait time.Duration, waiting func(probing []string)) *Error {
	if !j.autoMate {
		return nil
	}
	if pending := c.Pool.Discovering(); len(pending) > 0 {
		if waiting != nil {
			waiting(pending)
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		err := c.Pool.WaitDiscovered(wctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return errorf(CodeCancelled, "the client went away while engines were probed")
		}
	}
	j.engine = c.mateEngine()
	if p := c.Pool.Profile(j.engine); p != nil && p.Checkmate {
		return nil
	}
	if pending := c.Pool.Discovering(); len(pending) > 0 {
		e := errorf(CodeNoEngine, "engines %s are still being probed; one of them may solve mates: retry", strings.Join(pending, ", "))
		e.Retry = 5 * time.Second
		return e
	}
	return nil
}
