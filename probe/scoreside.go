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

// scoreSideBound is how long one of its searches may take before usid
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
	var won, lost reading
	for _, x := range []struct {
		text string
		to   *reading
	}{{r.g.Won, &won}, {r.g.Lost, &lost}} {
		var why string
		var err error
		if *x.to, why, err = r.read(ctx, x.text, g); err != nil {
			return err
		} else if why != "" {
			return unknown(why)
		}
	}
	if won.side == lost.side {
		return unknown("the game's decided positions have one side to move")
	}
	winner, loser := won.side, lost.side
	note := fmt.Sprintf("a position %s has clearly won scored %s with %s to move, %s with %s to move",
		sideName(winner), won.seen, sideName(winner), lost.seen, sideName(loser))
	switch {
	case won.sign > 0 && lost.sign < 0:
		p.ScoreSide = ScoreSideToMove
	case won.sign < 0 && lost.sign > 0:
		p.ScoreSide = ScoreSideOther
	default:
		// The same sign whoever moves: fixed to one side, or the same
		// score whoever has won. The other side's win tells which.
		rev, why, err := r.read(ctx, r.g.Reversed, g)
		if err != nil {
			return err
		}
		if why != "" {
			return unknown(why)
		}
		note += fmt.Sprintf("; a position %s has won scored %s with %s to move", sideName(loser), rev.seen, sideName(rev.side))
		if rev.sign == won.sign {
			return unknown(note + ": the same score whoever has won")
		}
		p.ScoreSide = sideName(winner)
		if won.sign < 0 {
			p.ScoreSide = sideName(loser)
		}
	}
	p.set("score_side", SourceProbed, note)
	return nil
}

// reading is what one search of a decided position said.
type reading struct {
	side string // the side to move
	sign int    // clearSign of the score
	seen string // the score, as a note says it
}

// read searches text with g and reads its score, or says why it cannot
// (the engine failed, gave no score or none clear).
func (r *runner) read(ctx context.Context, text string, g usi.Go) (reading, string, error) {
	q, cerr := r.g.g.Check(text, "", nil)
	if cerr != nil {
		return reading{}, fmt.Sprintf("the game's decided position %q: %v", text, cerr), nil
	}
	o, err := r.search(ctx, text, g, scoreSideBound)
	switch {
	case err != nil:
		return reading{}, "", err
	case o.err != nil:
		return reading{}, fmt.Sprintf("%s: the engine failed: %v", goLine(g), o.err), nil
	case !o.scored:
		return reading{}, fmt.Sprintf("%s gave no score", goLine(g)), nil
	}
	x := reading{side: q.SideToMove(), sign: clearSign(o.score, o.scale), seen: scoreText(o.score)}
	if x.sign == 0 {
		return x, fmt.Sprintf("a position one side has clearly won scored %s: not clear", x.seen), nil
	}
	return x, "", nil
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
