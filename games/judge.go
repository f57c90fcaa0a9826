package games

import (
	"math"

	"github.com/usid/usid/session"
)

// The judgement of a move is made on winning chances, not centipawns: a
// 300 cp drop matters in a level position and hardly at all in a won one.
//
// The curve is the one shogi engines and GUIs use to turn an evaluation
// into a win rate (the "Ponanza constant" 600):
//
//	winrate(cp) = 1 / (1 + exp(-cp/600))
//
// and a move is judged, as lichess and lishogi do, by the drop of the
// mover's winning chances 2·winrate − 1 (from −1, lost, to +1, won) between
// the position before the move and the position after it, both as the
// engine evaluated them:
//
//	drop ≥ 0.3: blunder; ≥ 0.2: mistake; ≥ 0.1: inaccuracy; else ok.
//
// A mate score counts as won (+1) or lost (−1) outright. The loss reported
// is that drop (0 when the move kept or improved the chances), so it is in
// the same unit for every side and engine.
const (
	winRateScale = 600.0

	thresholdInaccuracy = 0.1
	thresholdMistake    = 0.2
	thresholdBlunder    = 0.3
)

// Judgements of a played move.
const (
	JudgementOK         = "ok"
	JudgementInaccuracy = "inaccuracy"
	JudgementMistake    = "mistake"
	JudgementBlunder    = "blunder"
)

// WinRate is the win rate for the side whose score s is, on the curve above.
func WinRate(s *session.Score) float64 { return (Chances(s) + 1) / 2 }

// Chances are the winning chances 2·winrate − 1 of the side whose score s
// is: +1 when it mates, −1 when it is mated.
func Chances(s *session.Score) float64 {
	if s.Mate != nil {
		switch {
		case *s.Mate > 0, *s.Mate == 0 && s.MateSign == "+":
			return 1
		default: // mated (mate 0 without a sign: the side to move is mated)
			return -1
		}
	}
	if s.CP == nil {
		return 0
	}
	return 2/(1+math.Exp(-float64(*s.CP)/winRateScale)) - 1
}

// Judge judges a move by the drop of its mover's winning chances: before is
// the mover's score in the position it moved from, after the mover's score
// in the position its move reached.
func Judge(before, after *session.Score) (loss float64, judgement string) {
	loss = max(0, Chances(before)-Chances(after))
	switch {
	case loss >= thresholdBlunder:
		judgement = JudgementBlunder
	case loss >= thresholdMistake:
		judgement = JudgementMistake
	case loss >= thresholdInaccuracy:
		judgement = JudgementInaccuracy
	default:
		judgement = JudgementOK
	}
	return loss, judgement
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
