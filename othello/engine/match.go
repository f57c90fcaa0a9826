package engine

import (
	"math/bits"
	"math/rand/v2"
	"time"
)

// The match harness: games between players in process, for the strength
// tests and benchmarks (the protocol is tested on its own).

// A Player chooses a move for the side to move of b, which has one: a
// square, or Pass when b has no square.
type Player interface {
	Move(b Board) int
}

// RandomPlayer plays a legal square at random.
type RandomPlayer struct{ Rand *rand.Rand }

func (p RandomPlayer) Move(b Board) int {
	mv := Moves(b.P, b.O)
	if mv == 0 {
		return Pass
	}
	return nthBit(mv, p.Rand.IntN(count(mv)))
}

// GreedyPlayer plays the square that turns over the most discs, ties
// broken at random.
type GreedyPlayer struct{ Rand *rand.Rand }

func (p GreedyPlayer) Move(b Board) int {
	mv := Moves(b.P, b.O)
	if mv == 0 {
		return Pass
	}
	best, most, ties := Pass, -1, 0
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		switch f := count(Flips(b.P, b.O, sq)); {
		case f > most:
			best, most, ties = sq, f, 1
		case f == most:
			ties++
			if p.Rand.IntN(ties) == 0 {
				best = sq
			}
		}
	}
	return best
}

// EnginePlayer is the engine: a search within Limits and MoveTime (0: none)
// per move, its time managed as the protocol's go movetime is.
type EnginePlayer struct {
	Searcher *Searcher
	Limits   Limits
	MoveTime time.Duration
}

func (p EnginePlayer) Move(b Board) int {
	ctl := new(Control)
	lim := p.Limits
	if p.MoveTime > 0 {
		soft, hard := Budget(GoParams{MoveTime: p.MoveTime.Milliseconds()}, false, b.NumEmpties())
		now := time.Now()
		ctl.SetDeadlines(now.Add(soft), now.Add(hard))
		lim.SolveEmpties = solveEmpties(hard)
	}
	return p.Searcher.Search(b, lim, ctl, nil).Move
}

func nthBit(x uint64, n int) int {
	for ; n > 0; n-- {
		x &= x - 1
	}
	return bits.TrailingZeros64(x)
}

// PlayGame plays a game from b (first to move) between first and second,
// and returns the final margin of first. A player's illegal move ends the
// game as a loss of every disc.
func PlayGame(b Board, first, second Player) int {
	players := [2]Player{first, second}
	sign := 1 // 1 while first is to move
	for turn := 0; ; turn ^= 1 {
		mv := Moves(b.P, b.O)
		if mv == 0 && Moves(b.O, b.P) == 0 {
			return sign * b.FinalScore()
		}
		m := players[turn].Move(b)
		switch {
		case mv == 0 && m == Pass:
			b = b.Pass()
		case m >= 0 && m < 64 && mv&(1<<uint(m)) != 0:
			b = b.Play(m, Flips(b.P, b.O, m))
		default:
			return -sign * 64
		}
		sign = -sign
	}
}

// MatchResult counts a match's games from the first player's side.
type MatchResult struct{ Wins, Losses, Draws int }

// Match plays games between a and b, colours alternating: each pair of
// games starts from the same opening of openingPlies random moves from the
// start (rng's), a with Black in the first, White in the second.
func Match(a, b Player, games, openingPlies int, rng *rand.Rand) MatchResult {
	var r MatchResult
	var open Board
	for g := 0; g < games; g++ {
		if g%2 == 0 {
			open = randomOpening(openingPlies, rng)
		}
		var margin int
		if g%2 == 0 {
			margin = PlayGame(open, a, b)
		} else {
			margin = -PlayGame(open, b, a)
		}
		switch {
		case margin > 0:
			r.Wins++
		case margin < 0:
			r.Losses++
		default:
			r.Draws++
		}
	}
	return r
}

// randomOpening plays plies random moves from the start. The result is
// always Black to move (an even number of plies, no pass is possible so
// early) when plies is even.
func randomOpening(plies int, rng *rand.Rand) Board {
	b := Board{P: 1<<28 | 1<<35, O: 1<<27 | 1<<36}
	r := RandomPlayer{rng}
	for range plies {
		m := r.Move(b)
		if m == Pass {
			b = b.Pass()
			continue
		}
		b = b.Play(m, Flips(b.P, b.O, m))
	}
	return b
}
