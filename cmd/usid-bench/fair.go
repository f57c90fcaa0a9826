package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/usid/usid/quota"
	"github.com/usid/usid/server"
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
	cfg.Access.Keyed = &server.Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1e9, Burst: 1 << 30, Sessions: 1 << 20, Leases: 1 << 20, Messages: 1e9}
	u, err := b.startUsid(ctx, "fair", cfg)
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)

	search := func(ctx context.Context, key string, ms int) (time.Duration, error) {
		body, _ := json.Marshal(map[string]any{"position": map[string]any{"sfen": "startpos", "moves": []string{}}, "engine": "fairy",
			"limits": map[string]int{"movetime_ms": ms}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u.url("/v1/analyze"), strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := b.http.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var res struct {
			BestMove string `json:"bestmove"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.BestMove == "" {
			return 0, fmt.Errorf("POST /v1/analyze (%dms): %d %v", ms, resp.StatusCode, err)
		}
		return time.Since(start), nil
	}

	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
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
	heavyDone := 0
	var wg sync.WaitGroup
	for i := 1; i <= heavyN; i++ {
		key := keys[fmt.Sprintf("h%d", i)]
		wg.Go(func() {
			for wctx.Err() == nil {
				if _, err := search(wctx, key, heavyMS); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				heavyDone++
				mu.Unlock()
			}
		})
	}
	// The light client starts once the heavy ones have filled the queue.
	var waits []time.Duration
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	time.Sleep(time.Duration(heavyMS) * time.Millisecond)
	for wctx.Err() == nil {
		took, err := search(wctx, keys["light"], lightMS)
		if err != nil {
			fail(err)
			break
		}
		waits = append(waits, max(0, took-time.Duration(lightMS)*time.Millisecond))
		select {
		case <-tick.C:
		case <-wctx.Done():
		}
	}
	cancel()
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if len(waits) < 2 {
		return fmt.Errorf("only %d light searches in the window", len(waits))
	}
	heavy := time.Duration(heavyMS) * time.Millisecond
	p99 := pct(waits, 0.99)
	b.rep.add(fmt.Sprintf("fair sharing of 1 engine: %d heavy clients (%d ms searches back to back), 1 light (%d ms each second)", heavyN, heavyMS, lightMS),
		fmt.Sprintf("light client's wait p50 %s, p99 %s, max %s over %d searches; heavy searches answered %d", ms(pct(waits, 0.5)), ms(p99), ms(slices.Max(waits)), len(waits), heavyDone),
		"light wait p99 ≤ one heavy search ("+ms(heavy)+")", verdict(p99 <= heavy))
	return nil
}
