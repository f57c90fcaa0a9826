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
// free) against k engines each driven back to back over its pipes. The two
// sides take turns in rounds, so that the machine's noise hits both alike.
func benchThroughput(ctx context.Context, b *bench) error {
	positions := gamePositions(40)
	bodies := make([][]byte, len(positions))
	for i, p := range positions {
		bodies[i], _ = json.Marshal(map[string]any{"position": p, "engine": "fairy", "limits": map[string]int{"nodes": 1000}})
	}
	rounds, warm := 5, 200*time.Millisecond
	if b.short {
		rounds, warm = 1, 50*time.Millisecond
	}
	for _, k := range []int{1, 2} {
		direct, viaUsid, err := b.throughput(ctx, k, rounds, warm, positions, bodies)
		if err != nil {
			return fmt.Errorf("k=%d: %w", k, err)
		}
		b.rep.add(fmt.Sprintf("throughput, %d engine(s), nodes 1000", k),
			fmt.Sprintf("usid %s (REST, %d clients); direct %s; usid/direct %.0f%%", rate(viaUsid, b.tputWindow), 2*k,
				rate(direct, b.tputWindow), 100*float64(viaUsid)/float64(direct)), "", "")
	}
	b.rep.note("(4) %v per side, in %d alternating rounds each after a %v warm-up; fairy-stockfish, Hash 64, Threads 1, on %d cores shared by the engines, usid and the clients.",
		b.tputWindow, rounds, warm, runtime.NumCPU())
	return nil
}

// throughput counts searches done directly and through usid with k engines.
func (b *bench) throughput(ctx context.Context, k, rounds int, warm time.Duration, positions []position, bodies [][]byte) (direct, viaUsid int, err error) {
	engs, err := b.startDirect(ctx, k)
	if err != nil {
		return 0, 0, err
	}
	defer closeAll(engs)
	u, err := b.startUsid(ctx, fmt.Sprintf("tput-%d", k), newConfig(b.fairyEngine(k)))
	if err != nil {
		return 0, 0, err
	}
	defer stopUsid(u, &err)
	window := b.tputWindow / time.Duration(rounds)
	for range rounds {
		n, err := load(ctx, k, warm, window, func(ctx context.Context, w, i int) error {
			_, err := directSearch(ctx, engs[w], positions[(w*7+i)%len(positions)].usi(), usi.Go{Nodes: 1000})
			return err
		})
		if err != nil {
			return 0, 0, fmt.Errorf("direct: %w", err)
		}
		direct += n
		n, err = load(ctx, 2*k, warm, window, func(ctx context.Context, w, i int) error {
			_, err := restAnalyze(ctx, b.http, u.url("/v1/analyze"), bodies[(w*7+i)%len(bodies)])
			return err
		})
		if err != nil {
			return 0, 0, fmt.Errorf("usid: %w", err)
		}
		viaUsid += n
	}
	return direct, viaUsid, nil
}
