package main

import (
	"math/rand/v2"

	"github.com/usid/usid/shogi"
	"github.com/usid/usid/usi"
)

// position is a position as usid's JSON takes it.
type position struct {
	SFEN  string   `json:"sfen"`
	Moves []string `json:"moves"`
}

// outOfBook is a middle-game position (Sato-Watanabe, 19th Ryu-O, game 3)
// for which gpsusi has no book move, so it really searches and sends info
// lines (from startpos it answers a book move at once, with no info).
const outOfBook = "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124"

// gamePositions returns the positions of one game of n plies from the start,
// moves drawn at random among the legal ones with a fixed seed: the same
// positions in every run and on both sides of a comparison, all legal, and
// different from each other so that the engine's hash does not answer
// repeated searches. Position i has i moves.
func gamePositions(n int) []position { return branchGame(nil, n, 22) }

// branchGame continues the game of moves (nil: from the start) with random
// legal moves (seed) until it has n positions: games of one opening that
// part ways there.
func branchGame(moves []string, n int, seed uint64) []position {
	rnd := rand.New(rand.NewPCG(10, seed))
	p := shogi.Startpos()
	out := []position{{SFEN: "startpos", Moves: []string{}}}
	moves = append([]string(nil), moves...)
	for i, mv := range moves {
		m, err := p.CheckMove(mv)
		if err != nil {
			panic(err) // a prefix the tool made itself
		}
		p.Play(m)
		out = append(out, position{SFEN: "startpos", Moves: append([]string(nil), moves[:i+1]...)})
	}
	for len(out) < n {
		legal := p.LegalMoves()
		if len(legal) == 0 {
			break // mated: a shorter game is fine
		}
		m := legal[rnd.IntN(len(legal))]
		if err := p.Play(m); err != nil {
			panic(err) // LegalMoves gave an illegal move: a bug in shogi
		}
		moves = append(moves, m.String())
		out = append(out, position{SFEN: "startpos", Moves: append([]string(nil), moves...)})
	}
	return out
}

// usi is the position as a usi.Position, for the direct engine.
func (p position) usi() usi.Position { return usi.Position{SFEN: p.SFEN, Moves: p.Moves} }
