package engine

import "math/bits"

// The exact endgame solver: alpha-beta to the end of the game on the final
// disc margin (empty squares to the winner), with a null window for every
// move after the first (a win/loss/draw search is the window (-1, 1)).
// Moves are tried fastest first (fewest replies for the opponent, corners
// before) while many squares are empty, and by parity near the end: first
// the squares of regions (quadrants) with an odd number of empties, where
// the side to move can hope to play last.

// Below these many empties the solver orders by parity alone and skips the
// table: ordering costs more than it saves so close to the end.
const (
	fastestFirstEmpties = 7
	tableEmpties        = 9
)

// quadrants are the board's four 4x4 corners.
var quadrants = [4]uint64{0x0f0f0f0f, 0xf0f0f0f0, 0x0f0f0f0f << 32, 0xf0f0f0f0 << 32}

// solve returns the final margin for the side to move with n empty
// squares, exact inside (alpha, beta) and a bound outside. passed says the
// opponent has just passed (so the game is over if b has no move either).
func (s *searcher) solve(b Board, alpha, beta, n int, passed bool) int {
	if s.tick() {
		return 0
	}
	if n == 0 {
		return count(b.P) - count(b.O)
	}
	if n == 1 {
		return lastMove(b)
	}
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if passed || Moves(b.O, b.P) == 0 {
			return b.FinalScore()
		}
		return -s.solve(b.Pass(), -beta, -alpha, n, true)
	}
	if n < fastestFirstEmpties {
		return s.solveParity(b, mv, alpha, beta, n)
	}
	ttMove := -1
	if n >= tableEmpties {
		if e, ok := s.tt.probe(b); ok {
			ttMove = int(e.move)
			if e.kind&kindEnd != 0 {
				if v, cut := e.cut(0, alpha, beta); cut {
					return v / scale
				}
			}
		}
	}
	var buf [32]scored
	list := order(b, mv, ttMove, true, buf[:])
	best, bestSq, a := -infinity, -1, alpha
	for i, m := range list {
		c := b.Play(m.sq, m.flips)
		var v int
		if i == 0 {
			v = -s.solve(c, -beta, -a, n-1, false)
		} else {
			v = -s.solve(c, -a-1, -a, n-1, false)
			if v > a && v < beta && !s.aborted {
				v = -s.solve(c, -beta, -a, n-1, false)
			}
		}
		if s.aborted {
			return 0
		}
		if v > best {
			best, bestSq = v, m.sq
			if v > a {
				a = v
				if a >= beta {
					break
				}
			}
		}
	}
	if n >= tableEmpties {
		s.tt.store(b, n, best, kindEnd|boundOf(best, alpha, beta), bestSq)
	}
	return best
}

// solveParity is solve's move loop near the end: odd regions first, no
// table, plain alpha-beta.
func (s *searcher) solveParity(b Board, mv uint64, alpha, beta, n int) int {
	empty := b.Empties()
	var odd uint64
	for _, q := range quadrants {
		if count(empty&q)&1 == 1 {
			odd |= q
		}
	}
	best := -infinity
	for _, set := range [2]uint64{mv & odd, mv &^ odd} {
		for ; set != 0; set &= set - 1 {
			sq := bits.TrailingZeros64(set)
			v := -s.solve(b.Play(sq, Flips(b.P, b.O, sq)), -beta, -alpha, n-1, false)
			if s.aborted {
				return 0
			}
			if v > best {
				best = v
				if v > alpha {
					alpha = v
					if alpha >= beta {
						return best
					}
				}
			}
		}
	}
	return best
}

// lastMove is the final margin with one empty square: the side to move
// plays it if it can, else the opponent, else it stays empty (and goes to
// the winner).
func lastMove(b Board) int {
	sq := bits.TrailingZeros64(b.Empties())
	p := count(b.P)
	if f := Flips(b.P, b.O, sq); f != 0 {
		return 2*(p+count(f)) + 2 - 64
	}
	if f := Flips(b.O, b.P, sq); f != 0 {
		return 2*(p-count(f)) - 64
	}
	switch d := 2*p - 63; {
	case d > 0:
		return d + 1
	case d < 0:
		return d - 1
	}
	return 0
}
