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
	smallEmpties        = 4
	fastestFirstEmpties = 6
	tableEmpties        = 8
	evalOrderEmpties    = 12
	etcEmpties          = 10
)

// orderByEval orders the moves far from the end: fastest first, with the
// evaluation of the position each move leaves as a tie-breaker.
func orderByEval(b Board, mv uint64, ttMove int, buf []scored) []scored {
	list := buf[:0]
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		f := Flips(b.P, b.O, sq)
		sc := evalOrder(sq, b.Play(sq, f))
		if sq == ttMove {
			sc = 1 << 20
		}
		list = append(list, scored{sq, f, sc})
	}
	sortScored(list)
	return list
}

// evalOrder is the ordering score of the move to sq that gave c (the
// opponent to move): the square, fastest first, the evaluation breaking
// ties.
func evalOrder(sq int, c Board) int {
	om := Moves(c.P, c.O)
	return squareValue[sq] - orderMobility*count(om) - evaluate(c, om, Moves(c.O, c.P))/orderEval
}

// The endgame's ordering weights and thresholds, set by the node counts
// and CPU time of FFO #40 and #41 (BenchmarkFFO): fastest first (orderMobility per reply left to the opponent), the
// evaluation as a tie-breaker (divided by orderEval); from shallowEmpties
// on, a search of (empties-shallowEmpties)/shallowDiv plies. The
// stability cutoff is tried when alpha is at least stabilityAlpha.
const (
	orderMobility  = 100
	orderEval      = 10
	stabilityAlpha = 0
	shallowEmpties = 13
	shallowDiv     = 2
)

// orderBySearch orders the moves far from the end by a shallow
// middle-game search of each, the table's move first.
func (s *searcher) orderBySearch(b Board, mv uint64, ttMove, n int, buf []scored) []scored {
	list := buf[:0]
	d := (n - shallowEmpties) / shallowDiv
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		f := Flips(b.P, b.O, sq)
		c := b.Play(sq, f)
		var sc int
		if sq == ttMove {
			sc = 1 << 20
		} else if d == 0 {
			sc = evalOrder(sq, c)
		} else {
			sc = -s.pvs(c, d, -infinity, infinity)
		}
		list = append(list, scored{sq, f, sc})
	}
	sortScored(list)
	return list
}

// orderFastest orders the moves at middle distances from the end: the
// table's move, then fastest first (fewest replies for the opponent, a
// corner among them counted twice), corners and squares of odd regions
// (parity) before the others.
func orderFastest(b Board, mv uint64, ttMove int, buf []scored) []scored {
	odd := oddRegions(b.Empties())
	list := buf[:0]
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		f := Flips(b.P, b.O, sq)
		c := b.Play(sq, f)
		om := Moves(c.P, c.O)
		sc := squareValue[sq] - fastMobility*(count(om)+count(om&corners))
		if odd&(1<<uint(sq)) != 0 {
			sc += fastParity
		}
		if sq == ttMove {
			sc = 1 << 20
		}
		list = append(list, scored{sq, f, sc})
	}
	sortScored(list)
	return list
}

// The weights of orderFastest.
const (
	fastMobility = 120
	fastParity   = 10
)

// oddRegions returns the quadrants holding an odd number of the empty
// squares.
func oddRegions(empty uint64) uint64 {
	var odd uint64
	for _, q := range quadrants {
		if count(empty&q)&1 == 1 {
			odd |= q
		}
	}
	return odd
}

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
	if n == 2 {
		return s.solve2(b, alpha, beta, passed)
	}
	if n <= smallEmpties {
		return s.solveParity(b, b.Empties(), alpha, beta, n, passed)
	}
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if passed || Moves(b.O, b.P) == 0 {
			return b.FinalScore()
		}
		return -s.solve(b.Pass(), -beta, -alpha, n, true)
	}
	if n < fastestFirstEmpties {
		return s.solveParity(b, mv, alpha, beta, n, true)
	}
	// Stability cutoff: the opponent's stable discs are lost to the side
	// to move for good, which bounds its best margin.
	if alpha >= stabilityAlpha && (b.O&corners) != 0 {
		if hi := 64 - 2*count(stable(b.O, b.P)); hi <= alpha {
			return hi
		}
	}
	ttMove := -1
	if n >= tableEmpties {
		if e, ok := s.tt.probe(b); ok {
			ttMove = int(e.move)
			if e.kind&kindEnd != 0 {
				if v, cut := e.bounds(int(e.score), alpha, beta); cut {
					return v
				}
			}
		}
	}
	if n >= etcEmpties {
		if v, cut := s.etc(b, mv, n, beta); cut {
			return v
		}
	}
	var buf [32]scored
	var list []scored
	if n >= shallowEmpties {
		list = s.orderBySearch(b, mv, ttMove, n, buf[:])
	} else if n >= evalOrderEmpties {
		list = orderByEval(b, mv, ttMove, buf[:])
	} else {
		list = orderFastest(b, mv, ttMove, buf[:])
	}
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

// etc is the enhanced transposition cutoff: before searching b's moves mv,
// a child the table already bounds from above at -beta or below settles the
// node (the move reaches at least beta for the side to move). Worth its
// probes only far from the end, where a subtree is large.
func (s *searcher) etc(b Board, mv uint64, n, beta int) (int, bool) {
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		e, ok := s.tt.probe(b.Play(sq, Flips(b.P, b.O, sq)))
		if !ok || e.kind&kindEnd == 0 || e.kind&boundUpper == 0 || int(e.depth) != n-1 {
			continue
		}
		if v := -int(e.score); v >= beta {
			return v, true
		}
	}
	return 0, false
}

// solveParity is solve near the end: plain alpha-beta without the table
// over the squares of cands, those of regions with an odd number of
// empties first. cands is either the moves (from fastestFirstEmpties
// down) or, with a handful of empties, all the empty squares, tried one by
// one: generating the moves costs more than it saves so close to the end.
func (s *searcher) solveParity(b Board, cands uint64, alpha, beta, n int, passed bool) int {
	odd := oddRegions(b.Empties())
	best := -infinity
	for _, set := range [2]uint64{cands & odd, cands &^ odd} {
		for ; set != 0; set &= set - 1 {
			sq := bits.TrailingZeros64(set)
			f := Flips(b.P, b.O, sq)
			if f == 0 {
				continue
			}
			v := -s.solve(b.Play(sq, f), -beta, -alpha, n-1, false)
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
	if best == -infinity { // no move among the empty squares
		if passed || Moves(b.O, b.P) == 0 {
			return b.FinalScore()
		}
		return -s.solve(b.Pass(), -beta, -alpha, n, true)
	}
	return best
}

// solve2 is solve with two empty squares, the commonest node: each square
// tried in turn (order does not matter), the last move's node counted as
// every node is.
func (s *searcher) solve2(b Board, alpha, beta int, passed bool) int {
	e := b.Empties()
	x := bits.TrailingZeros64(e)
	y := bits.TrailingZeros64(e & (e - 1))
	best := -infinity
	if f := Flips(b.P, b.O, x); f != 0 {
		if s.tick() {
			return 0
		}
		best = -lastMove(b.Play(x, f))
		if best >= beta {
			return best
		}
	}
	if f := Flips(b.P, b.O, y); f != 0 {
		if s.tick() {
			return 0
		}
		best = max(best, -lastMove(b.Play(y, f)))
	}
	if best != -infinity {
		return best
	}
	if passed {
		return b.FinalScore()
	}
	return -s.solve2(b.Pass(), -beta, -alpha, true)
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
