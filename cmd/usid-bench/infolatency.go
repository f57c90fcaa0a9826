package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/fakeengine"
)

// (2) Latency from an engine writing an info line to a WebSocket client
// reading it. The fake engine stamps each line with its wall clock
// ("string t=<unix ns>"); the client, on the same machine and clock,
// subtracts it from the time it read the message. One engine per session
// (instances = sessions), each session analysing until stop.
func benchInfoLatency(ctx context.Context, b *bench) error {
	mode := fakeengine.StampedInfo + "=" + b.stampInterval.String()
	for _, n := range b.infoSessions {
		b.log.Printf("      %d sessions", n)
		lat, err := b.infoRun(ctx, n, mode)
		if err != nil {
			return fmt.Errorf("%d sessions: %w", n, err)
		}
		p99 := pct(lat, .99)
		what := fmt.Sprintf("info latency, engine → WebSocket client, %d session(s)", n)
		result := fmt.Sprintf("p50 %s, p99 %s, max %s (%d lines)", ms(pct(lat, .5)), ms(p99), ms(pct(lat, 1)), len(lat))
		if n == b.infoTarget {
			b.rep.add(what, result, "p99 ≤ 2 ms", verdict(p99 <= 2*time.Millisecond))
		} else {
			b.rep.add(what, result, "", "")
		}
	}
	b.rep.note("(2) fake engine (internal/fakeengine, mode %s): one info line every %v per session, %v measured after a warm-up; lines per session per second stay below usid's per-client info rate (60/s), so the rate limiter never holds a line back.",
		mode, b.stampInterval, b.infoWindow)
	return nil
}

// infoRun measures n concurrent sessions and returns every latency seen.
func (b *bench) infoRun(ctx context.Context, n int, mode string) (lat []time.Duration, err error) {
	u, err := b.startUsid(ctx, fmt.Sprintf("info-%d", n), newConfig(b.fakeEngine("stamp", mode, n)))
	if err != nil {
		return nil, err
	}
	defer stopUsid(u, &err)

	conns, err := dialMany(ctx, u.wsURL("/v1/ws"), n, 32)
	if err != nil {
		return nil, err
	}
	defer closeConns(conns)

	// Every session measures the same window, after a warm-up in which all
	// searches have started.
	warm := max(time.Second, b.infoWindow/5)
	if b.short {
		warm = 200 * time.Millisecond
	}
	start := time.Now().Add(warm)
	end := start.Add(b.infoWindow)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			got, err := stampedSession(ctx, c, start, end)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && len(got) == 0 {
				err = fmt.Errorf("a session got no info line in the window")
			}
			if err != nil {
				errs = append(errs, err)
			}
			lat = append(lat, got...)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d of %d sessions failed; first: %w", len(errs), n, errs[0])
	}
	return lat, nil
}

var (
	stampKey    = []byte(`"string":"t=`)
	typeBest    = []byte(`"type":"bestmove"`)
	typeError   = []byte(`"type":"error"`)
	analyzeStmp = []byte(`{"type":"analyze","id":"a1","engine":"stamp","position":{"sfen":"startpos","moves":[]}}`)
)

// stampedSession analyses until end, collecting the latency of each info
// line read in [start, end), then stops the search and waits for bestmove.
// It looks for the stamp in the raw JSON rather than decoding every message,
// to keep the client's own CPU time out of the numbers.
func stampedSession(ctx context.Context, c *websocket.Conn, start, end time.Time) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Until(end)+30*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, analyzeStmp); err != nil {
		return nil, err
	}
	var lat []time.Duration
	stopped := false
	for {
		_, msg, err := c.Read(ctx)
		now := time.Now()
		if err != nil {
			return nil, err
		}
		switch {
		case bytes.Contains(msg, typeError):
			return nil, fmt.Errorf("usid: %s", msg)
		case bytes.Contains(msg, typeBest):
			return lat, nil
		}
		if i := bytes.Index(msg, stampKey); i >= 0 && now.After(start) && now.Before(end) {
			digits := msg[i+len(stampKey):]
			if j := bytes.IndexByte(digits, '"'); j > 0 {
				ns, err := strconv.ParseInt(string(digits[:j]), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("bad stamp in %s", msg)
				}
				lat = append(lat, now.Sub(time.Unix(0, ns)))
			}
		}
		if !stopped && !now.Before(end) {
			stopped = true
			if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"stop","id":"a1"}`)); err != nil {
				return nil, err
			}
		}
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
