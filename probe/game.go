// The game a probe's positions and answers belong to: the dialect decides
// which (package game's registry: the game whose engines speak it), and
// the game gives the positions; the go commands follow the dialect's
// switches. Everything else the probe does is the same for every game.

package probe

import (
	"time"

	"github.com/usid/usid/game"
	"github.com/usid/usid/usi"
)

// gameProbe is what the probe needs of a game's rules.
type gameProbe struct {
	g game.Game
	game.Probe
	mateGo  usi.Go
	plainGo usi.Go // a plain timed search every engine of the dialect takes
	keyword string
	// reached: the dialect takes the position reached, no moves (UOI).
	reached bool
}

// position is the engine's position command for text ("startpos" or the
// game's position text) and moves.
func (p *gameProbe) position(text string, moves []string) usi.Position {
	if p.reached && len(moves) > 0 {
		if q, err := p.g.Check(text, "", moves); err == nil {
			return usi.NewPosition(p.keyword, q.Text(), nil)
		}
	}
	return usi.NewPosition(p.keyword, text, moves)
}

// legal checks a best move in pos.
func (p *gameProbe) legal(pos, move string) error {
	if _, err := p.g.Check(pos, "", []string{move}); err != nil {
		return err
	}
	return nil
}

// mates checks that a mate search's answer (the line, or the best move
// alone) mates.
func (p *gameProbe) mates(pos string, line []string) error {
	q, err := p.g.Check(pos, "", nil)
	if err != nil {
		return err
	}
	_, _, merr := q.Mate(line, len(line))
	return merr
}

// gameOf is the game an engine of dialect d plays.
func gameOf(d *usi.Dialect) *gameProbe {
	g := game.ForDialect(d.Name)
	if g == nil {
		g = game.Default()
	}
	p := &gameProbe{g: g, Probe: g.Probe(), keyword: g.Keyword(), reached: d.PositionOnly,
		mateGo:  usi.Go{Mate: true, MateTime: 2 * time.Second},
		plainGo: usi.Go{MoveTime: baseline}}
	if d.MateInMoves {
		p.mateGo = usi.Go{Mate: true, MateMoves: 1}
	}
	switch {
	case d.Byoyomi && d.HasGo("byoyomi"):
		p.plainGo = usi.Go{Clock: &usi.Clock{Byoyomi: baseline}}
	case !d.HasGo("movetime"): // the UOI draft's go has clocks only
		p.plainGo = usi.Go{Clock: &usi.Clock{BTime: baseline, WTime: baseline}}
	}
	return p
}
