package engine

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// The middle-game search: principal variation search (negascout) on
// hundredths of a disc, with the transposition table and move ordering
// (the table's move, then corners and few replies for the opponent). A
// side without a move passes without using up depth; an ended game scores
// its exact final margin.

const (
	scale    = 100   // hundredths of a disc per disc
	infinity = 30000 // beyond every score
)

// Control is how a search is told to end from outside: Stop at once, or
// the hard deadline (unix nanoseconds, 0 for none) passed; Soft is when no
// new iteration should begin. The protocol sets them while the search
// runs (ponderhit gives a pondering search its deadlines). Safe for
// concurrent use: the protocol's goroutine sets, the search reads.
type Control struct {
	stop atomic.Bool
	hard atomic.Int64
	soft atomic.Int64
	// late is set by a timer at the hard deadline, so that the search
	// learns it from a flag it reads every few nodes rather than from the
	// clock it reads more rarely: on a slow or starved machine (the race
	// detector, a busy host) a thousand nodes can take a tenth of a second.
	late  atomic.Bool
	mu    sync.Mutex
	gen   uint64 // which SetDeadlines armed timer (a stale timer sets nothing)
	timer *time.Timer
}

// Stop asks the search to end as soon as it can.
func (c *Control) Stop() { c.stop.Store(true) }

// SetDeadlines sets when the search must end (hard) and when it should
// begin no new iteration (soft); a zero time is none. It replaces the
// deadlines set before.
func (c *Control) SetDeadlines(soft, hard time.Time) {
	c.soft.Store(nanos(soft))
	c.hard.Store(nanos(hard))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.gen++
	c.late.Store(false)
	if hard.IsZero() {
		return
	}
	gen := c.gen
	c.timer = time.AfterFunc(time.Until(hard), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen == gen {
			c.late.Store(true)
		}
	})
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// pastSoft reports whether the soft deadline has passed.
func (c *Control) pastSoft() bool {
	s := c.soft.Load()
	return s != 0 && time.Now().UnixNano() >= s
}

// searcher is one search: its table, counters and limits. It is used by one
// goroutine.
type searcher struct {
	tt       *table
	ctl      *Control
	nodes    uint64
	maxNodes uint64 // 0: none
	aborted  bool
}

// checkEvery is how many nodes pass between looks at the stop flags (the
// protocol's stop, the hard deadline's timer), clockEvery between looks at
// the clock itself (the deadline's own check, should its timer be late).
const (
	checkEvery = 64
	clockEvery = 1024
)

// tick counts a node and reports whether the search must end.
func (s *searcher) tick() bool {
	s.nodes++
	if s.maxNodes != 0 && s.nodes > s.maxNodes {
		s.nodes--
		s.aborted = true
	}
	if s.nodes%checkEvery == 0 && !s.aborted {
		if s.ctl.stop.Load() || s.ctl.late.Load() {
			s.aborted = true
		} else if h := s.ctl.hard.Load(); h != 0 && s.nodes%clockEvery == 0 && time.Now().UnixNano() >= h {
			s.aborted = true
		}
	}
	return s.aborted
}

// scored is a move and its ordering score.
type scored struct {
	sq    int
	flips uint64
	score int
}

// squareValue orders moves by their square: corners first, then edges and
// the inner squares, the X squares last.
var squareValue = [64]int{
	100, -20, 10, 5, 5, 10, -20, 100,
	-20, -50, -2, -2, -2, -2, -50, -20,
	10, -2, 1, 1, 1, 1, -2, 10,
	5, -2, 1, 0, 0, 1, -2, 5,
	5, -2, 1, 0, 0, 1, -2, 5,
	10, -2, 1, 1, 1, 1, -2, 10,
	-20, -50, -2, -2, -2, -2, -50, -20,
	100, -20, 10, 5, 5, 10, -20, 100,
}

// order lists the moves mv of b, best first: the table's move, then by
// square and (when mobility is set) by how few moves they leave the
// opponent, fastest first.
func order(b Board, mv uint64, ttMove int, mobility bool, buf []scored) []scored {
	list := buf[:0]
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		f := Flips(b.P, b.O, sq)
		sc := squareValue[sq]
		if mobility {
			c := b.Play(sq, f)
			sc -= 16 * count(Moves(c.P, c.O))
		}
		if sq == ttMove {
			sc = 1 << 20
		}
		list = append(list, scored{sq, f, sc})
	}
	sortScored(list)
	return list
}

// sortScored sorts moves by score, highest first (insertion sort: a dozen
// moves).
func sortScored(list []scored) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].score > list[j-1].score; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// pvs returns the score of b searched depth plies deep within (alpha,
// beta): exact inside the window, a bound outside it.
func (s *searcher) pvs(b Board, depth, alpha, beta int) int {
	if s.tick() {
		return 0
	}
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if Moves(b.O, b.P) == 0 {
			return b.FinalScore() * scale
		}
		return -s.pvs(b.Pass(), depth, -beta, -alpha)
	}
	if depth <= 0 {
		return evaluate(b, mv, Moves(b.O, b.P))
	}
	ttMove := -1
	if e, ok := s.tt.probe(b); ok {
		ttMove = int(e.move)
		if v, cut := e.cut(depth, alpha, beta); cut {
			return v
		}
	}
	var buf [32]scored
	list := order(b, mv, ttMove, depth >= 3, buf[:])
	best, bestSq, a := -infinity, -1, alpha
	for i, m := range list {
		c := b.Play(m.sq, m.flips)
		var v int
		if i == 0 {
			v = -s.pvs(c, depth-1, -beta, -a)
		} else {
			v = -s.pvs(c, depth-1, -a-1, -a)
			if v > a && v < beta && !s.aborted {
				v = -s.pvs(c, depth-1, -beta, -a)
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
	s.tt.store(b, depth, best, boundOf(best, alpha, beta), bestSq)
	return best
}

// cut returns the entry's score when it settles a search of depth plies in
// (alpha, beta); an exact endgame score settles any depth.
func (e entry) cut(depth, alpha, beta int) (int, bool) {
	if e.kind&kindEnd != 0 {
		return e.bounds(int(e.score)*scale, alpha, beta)
	}
	if int(e.depth) < depth {
		return 0, false
	}
	return e.bounds(int(e.score), alpha, beta)
}

// bounds returns v if the entry's bound on it settles the window.
func (e entry) bounds(v, alpha, beta int) (int, bool) {
	switch {
	case e.kind&boundExact == boundExact:
		return v, true
	case e.kind&boundLower != 0 && v >= beta:
		return v, true
	case e.kind&boundUpper != 0 && v <= alpha:
		return v, true
	}
	return 0, false
}

func boundOf(v, alpha, beta int) uint8 {
	switch {
	case v <= alpha:
		return boundUpper
	case v >= beta:
		return boundLower
	}
	return boundExact
}
