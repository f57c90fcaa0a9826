package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/usi"
)

// (1) REST /v1/analyze against the same engine driven directly: one client,
// one engine on each side, searches alternating between the two sides (so
// that machine noise hits both alike) over the same positions. Then usid's
// own cost, with a fake engine that answers at once.
func benchREST(ctx context.Context, b *bench) (err error) {
	// "instant" answers bestmove the moment it gets go: what usid itself costs.
	instant := b.fakeEngine("instant", fakeengine.Normal, 1)
	u, err := b.startUsid(ctx, "rest", newConfig(b.fairyEngine(1), instant))
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	engs, err := b.startDirect(ctx, 1)
	if err != nil {
		return err
	}
	defer closeAll(engs)
	eng := engs[0]

	positions := gamePositions(40)
	targets := make([]restTarget, len(positions))
	for i, pos := range positions {
		targets[i] = restTarget{json: pos, direct: pos.usi()}
	}
	limits := []restLimit{
		{"nodes 1000", map[string]int{"nodes": 1000}, usi.Go{Nodes: 1000}, 0},
		{"nodes 5000", map[string]int{"nodes": 5000}, usi.Go{Nodes: 5000}, 1.02}, // issue 24
		{"movetime 10 ms", map[string]int{"movetime_ms": 10}, usi.Go{MoveTime: 10 * time.Millisecond}, 1.05},
	}
	floor, err := b.startFloor(ctx, b.fairy)
	if err != nil {
		return err
	}
	defer floor.stop()
	if err := compareREST(ctx, b, u, eng, "fairy", "fairy-stockfish", targets, limits, floor); err != nil {
		return err
	}

	// usid's own cost per search, back to back and after the processes
	// have gone idle for 10 ms (as between the turns above).
	body, _ := json.Marshal(map[string]any{"position": positions[len(positions)/2], "engine": "instant", "limits": map[string]int{"nodes": 1000}})
	var busy, idle []time.Duration
	for i := -warmup; i < 2*b.restRuns; i++ {
		if i >= b.restRuns {
			time.Sleep(10 * time.Millisecond)
		}
		d, err := restAnalyze(ctx, b.http, u.url("/v1/analyze"), body)
		if err != nil {
			return fmt.Errorf("instant engine: %w", err)
		}
		switch {
		case i >= b.restRuns:
			idle = append(idle, d)
		case i >= 0:
			busy = append(busy, d)
		}
	}
	b.rep.add(fmt.Sprintf("REST `/v1/analyze` with an engine that answers at once: usid's own cost (%d searches each)", len(busy)),
		fmt.Sprintf("back to back p50 %s, p99 %s; after 10 ms idle p50 %s, p99 %s", ms(pct(busy, .5)), ms(pct(busy, .99)), ms(pct(idle, .5)), ms(pct(idle, .99))), "", "")
	b.rep.note("(1) median ratio = median REST round trip / median direct search (go to bestmove through the usi package); added = REST percentile − direct percentile. usid has a minimal entry for fairy-stockfish (name and path; it sends USI_Hash 256, usinewgame once, and UCI_AnalyseMode true for analyses); the direct engine gets Hash 256, UCI_AnalyseMode true and one usinewgame at start, as an analysis GUI sends them: both keep their hash from one position of the game to the next. Cache off. %d different positions of one game. The floor bridge is a process of this tool holding a third fairy-stockfish (set up as the direct one) that answers the same POST with nothing between the request and the engine: no validation, pool, queue, budget or cache; floor/direct is what any HTTP bridge costs on this machine (a second process woken for the request and for the answer), usid/floor what usid adds above that.", len(positions))
	return nil
}

// warmup is the searches on each side before the measured ones.
const warmup = 3

// restTarget is one position as a REST body carries it and as the direct
// engine is told it.
type restTarget struct {
	json   any
	direct usi.Position
}

// restLimit is one limit compared: as REST asks it and as the direct engine
// is sent it; target is the median ratio to stay under (0: none).
type restLimit struct {
	name   string
	rest   map[string]int
	direct usi.Go
	target float64
}

