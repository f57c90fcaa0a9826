package engine

import (
	"math/bits"
	"math/rand/v2"
	"time"
)

// Limits bound one search. Time limits are the Control's.
type Limits struct {
	Depth int    // plies; 0: none (up to the end of the game)
	Nodes uint64 // nodes searched at most; 0: none
	// Level is the strength, 0 (a beginner's move at once) to MaxLevel
	// (full strength); see levelDepth.
	Level int
	// SolveEmpties: with this many empty squares or fewer the exact solver
	// is taken (after a short middle-game search for move ordering).
	SolveEmpties int
}

// MaxLevel is the full strength, the default.
const MaxLevel = 20

// Pass and NoMove are the moves of a result that is not a square: the side
// to move must pass, or the game is over.
const (
	Pass   = -1
	NoMove = -2
)

// Info is the state of a search after an iteration, as the protocol's info
// line tells it.
type Info struct {
	Depth int
	// Score is the expected final disc margin for the side to move: an
	// estimate (the evaluation's, rounded) or, when Exact, the margin with
	// best play.
	Score int
	Exact bool
	Nodes uint64
	Time  time.Duration
	PV    []int // squares, Pass for a pass
}

// Result is a search's answer.
type Result struct {
	Move   int // a square, Pass or NoMove
	Info       // of the last completed iteration (zero if none)
	Ponder int // the reply expected (PV[1]), or NoMove
}

// Searcher searches positions with its own transposition table; one
// goroutine at a time.
type Searcher struct {
	tt  *table
	rng *rand.Rand
}

