package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/usid/usid/shogi"
)

// (7) Whole-game analysis: one game of 100 moves (101 positions) at depth 8
// on fairy-stockfish with 2 engines, through POST /v1/games/analysis,
// against the same positions through REST /v1/analyze by one client and by
// two; each side in turn, in alternating rounds. Every job's answer is
// checked: 101 positions, every best move legal, every played move judged.
// Then an interactive WebSocket analysis's first info line, on an idle
// server and while a game analysis runs.
func benchGames(ctx context.Context, b *bench) (err error) {
	plies, depth, rounds, startRuns := 100, 8, 2, 10
	if b.short {
		plies, depth, rounds, startRuns = 8, 2, 1, 2
	}
	positions := gamePositions(plies + 1)
	game := positions[len(positions)-1]
	u, err := b.startUsid(ctx, "games", newConfig(b.fairyEngine(2)))
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	jobBody, _ := json.Marshal(map[string]any{"position": game, "engine": "fairy", "limits": map[string]int{"depth": depth}})
	bodies := make([][]byte, len(positions))
	for i, p := range positions {
		bodies[i], _ = json.Marshal(map[string]any{"position": p, "engine": "fairy", "limits": map[string]int{"depth": depth}})
	}
	var viaJob, oneClient, twoClients time.Duration
	for range rounds {
		d, err := b.gameJob(ctx, u, jobBody, game)
		if err != nil {
			return fmt.Errorf("game analysis: %w", err)
		}
		viaJob += d
		for _, clients := range []int{1, 2} {
			if err := u.waitIdle(ctx, "fairy", 30*time.Second); err != nil {
				return err
			}
			d, err := restPositions(ctx, b, u, bodies, clients)
			if err != nil {
				return fmt.Errorf("REST, %d client(s): %w", clients, err)
			}
			if clients == 1 {
				oneClient += d
			} else {
				twoClients += d
			}
		}
		if err := u.waitIdle(ctx, "fairy", 30*time.Second); err != nil {
			return err
		}
	}
	n := rounds * len(positions)
	perSec := func(d time.Duration) string { return fmt.Sprintf("%.1f positions/s", float64(n)/d.Seconds()) }
	b.rep.add(fmt.Sprintf("game analysis, %d positions, depth %d, 2 engines", len(positions), depth),
		fmt.Sprintf("job %s; REST one client %s, two clients %s; job/REST-2 %.0f%%", perSec(viaJob), perSec(oneClient), perSec(twoClients),
			100*twoClients.Seconds()/viaJob.Seconds()), "", "")

	// First info of an interactive analysis, idle and during a game.
	idle, err := firstInfos(ctx, u, startRuns)
	if err != nil {
		return fmt.Errorf("first info, idle: %w", err)
	}
	// A second a position: it runs through all the interactive runs.
	long, _ := json.Marshal(map[string]any{"position": game, "engine": "fairy", "limits": map[string]int{"movetime_ms": 1000}})
	status, resp, err := post(ctx, b.http, u.url("/v1/games/analysis"), long)
	if err != nil || status != http.StatusAccepted {
		return fmt.Errorf("starting a game analysis: %d %s %v", status, resp, err)
	}
	var job struct{ ID string }
	json.Unmarshal(resp, &job)
	time.Sleep(200 * time.Millisecond) // under way
	busy, err := firstInfos(ctx, u, startRuns)
	if err != nil {
		return fmt.Errorf("first info during a game analysis: %w", err)
	}
	var v gameView
	if err := u.getJSON(ctx, "/v1/games/analysis/"+job.ID, &v); err != nil || v.FinishedAt != nil {
		return fmt.Errorf("the game analysis ended before the interactive runs did (%v): make it longer", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, u.url("/v1/games/analysis/"+job.ID), nil)
	if r, err := b.http.Do(req); err == nil {
		r.Body.Close()
	}
	b.rep.add("interactive analysis during a game analysis: connect to first info",
		fmt.Sprintf("idle p50 %s max %s; during p50 %s max %s", ms(pct(idle, 0.5)), ms(slices.Max(idle)), ms(pct(busy, 0.5)), ms(slices.Max(busy))), "", "")
	b.rep.note("(7) %d rounds, each side in turn; a job analyses at most as many positions at once as the kind has engines, past the first only while one is idle with nobody waiting; its searches are in the pool's background class, and one under way gives its engine to an interactive caller at once (searched again later), so an interactive request waits for a stop and an engine reset, not a position's search. fairy-stockfish, 2 instances, on the machine's %s.", rounds, machine())
	return nil
}

// gameView is the part of a job the tool reads.
type gameView struct {
	Status   string `json:"status"`
	Progress struct {
		Done, Total int
	} `json:"progress"`
	Positions []*struct {
		Ply       int             `json:"ply"`
		BestMove  string          `json:"bestmove"`
		Checkmate bool            `json:"checkmate"`
		Eval      json.RawMessage `json:"eval"`
		Move      string          `json:"move"`
		Judgement string          `json:"judgement"`
		Cached    bool            `json:"cached"`
	} `json:"positions"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// gameJob runs one game analysis to its end and checks it; it returns the
// job's own time, from its creation to its end.
func (b *bench) gameJob(ctx context.Context, u *usidProc, body []byte, game position) (time.Duration, error) {
	d, _, err := b.gameJobView(ctx, u, body, game)
	return d, err
}

// gameJobView is gameJob, with the job's answer.
func (b *bench) gameJobView(ctx context.Context, u *usidProc, body []byte, game position) (time.Duration, *gameView, error) {
	status, resp, err := post(ctx, b.http, u.url("/v1/games/analysis"), body)
	if err != nil || status != http.StatusAccepted {
		return 0, nil, fmt.Errorf("POST: %d %s %v", status, resp, err)
	}
	var job struct{ ID string }
	json.Unmarshal(resp, &job)
	var v gameView
	for {
		v = gameView{}
		if err := u.getJSON(ctx, "/v1/games/analysis/"+job.ID, &v); err != nil {
			return 0, nil, err
		}
		if v.FinishedAt != nil {
			break
		}
		select {
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if v.Status != "done" || len(v.Positions) != len(game.Moves)+1 {
		return 0, nil, fmt.Errorf("job %s: %d positions, want %d", v.Status, len(v.Positions), len(game.Moves)+1)
	}
	p, errs := shogi.Load(game.SFEN, nil)
	if errs != nil {
		return 0, nil, errs[0]
	}
	for i, x := range v.Positions {
		if x == nil || x.Ply != i || len(x.Eval) == 0 {
			return 0, nil, fmt.Errorf("position %d: %+v", i, x)
		}
		if !x.Checkmate && x.BestMove != "resign" && x.BestMove != "win" {
			if _, err := p.CheckMove(x.BestMove); err != nil {
				return 0, nil, fmt.Errorf("position %d: best move %s: %w", i, x.BestMove, err)
			}
		}
		if i == len(game.Moves) {
			break
		}
		if x.Move != game.Moves[i] || x.Judgement == "" {
			return 0, nil, fmt.Errorf("position %d: move %q judged %q", i, x.Move, x.Judgement)
		}
		m, err := p.CheckMove(x.Move)
		if err != nil {
			return 0, nil, err
		}
		p.Play(m)
	}
	return v.FinishedAt.Sub(v.CreatedAt), &v, nil
}

// restPositions analyses every position through /v1/analyze with clients
// clients, and returns the time it took.
func restPositions(ctx context.Context, b *bench, u *usidProc, bodies [][]byte, clients int) (time.Duration, error) {
	start := time.Now()
	var mu sync.Mutex
	next := 0
	var firstErr error
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= len(bodies) || firstErr != nil
				mu.Unlock()
				if stop {
					return
				}
				if _, err := restAnalyze(ctx, b.http, u.url("/v1/analyze"), bodies[i]); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}

// firstInfos measures runs WebSocket analyses from connect to first info.
func firstInfos(ctx context.Context, u *usidProc, runs int) ([]time.Duration, error) {
	var out []time.Duration
	for range runs {
		d, err := usidSessionStart(ctx, u.wsURL("/v1/ws"), "fairy")
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// (8) The evaluation cache and whole-game analysis: games that share an
// opening, analysed one after another on an empty cache (cold: the shared
// positions are searched once, then answered from the cache), then the same
// games again (warm: every position from the cache). Every answer is
// checked as in (7) and the cached positions counted.
func benchGameCache(ctx context.Context, b *bench) (err error) {
	games, shared, plies, depth := 4, 30, 100, 8
	if b.short {
		games, shared, plies, depth = 2, 3, 6, 2
	}
	cfg := newConfig(b.fairyEngine(2))
	cfg.Cache.Enabled = true
	u, err := b.startUsid(ctx, "gamecache", cfg)
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	opening := gamePositions(shared + 1)[shared].Moves
	var bodies [][]byte
	var finals []position
	for i := range games {
		g := branchGame(opening, plies+1, uint64(100+i))
		final := g[len(g)-1]
		body, _ := json.Marshal(map[string]any{"position": final, "engine": "fairy", "limits": map[string]int{"depth": depth}})
		bodies, finals = append(bodies, body), append(finals, final)
	}
	type pass struct {
		total, first    time.Duration
		positions, hits int
	}
	runAll := func() (pass, error) {
		var p pass
		for i, body := range bodies {
			d, v, err := b.gameJobView(ctx, u, body, finals[i])
			if err != nil {
				return p, err
			}
			if i == 0 {
				p.first = d
			}
			p.total += d
			for _, x := range v.Positions {
				p.positions++
				if x.Cached {
					p.hits++
				}
			}
		}
		return p, nil
	}
	cold, err := runAll()
	if err != nil {
		return fmt.Errorf("cold: %w", err)
	}
	warm, err := runAll()
	if err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	if warm.hits != warm.positions {
		return fmt.Errorf("warm: %d of %d positions from the cache, want all", warm.hits, warm.positions)
	}
	searched := cold.positions - cold.hits
	perSearch := cold.total / time.Duration(max(searched, 1))
	rate := func(p pass) string { return fmt.Sprintf("%.0f positions/s", float64(p.positions)/p.total.Seconds()) }
	b.rep.add(fmt.Sprintf("game analysis with the evaluation cache: %d games of %d positions sharing %d plies, depth %d", games, plies+1, shared, depth),
		fmt.Sprintf("cold %s (%d searched, %d from the cache: about %.1f s of the jobs' time saved at %s per searched position); warm %s (all %d cached)",
			rate(cold), searched, cold.hits, (time.Duration(cold.hits)*perSearch).Seconds(), ms(perSearch), rate(warm), warm.positions),
		"second analysis of a game ≥ 20× faster",
		fmt.Sprintf("%s: %.0f× (the first game %s cold, %s warm)", verdict(cold.first >= 20*warm.first), cold.first.Seconds()/warm.first.Seconds(),
			ms(cold.first), ms(warm.first)))
	return nil
}
