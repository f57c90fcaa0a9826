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
	// measure reads usid's RSS and, from its /metrics, the Go heap and
	// stacks and the goroutine count: where the memory goes.
	type mem struct{ rss, heap, stack, goroutines int64 }
	measure := func() (m mem, err error) {
		time.Sleep(settle)
		if m.rss, err = rss(u.pid()); err != nil {
			return m, err
		}
		for _, x := range []struct {
			name string
			to   *int64
		}{{"go_memstats_heap_inuse_bytes", &m.heap}, {"go_memstats_stack_inuse_bytes", &m.stack}, {"go_goroutines", &m.goroutines}} {
			v, err := u.metric(ctx, x.name)
			if err != nil {
				return m, fmt.Errorf("usid /metrics: %w", err)
			}
			*x.to = int64(v)
		}
		return m, nil
	}
	base, err := measure()
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
		m, err := measure()
		if err != nil {
			return err
		}
		per := func(now, base int64) float64 { return float64(now-base) / float64(n) }
		what := fmt.Sprintf("memory, %d idle WebSocket connections", n)
		result := fmt.Sprintf("usid RSS %s (%.1f KB per connection over %s at rest); per connection: Go heap %.1f KB, stacks %.1f KB, %.1f goroutines",
			mb(m.rss), per(m.rss, base.rss)/1024, mb(base.rss), per(m.heap, base.heap)/1024, per(m.stack, base.stack)/1024, per(m.goroutines, base.goroutines))
		if n == b.idleTarget {
			b.rep.add(what, result, "RSS ≤ 150 MB at 10k", verdict(m.rss <= 150<<20))
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

// dialMany opens n WebSocket connections, at most par at a time.
func dialMany(ctx context.Context, url string, n, par int) ([]*websocket.Conn, error) {
	conns := make([]*websocket.Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			conns[i], _, errs[i] = websocket.Dial(dctx, url, nil)
		})
	}
	wg.Wait()
	var ok []*websocket.Conn
	var first error
	for i, c := range conns {
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
		if c != nil {
			ok = append(ok, c)
		}
	}
	if first != nil {
		closeConns(ok)
		return nil, fmt.Errorf("dialing %d connections: %w", n, first)
	}
	return ok, nil
}

// closeConns closes connections the quick way: no close handshake to wait for.
func closeConns(conns []*websocket.Conn) {
	for _, c := range conns {
		c.CloseNow()
	}
}
