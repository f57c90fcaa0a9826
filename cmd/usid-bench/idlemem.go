package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/fakeengine"
)

// (5) Memory per idle WebSocket connection: connections that opened a
// session and sent nothing, as a browser tab left open does. usid is a
// child process, so its RSS is its own; the Go heap and stacks come from
// its /metrics. Counts are reached in turn (1k, then 4k more, ...).
func benchIdleMemory(ctx context.Context, b *bench) (err error) {
	maxConns := b.idleConns[len(b.idleConns)-1]
	// Both ends hold one descriptor per connection; usid inherits the limit.
	limit, lerr := raiseNoFile(uint64(maxConns) + 1024)
	if limit < uint64(maxConns)+256 {
		return fmt.Errorf("open-file limit %d is too low for %d connections (%v); raise the hard limit (ulimit -Hn)", limit, maxConns, lerr)
	}
	// An engine is configured because usid needs one; idle sessions never lease it.
	u, err := b.startUsid(ctx, "idle", newConfig(b.fakeEngine("fake", fakeengine.Normal, 1)))
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)

	settle := time.Second
	if b.short {
		settle = 100 * time.Millisecond
	}
	measure := func() (rssB, goB int64, err error) {
		time.Sleep(settle)
		if rssB, err = rss(u.pid()); err != nil {
			return 0, 0, err
		}
		heap, err1 := u.metric(ctx, "go_memstats_heap_inuse_bytes")
		stack, err2 := u.metric(ctx, "go_memstats_stack_inuse_bytes")
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("usid /metrics: %v %v", err1, err2)
		}
		return rssB, int64(heap + stack), nil
	}
	baseRSS, baseGo, err := measure()
	if err != nil {
		return err
	}

	var conns []*websocket.Conn
	var readers sync.WaitGroup
	defer func() {
		closeConns(conns)
		readers.Wait()
	}()
	for _, n := range b.idleConns {
		more, err := dialMany(ctx, u.wsURL("/v1/ws"), n-len(conns), 64)
		if err != nil {
			return fmt.Errorf("at %d connections: %w", len(conns), err)
		}
		for _, c := range more {
			// Read, so that the client answers usid's pings like a browser.
			readers.Go(func() {
				for {
					if _, _, err := c.Read(context.Background()); err != nil {
						return
					}
				}
			})
		}
		conns = append(conns, more...)
		if err := waitSessions(ctx, u, n); err != nil {
			return err
		}
		r, g, err := measure()
		if err != nil {
			return err
		}
		perConn := func(now, base int64) float64 { return float64(now-base) / float64(n) / 1024 }
		what := fmt.Sprintf("memory, %d idle WebSocket connections", n)
		result := fmt.Sprintf("usid RSS %s (%.1f KB per connection over the %s at rest); Go heap+stacks %s (%.1f KB per connection)",
			mb(r), perConn(r, baseRSS), mb(baseRSS), mb(g), perConn(g, baseGo))
		if n == b.idleTarget {
			b.rep.add(what, result, "RSS ≤ 300 MB at 10k", verdict(r <= 300<<20))
		} else {
			b.rep.add(what, result, "", "")
		}
	}
	return nil
}

// waitSessions waits until usid counts n open sessions (usid_sessions).
func waitSessions(ctx context.Context, u *usidProc, n int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := u.metric(ctx, "usid_sessions")
		if err == nil && int(v) == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("usid has %v sessions, want %d (%v)", v, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
