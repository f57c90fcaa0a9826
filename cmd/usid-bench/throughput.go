package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/usid/usid/usi"
)

// (4) Searches per second with k engines: usid's REST /v1/analyze (2k
// clients, so that a search always waits for each engine the moment it is
// free) against k engines each driven back to back over its pipes.
func benchThroughput(ctx context.Context, b *bench) error {
	positions := gamePositions(40)
	bodies := make([][]byte, len(positions))
	for i, p := range positions {
		bodies[i], _ = json.Marshal(map[string]any{"position": p, "engine": "fairy", "limits": map[string]int{"nodes": 1000}})
	}
	warm := max(500*time.Millisecond, b.tputWindow/10)
	if b.short {
		warm = 100 * time.Millisecond
	}
	for _, k := range []int{1, 2} {
		direct, err := b.directThroughput(ctx, k, positions, warm)
		if err != nil {
			return fmt.Errorf("k=%d, direct: %w", k, err)
		}
		viaUsid, err := b.usidThroughput(ctx, k, bodies, warm)
		if err != nil {
			return fmt.Errorf("k=%d, usid: %w", k, err)
		}
		b.rep.add(fmt.Sprintf("throughput, %d engine(s), nodes 1000", k),
			fmt.Sprintf("usid %s (REST, %d clients); direct %s; usid/direct %.0f%%", rate(viaUsid, b.tputWindow), 2*k,
				rate(direct, b.tputWindow), 100*float64(viaUsid)/float64(direct)), "", "")
	}
	b.rep.note("(4) %v per side after a %v warm-up; fairy-stockfish, Hash 64, Threads 1, on %d cores shared by engines, usid and the clients.", b.tputWindow, warm, runtime.NumCPU())
	return nil
}

func (b *bench) directThroughput(ctx context.Context, k int, positions []position, warm time.Duration) (int, error) {
	engs, err := b.startDirect(ctx, k)
	if err != nil {
		return 0, err
	}
	defer closeAll(engs)
	return load(ctx, k, warm, b.tputWindow, func(ctx context.Context, w, i int) error {
		_, err := directSearch(ctx, engs[w], positions[(w*7+i)%len(positions)], usi.Go{Nodes: 1000})
		return err
	})
}

func (b *bench) usidThroughput(ctx context.Context, k int, bodies [][]byte, warm time.Duration) (n int, err error) {
	u, err := b.startUsid(ctx, fmt.Sprintf("tput-%d", k), newConfig(b.fairyEngine(k)))
	if err != nil {
		return 0, err
	}
	defer stopUsid(u, &err)
	return load(ctx, 2*k, warm, b.tputWindow, func(ctx context.Context, w, i int) error {
		_, err := restAnalyze(ctx, b.http, u.url("/v1/analyze"), bodies[(w*7+i)%len(bodies)])
		return err
	})
}
