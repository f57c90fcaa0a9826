package games

import (
	"fmt"
	"slices"
	"strings"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/chess/pgn"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
	"github.com/usid/usid/usi"
)

// game is a job's game as the job needs its rules: shogi and chess each
// have one (as session has a board per game), and this file is the only
// place that tells them apart. A game is checked once, when the job is
// made; it is read-only after that and safe for concurrent use.
type game interface {
	// plies is the number of moves; move(i) the i-th, as an engine writes it.
	plies() int
	move(i int) string
	// position is the game's start with moves (the game's first moves,
	// maybe with the engine's best move after them), as a search takes it.
	position(moves []string) *session.Position
	// ending is how the game ends by the rules after moves (legal: the
	// game's first moves, maybe with the engine's best move), or endNone.
	ending(moves []string) ending
	// isMove tells a move from the engine's other answers (resign, win,
	// "(none)").
	isMove(s string) bool
	// scale is the win-rate curve's: winrate(cp) = 1/(1+exp(−cp/scale)).
	scale() float64
	// evalSide is the side evaluations are given from: "b", shogi's Black
	// (sente), or "w", chess's White: the side that moves first.
	evalSide() string
	// replay walks the game's positions from the start.
	replay() cursor
	// store writes the game into the request kept in Redis; startLen is
	// the length of its start as stored (for the memory bounds).
	store(r *storedRequest)
	startLen() int
}

// cursor is a position of a game being replayed.
type cursor interface {
	// show fills p, this position's entry, with the position, its side to
	// move and, with notation, the notation of its best move, line and
	// move played (p's BestMove, PV and Move set).
	show(p *Ply, notation bool)
	// next plays the game's next move.
	next()
}

// ending is a way a game ends by the rules at a position.
type ending uint8

const (
	endNone ending = iota
	endCheckmate
	endStalemate
	endMaterial
	endRepetition
	endFifty
)

// drawNames are the draws' names in Ply.Draw, by ending.
var drawNames = [...]string{endStalemate: "stalemate", endMaterial: "insufficient_material",
	endRepetition: "repetition", endFifty: "fifty_moves"}

// gameOf is the game of a checked position and its moves.
func gameOf(c *session.Checked) game {
	if c.Game() == session.GameChess {
		fen := c.USI.FEN
		if fen == "startpos" {
			fen = chess.StartFEN
		}
		variant := chess.Standard
		if c.Chess960() {
			variant = chess.Chess960
		}
		start, errs := chess.Load(fen, nil, variant)
		if errs != nil {
			panic("games: a checked chess start does not load: " + errs[0].Message) // session checked it
		}
		g := &chessGame{startFEN: strings.Clone(c.USI.FEN), start: *start, moves: make([]chess.Move, len(c.USI.Moves))}
		pos := *start
		for i, s := range c.USI.Moves {
			m, err := pos.CheckMove(s)
			if err != nil {
				panic("games: a checked chess move is illegal: " + err.Error())
			}
			pos.Play(m)
			g.moves[i] = m
		}
		return g
	}
	return &shogiGame{startSFEN: strings.Clone(c.USI.SFEN), start: *c.Start, moves: slices.Clone(c.Moves)}
}

// shogiGame: evaluations from Black's side on the shogi engines' curve
// (600); the end by the rules is checkmate.
type shogiGame struct {
	startSFEN string // as sent to an engine
	start     shogi.Position
	moves     []shogi.Move
}

func (g *shogiGame) plies() int        { return len(g.moves) }
func (g *shogiGame) move(i int) string { return g.moves[i].String() }
func (g *shogiGame) scale() float64    { return winRateScale }
func (g *shogiGame) evalSide() string  { return "b" }
func (g *shogiGame) startLen() int     { return len(g.startSFEN) }

func (g *shogiGame) position(moves []string) *session.Position {
	return &session.Position{Start: g.startSFEN, Moves: moves}
}

func (g *shogiGame) ending(moves []string) ending {
	if pos, errs := shogi.Load(g.startSFEN, moves); len(errs) == 0 && pos.IsCheckmate() {
		return endCheckmate
	}
	return endNone
}

func (g *shogiGame) isMove(s string) bool {
	_, err := shogi.ParseMove(s)
	return err == nil
}

func (g *shogiGame) store(r *storedRequest) {
	r.SFEN, r.Moves = g.startSFEN, make([]string, len(g.moves))
	for i, m := range g.moves {
		r.Moves[i] = m.String()
	}
}

func (g *shogiGame) replay() cursor { return &shogiCursor{g: g, pos: g.start, last: shogi.NoSquare} }

type shogiCursor struct {
	g    *shogiGame
	i    int
	pos  shogi.Position
	last shogi.Square // the last move's destination, for KIF's 同
}

func (c *shogiCursor) next() {
	m := c.g.moves[c.i]
	c.pos.Play(m) // checked when the job was made
	c.last = m.To
	c.i++
}

func (c *shogiCursor) show(p *Ply, notation bool) {
	p.SFEN, p.SideToMove = c.pos.SFEN(), "b"
	if c.pos.Turn() == shogi.White {
		p.SideToMove = "w"
	}
	if !notation {
		return
	}
	if m, err := c.pos.CheckMove(p.BestMove); err == nil {
		p.BestMoveKIF = c.pos.KIF(m, c.last)
	}
	if len(p.PV) > 0 {
		p.PVKIF, _ = c.pos.KIFLine(p.PV, c.last) // an engine's bad move cuts the notation short
	}
	if c.i < len(c.g.moves) {
		p.MoveKIF = c.pos.KIF(c.g.moves[c.i], c.last)
	}
}

