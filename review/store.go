package review

import (
	"strings"
	"unsafe"

	"github.com/usid/usid/session"
)

// What a job keeps, and its size. A job keeps the game (its start and its
// moves, 4 bytes each) and, for each position analysed, a result: the
// engine's score, best move and line, and nothing that can be worked out
// again from the game: the SFEN, the side to move, the notation and the
// judgement of each move are computed when the job is read (view replays
// the game, about a millisecond for 1024 moves). So a queued or cancelled
// job of 1024 moves is about 5 KB, and each position analysed adds about
// 100 bytes plus its line.
//
// Sizes are counted in bytes (Manager's bounds): the allocations of the
// job and of each result, rounded up as the runtime rounds them.
// TestCancelledJobsMemory checks the count against the heap.

// maxPV bounds the moves of a position's line a job keeps.
const maxPV = 32

type scoreKind uint8

const (
	noScore scoreKind = iota
	cpScore
	mateScore
)

// Limits a search may emulate (session.AnalyzeResult.Emulated), as bits.
var emulatedNames = [...]string{"movetime", "depth", "nodes"}

// limitedBit, among the emulated bits: the search was cut to its owner's
// engine time left (session.AnalyzeResult.LimitedByBudget).
const limitedBit = 1 << 7

// result is one position's analysis: the side to move's score, the best
// move and the line (moves separated by spaces).
type result struct {
	bestmove  string
	pv        string
	nodes     int64
	depth     int32
	score     int32 // cp, or the mate distance in plies
	kind      scoreKind
	mateSign  byte // '+', '-' or 0 (session.Score.MateSign)
	emulated  uint8
	cached    bool
	checkmate bool   // the side to move is checkmated: judged by the rules
	draw      ending // the game is drawn here by the rules (chess)
	// The score of the position after bestmove, from its side to move,
	// when the move played was another (noScore otherwise).
	best         int32
	bestKind     scoreKind
	bestMateSign byte
}

// Sizes, in bytes, as the heap holds them: a result is one allocation of
// its size class, a pointer in the job's results, and its two strings,
// each rounded up to the next 16 bytes at most.
const (
	resultBytes = 64 + 8 + 2*16
	// jobBytes is a job with its context, channels, id, map entry and
	// summary, before its moves and results.
	jobBytes = int64(unsafe.Sizeof(job{})) + 1024
	// maxResultBytes is the most one result can take: the line at maxPV
	// moves of at most 5 characters and a space, "resign" as best move.
	maxResultBytes = resultBytes + maxPV*6 + 6
)

func (r *result) bytes() int64 { return resultBytes + int64(len(r.pv)+len(r.bestmove)) }

// resultOf keeps what a job needs of an answer. Strings are copied: they
// may share the memory of a larger engine line.
func resultOf(res *session.AnalyzeResult) *result {
	r := &result{bestmove: strings.Clone(res.BestMove), cached: res.Cached}
	if res.LimitedByBudget {
		r.emulated |= limitedBit
	}
	for _, e := range res.Emulated {
		for i, n := range emulatedNames {
			if e == n {
				r.emulated |= 1 << i
			}
		}
	}
	if len(res.Lines) == 0 {
		return r
	}
	l := res.Lines[0]
	r.depth, r.nodes = int32(min(l.Depth, 1<<30)), l.Nodes
	r.pv = strings.Join(l.PV[:min(len(l.PV), maxPV)], " ")
	r.kind, r.score, r.mateSign = packScore(l.Score)
	return r
}

// setBest keeps s, the score of the position after the best move.
func (r *result) setBest(s *session.Score) {
	r.bestKind, r.best, r.bestMateSign = packScore(s)
}

func packScore(s *session.Score) (scoreKind, int32, byte) {
	switch {
	case s == nil:
	case s.Mate != nil:
		var sign byte
		if s.MateSign != "" {
			sign = s.MateSign[0]
		}
		return mateScore, int32(max(min(*s.Mate, 1<<30), -1<<30)), sign
	case s.CP != nil:
		return cpScore, int32(max(min(*s.CP, 1<<30), -1<<30)), 0
	}
	return noScore, 0, 0
}

func unpackScore(kind scoreKind, v int32, sign byte) *session.Score {
	n := int(v)
	switch kind {
	case cpScore:
		return &session.Score{CP: &n}
	case mateScore:
		s := &session.Score{Mate: &n}
		if sign != 0 {
			s.MateSign = string(sign)
		}
		return s
	}
	return nil
}

// ended is the result of a position where the game ends by the rules:
// the side to move is mated (mate 0), or a draw (0).
func ended(e ending) *result {
	switch e {
	case endCheckmate:
		return &result{kind: mateScore, score: 0, mateSign: '-', checkmate: true}
	case endLost: // counted: the side to move has lost, as if mated
		return &result{kind: mateScore, score: 0, mateSign: '-'}
	case endWon:
		return &result{kind: mateScore, score: 0, mateSign: '+'}
	}
	return &result{kind: cpScore, draw: e}
}

