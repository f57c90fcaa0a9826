package review

import (
	"math"

	"github.com/usid/usid/session"
)

// The judgement of a move is made on win rates, not centipawns: a 300 cp
// drop matters in a level position and hardly at all in a won one.
//
// The curve is the one shogi engines and GUIs use to turn an evaluation
// into a win rate (the "Ponanza constant" 600):
//
//	winrate(cp) = 1 / (1 + exp(-cp/600))
//
// A mate score is a win rate of 1 for the side that mates and 0 for the
// side that is mated, whatever the distance. Chess engines' centipawns are
// on another scale: a chess game's curve is lichess's (chessScale, 271.6
// in place of 600), with the same thresholds.
//
// A move m played from a position P is compared with the engine's best
// move b from the same P (see docs/game-analysis.md, "How a verdict is computed"): both
// positions reached, P+b and P+m, are searched with the same limits and
// have the same side to move, so the engine's side-to-move bias at a fixed
// search is in both and cancels. For the mover:
//
//	drop = max(0, winrate(−score(P+b)) − winrate(−score(P+m)))
//
// (score(X) is from X's side to move, the mover's opponent). m = b is a
// drop of 0. The judgement compares drop with the thresholds (by default
// 0.15 blunder, 0.10 mistake, 0.05 inaccuracy). The loss reported is
// 2·drop, the drop of the mover's winning chances 2·winrate − 1 (0..2),
// as it always was.

// Default thresholds: the win-rate drops of an inaccuracy, a mistake and a
// blunder (BENCHMARKS.md, "Game analysis verdicts", measured them at the default limit).
const (
	DefaultInaccuracy = 0.05
	DefaultMistake    = 0.10
	DefaultBlunder    = 0.15

	winRateScale = 600.0
)

// Thresholds are the win-rate drops (0..1) from which a move is an
// inaccuracy, a mistake, a blunder.
type Thresholds struct {
	Inaccuracy float64 `json:"inaccuracy"`
	Mistake    float64 `json:"mistake"`
	Blunder    float64 `json:"blunder"`
}

// DefaultThresholds are the thresholds a request that names none gets.
func DefaultThresholds() Thresholds {
	return Thresholds{Inaccuracy: DefaultInaccuracy, Mistake: DefaultMistake, Blunder: DefaultBlunder}
}

// Judgements of a played move.
const (
	JudgementOK         = "ok"
	JudgementInaccuracy = "inaccuracy"
	JudgementMistake    = "mistake"
	JudgementBlunder    = "blunder"
)

// WinRate is the win rate for the side whose score s is, on the curve
// above: 1 when it mates, 0 when it is mated, 0.5 without a score.
func WinRate(s *session.Score) float64 { return winRate(s, winRateScale) }

// winRate is WinRate on the curve of the given scale (a game's: game.scale).
func winRate(s *session.Score, scale float64) float64 {
	if s == nil {
		return 0.5
	}
	if s.Mate != nil {
		switch {
		case *s.Mate > 0, *s.Mate == 0 && s.MateSign == "+":
			return 1
		default: // mated (mate 0 without a sign: the side to move is mated)
			return 0
		}
	}
	if s.CP == nil {
		return 0.5
	}
	return 1 / (1 + math.Exp(-float64(*s.CP)/scale))
}

// Chances are the winning chances 2·winrate − 1 of the side whose score s
// is: +1 when it mates, −1 when it is mated.
func Chances(s *session.Score) float64 { return 2*WinRate(s) - 1 }

// Judge judges a move by its mover's drop of win rate: best is the mover's
// score after the engine's best move, played the mover's score after the
// move played (both from the mover's side, from searches with the same
// limits and the same side to move). drop is in win rate (0..1).
func Judge(best, played *session.Score, th Thresholds) (drop float64, judgement string) {
	return judgeOn(best, played, th, winRateScale)
}

// judgeOn is Judge on the curve of the given scale (a game's).
func judgeOn(best, played *session.Score, th Thresholds, scale float64) (drop float64, judgement string) {
	drop = max(0, winRate(best, scale)-winRate(played, scale))
	return drop, th.judge(drop)
}

func (th Thresholds) judge(drop float64) string {
	switch {
	case drop >= th.Blunder:
		return JudgementBlunder
	case drop >= th.Mistake:
		return JudgementMistake
	case drop >= th.Inaccuracy:
		return JudgementInaccuracy
	}
	return JudgementOK
}

// check refuses thresholds that are not 0 < inaccuracy ≤ mistake ≤
// blunder ≤ 1.
func (th Thresholds) check() *session.Error {
	if !(th.Inaccuracy > 0 && th.Inaccuracy <= th.Mistake && th.Mistake <= th.Blunder && th.Blunder <= 1) {
		return invalid("thresholds: win-rate drops with 0 < inaccuracy ≤ mistake ≤ blunder ≤ 1 (default 0.05, 0.10, 0.15)")
	}
	return nil
}

// forcedResult is the answer for a position whose only move is f, from
// res, the search of the position after f: its lines led by f, their
// scores turned to this side's view (a mate a ply further), f the best
// move.
func forcedResult(res *session.AnalyzeResult, f string) *session.AnalyzeResult {
	out := *res
	out.BestMove, out.Ponder = f, ""
	out.Lines = make([]*session.Line, len(res.Lines))
	for i, line := range res.Lines {
		l := *line
		l.PV = append([]string{f}, l.PV...)
		l.Score = negate(l.Score)
		if m := l.Score; m != nil && m.Mate != nil && *m.Mate != 0 {
			v := *m.Mate + 1
			if *m.Mate < 0 {
				v = *m.Mate - 1
			}
			m.Mate = &v
		}
		out.Lines[i] = &l
	}
	return &out
}

// negate turns a score to the other side's point of view.
func negate(s *session.Score) *session.Score {
	if s == nil {
		return nil
	}
	out := &session.Score{}
	if s.CP != nil {
		v := -*s.CP
		out.CP = &v
	}
	if s.Mate != nil {
		v := -*s.Mate
		out.Mate = &v
		switch s.MateSign {
		case "+":
			out.MateSign = "-"
		case "-":
			out.MateSign = "+"
		}
	}
	return out
}

// round keeps d decimals: the numbers are for people and graphs.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

// Summary counts each side's judgements.
type Summary struct {
	Black SideSummary `json:"black"`
	White SideSummary `json:"white"`
}

// SideSummary is one side's part of a Summary, over its judged moves.
type SideSummary struct {
	Moves        int `json:"moves"` // moves judged
	Inaccuracies int `json:"inaccuracies"`
	Mistakes     int `json:"mistakes"`
	Blunders     int `json:"blunders"`
	// AverageLoss is the mean drop of winning chances over the judged moves.
	AverageLoss float64 `json:"average_loss"`
}

func summarize(plies []*Ply) *Summary {
	var s Summary
	var sum [2]float64
	for _, p := range plies {
		if p == nil || p.Loss == nil {
			continue
		}
		side, i := &s.Black, 0
		if p.SideToMove == "w" {
			side, i = &s.White, 1
		}
		side.Moves++
		sum[i] += *p.Loss
		switch p.Judgement {
		case JudgementInaccuracy:
			side.Inaccuracies++
		case JudgementMistake:
			side.Mistakes++
		case JudgementBlunder:
			side.Blunders++
		}
	}
	if s.Black.Moves > 0 {
		s.Black.AverageLoss = round(sum[0]/float64(s.Black.Moves), 4)
	}
	if s.White.Moves > 0 {
		s.White.AverageLoss = round(sum[1]/float64(s.White.Moves), 4)
	}
	return &s
}
