package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/usi"
)

// (10) REST /v1/analyze on stockfish, a chess engine with a minimal entry
// (name and path: usid learns it speaks UCI), against stockfish driven
// directly through the usi package in its UCI dialect, as (1) does for
// fairy-stockfish.
func benchRESTChess(ctx context.Context, b *bench) (err error) {
	u, err := b.startUsid(ctx, "rest-chess", newConfig(engineConfig{Name: "stockfish", Path: b.stockfish, Instances: 1, Queue: 1024}))
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	eng, err := usi.Start(ctx, usi.Config{Path: b.stockfish, Dialect: usi.DialectUCI})
	if err != nil {
		return fmt.Errorf("starting %s (apt-get install stockfish): %w", b.stockfish, err)
	}
	defer eng.Close()
	// What usid sends it: Hash 256 and Ponder false at start (stockfish
	// has no UCI_AnalyseMode), isready, one ucinewgame for many positions.
	for _, o := range [][2]string{{"Hash", "256"}, {"Ponder", "false"}} {
		if err := eng.SetOption(o[0], o[1]); err != nil {
			return err
		}
	}
	if err := eng.IsReady(ctx); err != nil {
		return err
	}
	if err := eng.NewGame(); err != nil {
		return err
	}
	games := chessGame(40, 28)
	targets := make([]restTarget, len(games))
	for i, moves := range games {
		targets[i] = restTarget{json: map[string]any{"fen": "startpos", "moves": moves}, direct: usi.Position{FEN: "startpos", Moves: moves}}
	}
	limits := []restLimit{{"nodes 20000", map[string]int{"nodes": 20000}, usi.Go{Nodes: 20000}, 1.05}} // issue 28
	if err := compareREST(ctx, b, u, eng, "stockfish", "stockfish", targets, limits, nil); err != nil {
		return err
	}
	b.rep.note("(10) as (1), on Debian's stockfish: usid has a minimal entry (name and path; the probe finds UCI), sends Hash 256, Ponder false and one ucinewgame; the direct engine gets the same. Cache off. %d positions of one chess game.", len(targets))
	return nil
}

// chessGame returns the move lists of the first n positions of one game of
// random legal moves (seed): the start, then after each move.
func chessGame(n int, seed uint64) [][]string {
	rnd := rand.New(rand.NewPCG(10, seed))
	p := chess.Startpos()
	out := [][]string{{}}
	var moves []string
	for len(out) < n {
		legal := p.LegalMoves()
		if len(legal) == 0 {
			break
		}
		m := legal[rnd.IntN(len(legal))]
		p.Play(m)
		moves = append(moves, m.String())
		out = append(out, append([]string(nil), moves...))
	}
	return out
}
