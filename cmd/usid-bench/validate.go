package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/shogi"
)

// (6) Position validation: POST /v1/validate from concurrent HTTP clients
// (keep-alive), and the shogi package in this process, over the same
// positions (0 to 39 moves from the start).
func benchValidate(ctx context.Context, b *bench) (err error) {
	u, err := b.startUsid(ctx, "validate", newConfig(b.fakeEngine("fake", fakeengine.Normal, 1)))
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	positions := gamePositions(40)
	bodies := make([][]byte, len(positions))
	for i, p := range positions {
		bodies[i], _ = json.Marshal(map[string]any{"position": p})
	}
	const clients = 16
	warm := 200 * time.Millisecond
	n, err := load(ctx, clients, warm, b.validateWindow, func(ctx context.Context, w, i int) error {
		status, resp, err := post(ctx, b.http, u.url("/v1/validate"), bodies[(w*3+i)%len(bodies)])
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("POST /v1/validate: %d %s", status, resp)
		}
		return err
	})
	if err != nil {
		return err
	}
	b.rep.add(fmt.Sprintf("`/v1/validate` over HTTP, %d clients", clients), rate(n, b.validateWindow)+" requests", "", "")

	// In process, one goroutine: Load is the check itself; Inspect adds
	// what /v1/validate answers (normalized SFEN, check, legal moves).
	for _, f := range []struct {
		name string
		fn   func(position)
	}{
		{"shogi.Load", func(p position) { shogi.Load(p.SFEN, p.Moves) }},
		{"shogi.Inspect", func(p position) { shogi.Inspect(p.SFEN, p.Moves) }},
	} {
		// A call is every position once, so the clock is read rarely.
		n, err := load(ctx, 1, warm, b.validateWindow, func(context.Context, int, int) error {
			for _, p := range positions {
				f.fn(p)
			}
			return nil
		})
		if err != nil {
			return err
		}
		b.rep.add(fmt.Sprintf("validation in process (`%s`, one goroutine)", f.name), rate(n*len(positions), b.validateWindow)+" positions", "", "")
	}
	b.rep.note("(6) positions: the %d positions of one game, 0 to %d moves from the start (%.1f on average); each is checked move by move.",
		len(positions), len(positions)-1, float64(len(positions)-1)/2)
	return nil
}
