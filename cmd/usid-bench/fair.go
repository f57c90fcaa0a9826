package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// (9) Fair sharing of one engine: heavy clients (API keys h1..h4) send 1 s
// searches back to back, each as soon as its last one answered, while a
// light client (key light) sends a 100 ms search once a second. The light
// client's wait (its answer's time less its search's) is what fair sharing
// bounds: at most one heavy search, where a first-come queue makes it wait
// behind every heavy request queued before it.
func benchFair(ctx context.Context, b *bench) (err error) {
	heavyN, heavyMS, lightMS, window := 4, 1000, 100, 40*time.Second
	if b.short {
		heavyN, heavyMS, lightMS, window = 2, 200, 20, 2*time.Second
	}
	keys := map[string]string{"light": "light-0123456789abcdef"}
	for i := 1; i <= heavyN; i++ {
		keys[fmt.Sprintf("h%d", i)] = fmt.Sprintf("heavy-%d-0123456789abcdef", i)
	}
	var lines []string
	for name, key := range keys {
		lines = append(lines, name+": "+key)
	}
	keysFile := filepath.Join(b.tmp, "fair-keys")
	if err := os.WriteFile(keysFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	cfg := newConfig(b.fairyEngine(1))
	cfg.Access.KeysFile = keysFile
	cfg.Access.Keyed = noLimits()
	u, err := b.startUsid(ctx, "fair", cfg)
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)

	// search returns usid's own account of the request (Server-Timing):
	// the wait for the engine and the search.
	search := func(ctx context.Context, key string, ms int) (queue, searched time.Duration, err error) {
		body, _ := json.Marshal(map[string]any{"position": map[string]any{"sfen": "startpos", "moves": []string{}}, "engine": "fairy",
			"limits": map[string]int{"movetime_ms": ms}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u.url("/v1/analyze"), strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := b.http.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		var res struct {
			BestMove string `json:"bestmove"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.BestMove == "" {
			return 0, 0, fmt.Errorf("POST /v1/analyze (%dms): %d %v", ms, resp.StatusCode, err)
		}
		var q, s float64
		if st := resp.Header.Get("Server-Timing"); st == "" {
			// A usid from before Server-Timing (a -usid baseline): the
			// answer's time less what was asked for, and the search as asked.
			asked := time.Duration(ms) * time.Millisecond
			return max(0, time.Since(start)-asked), asked, nil
		} else if _, err := fmt.Sscanf(st, "queue;dur=%g, search;dur=%g", &q, &s); err != nil {
			return 0, 0, fmt.Errorf("Server-Timing %q: %v", st, err)
		}
		return time.Duration(q * float64(time.Millisecond)), time.Duration(s * float64(time.Millisecond)), nil
	}

	// The window lasts its length and until the light client has had a few
	// searches (on a loaded machine the searches take longer), within a
	// bound for a broken run.
	const minLight = 3
	wctx, cancel := context.WithTimeout(ctx, 10*window)
	defer cancel()
	windowEnd := time.Now().Add(window)
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil && wctx.Err() == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var heavySearches []time.Duration
	var wg sync.WaitGroup
	for i := 1; i <= heavyN; i++ {
		key := keys[fmt.Sprintf("h%d", i)]
		wg.Go(func() {
			for wctx.Err() == nil {
				_, d, err := search(wctx, key, heavyMS)
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				heavySearches = append(heavySearches, d)
				mu.Unlock()
			}
		})
	}
	// The light client starts in the steady state: once each heavy client
	// has had about one search (at the very start every client has used
	// nothing, and ties go to the earlier arrival).
	var waits []time.Duration
	time.Sleep(time.Duration((heavyN+1)*heavyMS) * time.Millisecond)
	// Arrivals a second apart on average, at random moments (a fixed
	// seed): a light client in step with the heavy searches would always
	// arrive just after one started, and measure only the worst case.
	rnd := rand.New(rand.NewPCG(9, 17))
	for wctx.Err() == nil && (time.Now().Before(windowEnd) || len(waits) < minLight) {
		wait, _, err := search(wctx, keys["light"], lightMS)
		if err != nil {
			fail(err)
			break
		}
		waits = append(waits, wait)
		select {
		case <-time.After(time.Duration(500+rnd.IntN(1000)) * time.Millisecond):
		case <-wctx.Done():
		}
	}
	cancel()
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if len(waits) < minLight {
		return fmt.Errorf("only %d light searches in %v", len(waits), 10*window)
	}
	if len(heavySearches) == 0 {
		return fmt.Errorf("no heavy search ended in the window")
	}
	heavy := pct(heavySearches, 0.5) // what one heavy search really takes
	// Between two leases the engine is reset (options restored, usinewgame):
	// a few milliseconds that any waiter waits too.
	const reset = 20 * time.Millisecond
	p99 := pct(waits, 0.99)
	b.rep.add(fmt.Sprintf("fair sharing of 1 engine: %d heavy clients (%d ms searches back to back), 1 light (%d ms each second)", heavyN, heavyMS, lightMS),
		fmt.Sprintf("light client's wait for the engine p50 %s, p99 %s, max %s over %d searches; %d heavy searches, p50 %s each (usid's Server-Timing)",
			ms(pct(waits, 0.5)), ms(p99), ms(slices.Max(waits)), len(waits), len(heavySearches), ms(heavy)),
		"light wait p99 ≤ one heavy search (+ the reset between leases, ≤ 20 ms)", verdict(p99 <= heavy+reset))
	return nil
}