// NewSearcher returns a searcher with a table of about hashMB megabytes and
// a random source (for the weaker levels) seeded with seed.
func NewSearcher(hashMB int, seed uint64) *Searcher {
	return &Searcher{tt: newTable(hashMB), rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Clear forgets what earlier searches found (a new game).
func (z *Searcher) Clear() { z.tt.clear() }

// Search finds a move for b within lim and ctl, calling info (if not nil)
// after each completed iteration.
func (z *Searcher) Search(b Board, lim Limits, ctl *Control, info func(Info)) Result {
	start := time.Now()
	res := Result{Move: NoMove, Ponder: NoMove}
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if Moves(b.O, b.P) != 0 {
			res.Move = Pass
		}
		return res
	}
	if lim.Level <= 0 {
		res.Move = z.beginnerMove(b, mv)
		return res
	}
	z.tt.newSearch()
	s := &searcher{tt: z.tt, ctl: ctl, maxNodes: lim.Nodes}
	n := b.NumEmpties()
	maxDepth := n
	if lim.Depth > 0 && lim.Depth < maxDepth {
		maxDepth = lim.Depth
	}
	if lim.Level < MaxLevel {
		if d := levelDepth(lim.Level); d < maxDepth {
			maxDepth = d
		}
	}
	solve := n <= lim.SolveEmpties && lim.Depth == 0 && (lim.Level >= MaxLevel || n <= lim.Level/2)
	var buf [32]scored
	list := order(b, mv, -1, true, buf[:])
	res.Move = list[0].sq // a legal move whatever happens
	report := func(depth, score int, exact bool) {
		res.Info = Info{Depth: depth, Score: score, Exact: exact, Nodes: s.nodes, Time: time.Since(start)}
		res.PV = z.principalVariation(b, res.Move, depth, exact)
		if info != nil {
			info(res.Info)
		}
	}
	for depth := 1; depth <= maxDepth; depth++ {
		if solve && depth > preSolveDepth(n) {
			break
		}
		best, score, done := s.root(b, list, depth, false, -infinity, infinity)
		if best < 0 {
			break // stopped before the first move was searched
		}
		res.Move = list[best].sq
		promote(list, best)
		exact := depth >= n
		if exact {
			report(depth, score/scale, true)
		} else {
			report(depth, roundDiscs(score), false)
		}
		if !done || exact || ctl.pastSoft() {
			solve = false
			break
		}
	}
	if solve && !s.aborted {
		z.solveRoot(b, s, list, n, &res, report)
	}
	if lim.Level < MaxLevel && !s.aborted && !(res.Exact && n <= lim.Level/2) {
		res.Move = z.noisyMove(b, list, maxDepth, lim.Level)
	}
	res.Nodes = s.nodes
	res.Time = time.Since(start)
	if len(res.PV) > 0 && res.PV[0] != res.Move {
		res.PV = []int{res.Move}
	}
	if len(res.PV) > 1 {
		res.Ponder = res.PV[1]
	}
	return res
}

// solveRoot runs the exact solver: win/loss/draw first (a null window
// around 0), then the exact margin.
func (z *Searcher) solveRoot(b Board, s *searcher, list []scored, n int, res *Result, report func(int, int, bool)) {
	best, wld, _ := s.root(b, list, n, true, -1, 1)
	if s.aborted || best < 0 {
		return
	}
	res.Move = list[best].sq
	promote(list, best)
	lo, hi := -65, 65
	switch {
	case wld > 0:
		lo = 0
	case wld < 0:
		hi = 0
	default:
		lo, hi = -1, 1
	}
	if lo == -1 { // a draw: the exact margin is 0
		report(n, 0, true)
		return
	}
	best, score, done := s.root(b, list, n, true, lo, hi)
	if !done || best < 0 {
		return
	}
	res.Move = list[best].sq
	promote(list, best)
	report(n, score, true)
}

// preSolveDepth is how deep the middle-game search goes, to order the root
// moves, before the solver takes a position with n empties.
func preSolveDepth(n int) int {
	switch {
	case n <= 10:
		return 2
	case n <= 20:
		return n / 3
	}
	return n - 12
}

// root searches the root moves of b in list, depth plies deep (or, when
// end is set, exactly to the end of the game) within (alpha, beta). It
// returns the best move's index and score and whether every move was
// searched; the index is -1 if the search ended before the first.
func (s *searcher) root(b Board, list []scored, depth int, end bool, alpha, beta int) (int, int, bool) {
	best, a := -1, alpha
	n := b.NumEmpties()
	child := func(c Board, lo, hi int) int {
		if end {
			return -s.solve(c, -hi, -lo, n-1, false)
		}
		return -s.pvs(c, depth-1, -hi, -lo)
	}
	for i := range list {
		m := &list[i]
		c := b.Play(m.sq, m.flips)
		var v int
		if i == 0 {
			v = child(c, a, beta)
		} else {
			v = child(c, a, a+1)
			if v > a && v < beta && !s.aborted {
				v = child(c, a, beta)
			}
		}
		if s.aborted {
			return best, a, false
		}
		m.score = v
		if v > a || best < 0 {
			best = i
			if v > a {
				a = v
			}
			if a >= beta {
				break
			}
		}
	}
	return best, a, true
}

// promote moves list[i] to the front, keeping the others' order.
func promote(list []scored, i int) {
	m := list[i]
	copy(list[1:i+1], list[:i])
	list[0] = m
}

func roundDiscs(score int) int {
	d := score / scale
	if r := score % scale; r >= scale/2 {
		d++
	} else if r <= -scale/2 {
		d--
	}
	return max(-64, min(64, d))
}

// principalVariation follows the table from the best move: the moves it
// remembers, a pass where the side to move has none, up to depth plies.
func (z *Searcher) principalVariation(b Board, first, depth int, exact bool) []int {
	pv := []int{first}
	b = b.Play(first, Flips(b.P, b.O, first))
	for len(pv) < depth && len(pv) < 60 {
		mv := Moves(b.P, b.O)
		if mv == 0 {
			if Moves(b.O, b.P) == 0 {
				break
			}
			pv = append(pv, Pass)
			b = b.Pass()
			continue
		}
		e, ok := z.tt.probe(b)
		if !ok || e.move < 0 || mv&(1<<uint(e.move)) == 0 || (exact && e.kind&kindEnd == 0 && int(e.depth) < b.NumEmpties()) {
			break
		}
		sq := int(e.move)
		pv = append(pv, sq)
		b = b.Play(sq, Flips(b.P, b.O, sq))
	}
	return pv
}

// levelDepth is the depth of a level below the full strength: 1 ply at
// level 1 up to 8 plies at level 19.
func levelDepth(level int) int { return 1 + level*7/19 }

// noiseOf is the noise a level adds to its moves' scores, in hundredths of
// a disc: up to 14 discs at level 1, 4 hundredths at level 19.
func noiseOf(level int) int { return (MaxLevel - level) * (MaxLevel - level) * 4 }

// noisyMove scores every root move depth plies deep, adds the level's
// noise to each score and picks the best of them.
func (z *Searcher) noisyMove(b Board, list []scored, depth, level int) int {
	s := &searcher{tt: z.tt, ctl: new(Control)}
	amp := noiseOf(level)
	best, bestV := list[0].sq, -infinity*2
	for _, m := range list {
		v := -s.pvs(b.Play(m.sq, m.flips), depth-1, -infinity, infinity)
		v += z.rng.IntN(2*amp+1) - amp
		if v > bestV {
			best, bestV = m.sq, v
		}
	}
	return best
}

// beginnerMove is level 0's move: a random one, as a beginner who knows
// the rules and nothing more would play, drawn (three times as often as another
// square) to the squares beside an empty corner that give the corner away.
func (z *Searcher) beginnerMove(b Board, mv uint64) int {
	var sqs [32]int
	var weights [32]int
	n, total := 0, 0
	risky := beginnerLure(b.Empties())
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		w := 1
		if risky&(1<<uint(sq)) != 0 {
			w = beginnerLureWeight
		}
		sqs[n], weights[n] = sq, w
		total += w
		n++
	}
	r := z.rng.IntN(total)
	for i := 0; i < n; i++ {
		if r < weights[i] {
			return sqs[i]
		}
		r -= weights[i]
	}
	return sqs[n-1]
}

const beginnerLureWeight = 3

// beginnerLure returns the X and C squares of the empty corners.
func beginnerLure(empty uint64) uint64 {
	var x uint64
	for i, c := range cornerSq {
		if empty&(1<<uint(c)) != 0 {
			x |= xOf[i] | cOf[i]
		}
	}
	return x
}