// sideScore is the side to move's score, or nil.
func (r *result) sideScore() *session.Score { return unpackScore(r.kind, r.score, r.mateSign) }

// bestScore is the score of the position after the best move, from its
// side to move (the mover's opponent), or nil.
func (r *result) bestScore() *session.Score { return unpackScore(r.bestKind, r.best, r.bestMateSign) }

// gameBytes is the size of a job's game: its start as sent to an engine
// (startLen bytes) and its moves (a string of at most 8 bytes each), with
// the game's own value.
func gameBytes(startLen int, moves int) int64 {
	return int64(startLen) + 16 + moveBytes*int64(moves) + 16 + gameValueBytes
}

// moveBytes is a move as a job keeps it: a string header and its bytes.
const moveBytes = int64(unsafe.Sizeof("")) + 8

// gameValueBytes is a game's value beside its start and moves: the
// gameRec and its checked start position (a board of at most 81 squares
// with hands, or a chess position), generously.
const gameValueBytes = int64(unsafe.Sizeof(gameRec{})) + 1024

// worstBytes is the most a job of the game can come to with every
// position analysed.
func worstBytes(startLen int, moves int) int64 {
	positions := int64(moves + 1)
	return jobBytes + gameBytes(startLen, moves) + 8*positions + 16 + positions*maxResultBytes
}

// renderLocked shows the job's positions: one entry per position, nil for
// one not analysed yet. It replays the game from its start.
func (j *job) renderLocked() []*Ply {
	out := make([]*Ply, j.plies+1)
	if j.results == nil {
		return out
	}
	c := j.g.replay()
	for i := range out {
		if r := j.results[i]; r != nil {
			var next *result
			if i+1 < len(j.results) {
				next = j.results[i+1]
			}
			out[i] = j.plyOf(i, c, r, next)
		}
		if i < j.plies {
			c.next()
		}
	}
	return out
}

// renderOneLocked shows position i alone.
func (j *job) renderOneLocked(i int) *Ply {
	c := j.g.replay()
	for range i {
		c.next()
	}
	var next *result
	if i+1 < len(j.results) {
		next = j.results[i+1]
	}
	return j.plyOf(i, c, j.results[i], next)
}

// plyOf shows position i (c, the game replayed to it) with its result r;
// next is the next position's, if analysed, for the judgement of the move
// played.
func (j *job) plyOf(i int, c cursor, r, next *result) *Ply {
	p := &Ply{Ply: i, BestMove: r.bestmove, Depth: int(r.depth), Nodes: r.nodes,
		Cached: r.cached, Checkmate: r.checkmate}
	if r.draw != endNone {
		p.Draw = drawNames[r.draw]
	}
	for b, n := range emulatedNames {
		if r.emulated&(1<<b) != 0 {
			p.Emulated = append(p.Emulated, n)
		}
	}
	p.LimitedByBudget = r.emulated&limitedBit != 0
	if r.pv != "" {
		p.PV = strings.Fields(r.pv)
	}
	if i < j.plies {
		p.Move = j.g.move(i)
	}
	c.show(p, j.notation)
	// Evaluations are from the side that moves first (evalSide): a score
	// of the other side to move is turned round.
	first := p.SideToMove == j.g.evalSide()
	score := r.sideScore()
	if score != nil {
		p.Eval = score
		if !first {
			p.Eval = negate(score)
		}
		wr := round(winRate(p.Eval, j.g.scale()), 4)
		p.WinRate = &wr
	}
	if i < j.plies {
		if bs := r.bestScore(); bs != nil {
			p.BestEval = bs // from the opponent's side, who is to move there
			if first {
				p.BestEval = negate(bs)
			}
		}
		if next != nil {
			j.judge(p, r, next)
		}
	}
	return p
}

// judge judges the move played from p (its result r) once the next
// position (its result next) is analysed. See Judge for the comparison.
func (j *job) judge(p *Ply, r, next *result) {
	score, after := r.sideScore(), next.sideScore()
	if score == nil || after == nil {
		// A book move, or an engine that gave no score: nothing to compare.
		p.Unjudged = "no_evaluation"
		return
	}
	played := negate(after) // the mover's, its opponent being to move
	var best *session.Score
	switch {
	case r.bestmove == p.Move:
		best = played // the engine's own choice loses nothing
	case j.g.isMove(r.bestmove):
		bs := r.bestScore()
		if bs == nil {
			p.Unjudged = "no_evaluation"
			return
		}
		best = negate(bs)
	default:
		// The engine resigns or declares a win: no best move to play,
		// and the position's own score is the mover's best (mated: 0, a
		// win: 1).
		best = score
	}
	drop, judgement := judgeOn(best, played, j.th, j.g.scale())
	wl, loss := round(drop, 4), round(2*drop, 4)
	p.WinRateLoss, p.Loss, p.Judgement = &wl, &loss, judgement
}