// compareREST times REST /v1/analyze on usid's engine name against the
// direct engine eng, searches alternating between the two sides (so that
// machine noise hits both alike) over the same positions, and adds a row
// per limit.
//
// With a floor bridge (nil: none), each round also times the same search
// through it, on a third engine process, and the row splits the overhead:
// what the floor adds (a second process and loopback HTTP on this machine)
// and what usid adds above it.
func compareREST(ctx context.Context, b *bench, u *usidProc, eng *usi.Engine, name, label string, targets []restTarget, limits []restLimit, floor *floorProc) error {
	for _, l := range limits {
		var direct, rest, viaFloor []time.Duration
		for i := -warmup; i < b.restRuns; i++ {
			t := targets[(i+warmup)%len(targets)]
			body, _ := json.Marshal(map[string]any{"position": t.json, "engine": name, "limits": l.rest})
			sides := []func() (time.Duration, error){
				func() (time.Duration, error) { return directSearch(ctx, eng, t.direct, l.direct) },
				func() (time.Duration, error) { return restAnalyze(ctx, b.http, u.url("/v1/analyze"), body) },
			}
			if floor != nil {
				sides = append(sides, func() (time.Duration, error) { return restAnalyze(ctx, b.http, floor.url("/v1/analyze"), body) })
			}
			took := make([]time.Duration, len(sides))
			for k := range sides { // each side goes first in turn
				j := (k + i + warmup) % len(sides)
				d, err := sides[j]()
				if err != nil {
					return fmt.Errorf("%s: side %d: %v", l.name, j, err)
				}
				took[j] = d
			}
			if i >= 0 {
				direct, rest = append(direct, took[0]), append(rest, took[1])
				if floor != nil {
					viaFloor = append(viaFloor, took[2])
				}
			}
		}
		ratio := float64(pct(rest, .5)) / float64(pct(direct, .5))
		result := fmt.Sprintf("usid p50 %s, p99 %s; direct p50 %s, p99 %s; added p50 %s, p99 %s; median ratio %.3f (mean %.3f)",
			ms(pct(rest, .5)), ms(pct(rest, .99)), ms(pct(direct, .5)), ms(pct(direct, .99)),
			signedMS(pct(rest, .5)-pct(direct, .5)), signedMS(pct(rest, .99)-pct(direct, .99)), ratio, float64(mean(rest))/float64(mean(direct)))
		if floor != nil {
			result += fmt.Sprintf("; floor bridge p50 %s, floor/direct %.3f, usid/floor %.3f",
				ms(pct(viaFloor, .5)), float64(pct(viaFloor, .5))/float64(pct(direct, .5)), float64(pct(rest, .5))/float64(pct(viaFloor, .5)))
		}
		what := fmt.Sprintf("REST `/v1/analyze` vs %s over its pipes, %s (%d searches each)", label, l.name, len(rest))
		if l.target > 0 {
			b.rep.add(what, result, fmt.Sprintf("median ratio ≤ %.2f", l.target), verdict(ratio <= l.target))
		} else {
			b.rep.add(what, result, "", "")
		}
	}
	return nil
}

// startDirect starts n fairy-stockfish processes with usid's options for it,
// to be driven over their pipes with the usi package.
func (b *bench) startDirect(ctx context.Context, n int) ([]*usi.Engine, error) {
	var engs []*usi.Engine
	for range n {
		e, err := usi.Start(ctx, usi.Config{Path: b.fairy})
		if err == nil {
			engs = append(engs, e)
			err = prepareDirect(ctx, e)
		}
		if err != nil {
			closeAll(engs)
			return nil, fmt.Errorf("starting %s: %w", b.fairy, err)
		}
	}
	return engs, nil
}

// prepareDirect sets a directly driven fairy-stockfish up as usid sets up
// its own for analyses, and begins the one game.
func prepareDirect(ctx context.Context, e *usi.Engine) error {
	if err := e.SetOption("Hash", "256"); err != nil {
		return err
	}
	if err := e.SetOption("UCI_AnalyseMode", "true"); err != nil { // as usid sets it for analysis
		return err
	}
	if err := e.IsReady(ctx); err != nil {
		return err
	}
	return e.NewGame()
}

func closeAll(engs []*usi.Engine) {
	for _, e := range engs {
		e.Close()
	}
}

// directSearch times one search as an analysis GUI runs it, and as usid
// runs a REST one: go, then bestmove, in the game begun at start (one
// usinewgame for many positions), the engine keeping its hash.
func directSearch(ctx context.Context, e *usi.Engine, pos usi.Position, g usi.Go) (time.Duration, error) {
	start := time.Now()
	s, err := e.Go(ctx, pos, g)
	if err != nil {
		return 0, err
	}
	res, err := s.Wait(ctx)
	took := time.Since(start)
	if err == nil && res.BestMove == nil {
		err = fmt.Errorf("no bestmove: %+v", res)
	}
	return took, err
}

// restAnalyze times one POST /v1/analyze, up to the last byte of the answer.
func restAnalyze(ctx context.Context, c *http.Client, url string, body []byte) (time.Duration, error) {
	start := time.Now()
	status, resp, err := post(ctx, c, url, body)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	var res struct {
		BestMove string `json:"bestmove"`
	}
	if status != http.StatusOK || json.Unmarshal(resp, &res) != nil || res.BestMove == "" {
		return 0, fmt.Errorf("POST /v1/analyze: %d %s", status, bytes.TrimSpace(resp))
	}
	return took, nil
}

// post sends a JSON body and reads the whole answer.
func post(ctx context.Context, c *http.Client, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// load calls fn in a loop from workers goroutines for warm+window and
// counts the calls that end inside the window (after the warm-up). The first
// error stops every worker.
func load(parent context.Context, workers int, warm, window time.Duration, fn func(ctx context.Context, worker, i int) error) (int, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	start := time.Now().Add(warm)
	end := start.Add(window)
	var n atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && time.Now().Before(end); i++ {
				if err := fn(ctx, w, i); err != nil {
					mu.Lock()
					if first == nil && ctx.Err() == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
				if t := time.Now(); t.After(start) && !t.After(end) {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = parent.Err() // interrupted
	}
	return int(n.Load()), first
}
