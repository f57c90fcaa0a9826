package review

import (
	"fmt"

	"github.com/usid/usid/game"
	"github.com/usid/usid/session"
)

// gameRec is a job's game as the job needs it: a checked start and moves
// of one of the games package game registers, asked for everything its
// rules say (the positions, their notation, the side evaluations are
// from, the win-rate curve, the end by the rules). A game is checked once,
// when the job is made; it is read-only after that and safe for
// concurrent use.
type gameRec struct {
	g     game.Game
	start game.Position // the start, without the moves
	moves []string
}

// gameOf is the game of a checked position and its moves.
func gameOf(c *session.Checked) *gameRec {
	start, err := c.Game().Check(c.Start(), c.Variant(), nil)
	if err != nil {
		panic("games: a checked start does not load: " + err.Message) // session checked it
	}
	return &gameRec{g: c.Game(), start: start, moves: c.Moves()}
}

// plies is the number of moves; move(i) the i-th, as an engine writes it.
func (g *gameRec) plies() int        { return len(g.moves) }
func (g *gameRec) move(i int) string { return g.moves[i] }

// scale is the win-rate curve's: winrate(cp) = 1/(1+exp(−cp/scale)).
func (g *gameRec) scale() float64 { return g.g.WinRateScale() }

// evalSide is the side evaluations are given from: the side that moves
// first (shogi's Black, chess's White).
func (g *gameRec) evalSide() string { return g.g.FirstSide() }

// startLen is the length of its start as stored (for the memory bounds).
func (g *gameRec) startLen() int { return len(g.start.Start()) }

// position is the game's start with moves (the game's first moves, maybe
// with the engine's best move after them), as a search takes it.
func (g *gameRec) position(moves []string) *session.Position {
	return &session.Position{Game: g.g.Name(), Start: g.start.Start(), Variant: g.start.Variant(), Moves: moves}
}

// ending is how the game ends by the rules after moves (legal: the game's
// first moves, maybe with the engine's best move), or endNone.
func (g *gameRec) ending(moves []string) ending {
	p, err := g.g.Check(g.start.Start(), g.start.Variant(), moves)
	if err != nil {
		return endNone
	}
	return endingOf(p.Ending())
}

// forced is the move the rules leave the side to move after moves
// (legal: the game's first moves) when it is its only one and changes
// nothing on the board (othello's pass), or "" (game.Forced).
func (g *gameRec) forced(moves []string) string {
	if _, ok := g.start.(game.Forced); !ok {
		return "" // a game without such moves: no replay
	}
	p, err := g.g.Check(g.start.Start(), g.start.Variant(), moves)
	if err != nil {
		return ""
	}
	return game.ForcedMove(p)
}

// isMove tells a move from the engine's other answers (resign, win,
// "(none)").
func (g *gameRec) isMove(s string) bool { return s != "" && !g.start.NoMove(s) }

// store writes the game into the request kept in Redis.
func (g *gameRec) store(r *storedRequest) {
	r.Game, r.SFEN, r.Variant, r.Moves = g.g.Name(), g.start.Start(), g.start.Variant(), g.moves
}

// replay walks the game's positions from the start.
func (g *gameRec) replay() cursor { return cursor{g: g, pos: g.start} }

// cursor is a position of a game being replayed.
type cursor struct {
	g   *gameRec
	i   int
	pos game.Position
}

// next plays the game's next move.
func (c *cursor) next() {
	p, err := c.pos.Play(c.g.moves[c.i])
	if err != nil {
		panic("games: a checked move is illegal: " + err.Message) // checked when the job was made
	}
	c.pos = p
	c.i++
}

// show fills p, this position's entry, with the position, its side to
// move and, with notation, the notation of its best move, line and move
// played (p's BestMove, PV and Move set).
func (c *cursor) show(p *Ply, notation bool) {
	p.Position, p.field, p.SideToMove = c.pos.Text(), c.g.g.Field(), c.pos.SideToMove()
	if !notation {
		return
	}
	n := c.g.g.Notation()
	if c.pos.CheckMove(p.BestMove) == nil {
		if s := c.pos.Notate([]string{p.BestMove}); len(s) == 1 {
			setNotation(n, &p.BestMoveKIF, &p.BestMoveSAN, s[0])
		}
	}
	if len(p.PV) > 0 {
		pv := c.pos.Notate(p.PV) // an engine's bad move cuts the notation short
		switch n {
		case "kif":
			p.PVKIF = pv
		case "san":
			p.PVSAN = pv
		}
	}
	if c.i < len(c.g.moves) {
		if s := c.pos.Notate(c.g.moves[c.i : c.i+1]); len(s) == 1 {
			setNotation(n, &p.MoveKIF, &p.MoveSAN, s[0])
		}
	}
}

// setNotation sets the field of notation n (KIF's _kif, SAN's _san).
func setNotation(n string, kif, san *string, s string) {
	switch n {
	case "kif":
		*kif = s
	case "san":
		*san = s
	}
}

// ending is a way a game ends by the rules at a position, as a job keeps
// it (a small number, stored in Redis).
type ending uint8

const (
	endNone ending = iota
	endCheckmate
	endStalemate
	endMaterial
	endRepetition
	endFifty
	endLost // decided by counting: the side to move has lost
	endWon  // ... has won
	endDraw // ... a draw
)

// endings are the game package's endings, by ending.
var endings = [...]game.Ending{endNone: game.EndNone, endCheckmate: game.EndCheckmate, endStalemate: game.EndStalemate,
	endMaterial: game.EndMaterial, endRepetition: game.EndRepetition, endFifty: game.EndFifty,
	endLost: game.EndLost, endWon: game.EndWon, endDraw: game.EndDraw}

func endingOf(e game.Ending) ending {
	for i, f := range endings {
		if f == e {
			return ending(i)
		}
	}
	return endNone
}

// drawNames are the draws' names in Ply.Draw, by ending.
var drawNames = [...]string{endStalemate: "stalemate", endMaterial: "insufficient_material",
	endRepetition: "repetition", endFifty: "fifty_moves", endDraw: "draw"}

// recordPosition reads a game record's first game into its start and main
// line, with the rules of the game whose record it is.
func recordPosition(text string, maxMoves int) (*session.Position, *session.Error) {
	g, r := game.RecordsOf(text)
	if r == nil {
		return nil, &session.Error{Code: session.CodeInvalidField, Message: "record: no game reads records", MoveIndex: -1}
	}
	start, variant, moves, err := r.ReadMain(text, maxMoves)
	if err != nil {
		msg := "record: " + err.Message
		if err.Line > 0 {
			msg = fmt.Sprintf("record line %d: %s", err.Line, err.Message)
		}
		return nil, &session.Error{Code: err.Code, Message: msg, MoveIndex: err.MoveIndex}
	}
	return &session.Position{Game: g.Name(), Start: start, Variant: variant, Moves: moves}, nil
}

// position is the stored request's game as a client's position.
func (r *storedRequest) position() *session.Position {
	p := &session.Position{Game: r.Game, Start: r.SFEN, Variant: r.Variant, Moves: r.Moves}
	if r.FEN != "" { // stored before the games had one seam
		if g := game.ByField("fen"); g != nil {
			p.Game, p.Start = g.Name(), r.FEN
		}
	}
	return p
}
