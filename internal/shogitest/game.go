// Package shogitest makes shogi games for tests: deterministic random
// games from a seed. Test code only; safe for concurrent use.
package shogitest

import (
	"math/rand/v2"

	"github.com/usid/usid/shogi"
)

// RandomGame returns n legal moves from the start, each picked at random
// (PCG seeded with seed and stream) among those that leave the opponent a
// move; a seed whose game ends sooner is followed by the next one.
func RandomGame(n int, seed, stream uint64) []string {
	for ; ; seed++ {
		rng := rand.New(rand.NewPCG(seed, stream))
		pos := shogi.Startpos()
		var moves []string
		for len(moves) < n {
			legal := pos.LegalMoves()
			rng.Shuffle(len(legal), func(i, j int) { legal[i], legal[j] = legal[j], legal[i] })
			played := false
			for _, mv := range legal {
				next, _ := shogi.Load("startpos", append(append([]string(nil), moves...), mv.String()))
				if next == nil || len(next.LegalMoves()) == 0 {
					continue
				}
				pos.Play(mv)
				moves = append(moves, mv.String())
				played = true
				break
			}
			if !played {
				break
			}
		}
		if len(moves) == n {
			return moves
		}
	}
}
