// The side an engine's scores are from. USI, UCI and USI-X give a score
// from the side to move's point of view; an engine seen (an othello engine:
// −25 at the start, −44 after f5) gives it from the other side's, and a
// GUI that believed it would show every evaluation upside down. The probe
// searches two positions one side has clearly won, the winner to move in
// one and the loser in the other, and reads the signs: from the side to
// move they differ (+, −); from the other side too (−, +); fixed to one
// side, they agree (+, + from the winner's side; −, − from the loser's).
// Where they agree, a third position, won by the other side, tells a
// fixed side (its sign turns) from a score that is the same everywhere (a
// constant: unknown).

package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/usid/usid/game"
	"github.com/usid/usid/usi"
)

// scoreSideBound is how long one of the two searches may take before usid
// stops it (a depth limit the engine may not honour; a slow engine).
const scoreSideBound = 5 * time.Second

// scoreSide learns Profile.ScoreSide.
func (r *runner) scoreSide(ctx context.Context) error {
	p := r.prof
	unknown := func(why string) error {
		p.ScoreSide = ScoreSideUnknown
		p.set("score_side", SourceProbed, why+"; scores are taken as the protocol's, from the side to move")
		return nil
	}
	if p.MateOnly {
		return unknown("the engine does not analyse")
	}
	if r.g.Won == "" || r.g.Lost == "" || r.g.Reversed == "" {
		return unknown("the game (" + r.g.g.Name() + ") has no decided positions to probe")
	}
	// A small search: a native depth, else the plain timed search.
	g := r.g.plainGo
	if p.Go["depth"] == Native {
		g = usi.Go{Depth: probeDepth}
	}
	// sign searches text and reads its score's sign from the side to move.
	sign := func(text string) (side string, sign int, seen string, why string, err error) {
		q, cerr := r.g.g.Check(text, "", nil)
		if cerr != nil {
			return "", 0, "", fmt.Sprintf("the game's decided position %q: %v", text, cerr), nil
		}
		o, err := r.search(ctx, text, g, scoreSideBound)
		switch {
		case err != nil:
			return "", 0, "", "", err
		case o.err != nil:
			return "", 0, "", fmt.Sprintf("%s: the engine failed: %v", goLine(g), o.err), nil
		case !o.scored:
			return "", 0, "", fmt.Sprintf("%s gave no score", goLine(g)), nil
		}
		seen = scoreText(o.score)
		if sign = clearSign(o.score, o.scale); sign == 0 {
			why = fmt.Sprintf("a position one side has clearly won scored %s: not clear", seen)
		}
		return q.SideToMove(), sign, seen, why, nil
	}
	var signs [2]int
	var sides, seen [2]string
	for i, text := range []string{r.g.Won, r.g.Lost} {
		var why string
		var err error
		if sides[i], signs[i], seen[i], why, err = sign(text); err != nil {
			return err
		} else if why != "" {
			return unknown(why)
		}
	}
	if sides[0] == sides[1] {
		return unknown("the game's decided positions have one side to move")
	}
	winner := sides[0]
	note := fmt.Sprintf("a position %s has clearly won scored %s with %s to move, %s with %s to move",
		sideName(winner), seen[0], sideName(sides[0]), seen[1], sideName(sides[1]))
	switch {
	case signs[0] > 0 && signs[1] < 0:
		p.ScoreSide = ScoreSideToMove
	case signs[0] < 0 && signs[1] > 0:
		p.ScoreSide = ScoreSideOther
	default:
		// The same sign whoever moves: fixed to one side, or the same
		// score whoever has won. The other side's win tells which.
		_, rsign, rseen, why, err := sign(r.g.Reversed)
		if err != nil {
			return err
		}
		if why != "" {
			return unknown(why)
		}
		note += fmt.Sprintf("; a position %s has won scored %s with %s to move", sideName(game.Other(winner)), rseen, sideName(game.Other(winner)))
		if rsign == signs[0] {
			return unknown(note + ": the same score whoever has won")
		}
		p.ScoreSide = sideName(winner)
		if signs[0] < 0 {
			p.ScoreSide = sideName(game.Other(winner))
		}
	}
	p.set("score_side", SourceProbed, note)
	return nil
}

// clearSign is +1 or −1 when s says clearly that the side it is from is
// winning or losing, 0 when it does not: a mate; a score in a declared
// scale beyond 15% of the scale from its middle (a win probability of
// 65%, 19 discs of ±64); a bare score of 10 points or more; 300
// centipawns or more.
func clearSign(s usi.Score, scale *usi.ScoreScale) int {
	sign := func(v float64, bound float64) int {
		switch {
		case v >= bound:
			return 1
		case v <= -bound:
			return -1
		}
		return 0
	}
	switch {
	case s.Mate && s.MateSign == '+':
		return 1
	case s.Mate && s.MateSign == '-':
		return -1
	case s.Mate:
		return sign(float64(s.Value), 1)
	case s.Scaled && scale != nil && scale.Max > scale.Min:
		return sign(s.Points-(scale.Min+scale.Max)/2, 0.15*(scale.Max-scale.Min))
	case s.Scaled:
		return sign(s.Points, 10)
	}
	return sign(float64(s.Value), 300)
}

func scoreText(s usi.Score) string {
	switch {
	case s.Mate && s.MateSign != 0:
		return "mate " + string(s.MateSign)
	case s.Mate:
		return fmt.Sprintf("mate %d", s.Value)
	case s.Scaled:
		return fmt.Sprintf("%g", s.Points)
	}
	return fmt.Sprintf("cp %d", s.Value)
}

func sideName(side string) string {
	if side == game.Black {
		return ScoreSideBlack
	}
	return ScoreSideWhite
}