// chessGame: evaluations from White's side on lichess's curve (see
// chessScale); the end by the rules is checkmate, stalemate, insufficient
// material, the third repetition or the fifty-move rule (chess.Ending).
type chessGame struct {
	startFEN string // as sent to an engine: "startpos" or a FEN
	start    chess.Position
	moves    []chess.Move
}

// chessScale is the win-rate curve's scale for chess engines' centipawns:
// lichess's winning chances 2/(1+exp(−0.00368208·cp))−1, fitted to its
// players' results (https://lichess.org/page/accuracy; lila pull request
// 11148), are the win rate 1/(1+exp(−cp/271.6)). Its verdicts use drops
// of 0.1, 0.2, 0.3 winning chances: this package's default thresholds.
const chessScale = 1 / 0.00368208

func (g *chessGame) plies() int        { return len(g.moves) }
func (g *chessGame) move(i int) string { return g.moves[i].String() }
func (g *chessGame) scale() float64    { return chessScale }
func (g *chessGame) evalSide() string  { return "w" }
func (g *chessGame) startLen() int     { return len(g.startFEN) }

func (g *chessGame) position(moves []string) *session.Position {
	return &session.Position{Game: "chess", Start: g.startFEN, Moves: moves, Variant: g.variant()}
}

// variant is the game's Position.Variant: "chess960" or "".
func (g *chessGame) variant() string {
	if g.start.Variant() == chess.Chess960 {
		return session.Variant960
	}
	return ""
}

func (g *chessGame) ending(moves []string) ending {
	cg := chess.NewGame(&g.start)
	for _, s := range moves {
		m, err := cg.Position().CheckMove(s)
		if err != nil {
			return endNone
		}
		cg.Play(m)
	}
	switch cg.Ending() {
	case chess.EndCheckmate:
		return endCheckmate
	case chess.EndStalemate:
		return endStalemate
	case chess.EndInsufficientMaterial:
		return endMaterial
	case chess.EndRepetition:
		return endRepetition
	case chess.EndFiftyMoves:
		return endFifty
	}
	return endNone
}

func (g *chessGame) isMove(s string) bool { return usi.IsUCIMove(s) }

func (g *chessGame) store(r *storedRequest) {
	r.FEN, r.Variant, r.Moves = g.startFEN, g.variant(), make([]string, len(g.moves))
	for i, m := range g.moves {
		r.Moves[i] = m.String()
	}
}

func (g *chessGame) replay() cursor { return &chessCursor{g: g, pos: g.start} }

type chessCursor struct {
	g   *chessGame
	i   int
	pos chess.Position
}

func (c *chessCursor) next() {
	c.pos.Play(c.g.moves[c.i])
	c.i++
}

func (c *chessCursor) show(p *Ply, notation bool) {
	p.FEN, p.SideToMove = c.pos.FEN(), "w"
	if c.pos.Turn() == chess.Black {
		p.SideToMove = "b"
	}
	if !notation {
		return
	}
	if m, err := c.pos.CheckMove(p.BestMove); err == nil {
		p.BestMoveSAN = c.pos.SAN(m)
	}
	if len(p.PV) > 0 {
		pos := c.pos
		for _, s := range p.PV {
			m, err := pos.CheckMove(s)
			if err != nil {
				break // an engine's bad move cuts the notation short
			}
			p.PVSAN = append(p.PVSAN, pos.SAN(m))
			pos.Play(m)
		}
	}
	if c.i < len(c.g.moves) {
		p.MoveSAN = c.pos.SAN(c.g.moves[c.i])
	}
}

// looksLikePGN: a PGN text starts with a tag pair or a move number, which
// none of the shogi formats does (as POST /v1/records/parse tells them).
func looksLikePGN(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	return strings.HasPrefix(t, "[") || strings.HasPrefix(t, "1.")
}

// pgnPosition reads a PGN text's first game into its start and main line.
func pgnPosition(text string, maxMoves int) (*session.Position, *session.Error) {
	gs, err := pgn.Parse(text)
	if err != nil {
		if pe, ok := err.(*pgn.Error); ok {
			msg := "record: " + pe.Message
			if pe.Line > 0 {
				msg = fmt.Sprintf("record line %d: %s", pe.Line, pe.Message)
			}
			return nil, &session.Error{Code: string(pe.Code), Message: msg, MoveIndex: pe.MoveIndex}
		}
		return nil, &session.Error{Code: string(pgn.CodeSyntax), Message: "record: " + err.Error(), MoveIndex: -1}
	}
	g := gs[0]
	if len(g.Moves) > maxMoves {
		return nil, &session.Error{Code: "record_too_long", Message: fmt.Sprintf("record: the game has %d moves; at most %d", len(g.Moves), maxMoves), MoveIndex: -1}
	}
	start, errs := g.Start()
	if errs != nil {
		return nil, &session.Error{Code: string(errs[0].Code), Message: "record: " + errs[0].Message, MoveIndex: -1}
	}
	p := &session.Position{Game: "chess", Start: start.FEN(), Moves: make([]string, len(g.Moves))}
	if start.Variant() == chess.Chess960 {
		p.Variant = session.Variant960 // the Variant tag: an engine with UCI_Chess960 analyses it
	}
	for i, m := range g.Moves {
		p.Moves[i] = m.Move.String()
	}
	return p, nil
}
