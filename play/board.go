package play

import (
	"strings"

	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

// board is a game's rules as play needs them: shogi's (here) and chess's
// (chess.go). The game's clocks, turns, pondering and bounds are the
// same for both; what the rules say — which moves are legal, how they are
// written, how the game ends by the rules, what a record calls the end —
// is asked of the board. Sides are indexes into "bw" (0: "b", 1: "w"), as
// State's clocks are. A board belongs to its game (guarded by its lock).
type board interface {
	// turn is the side to move.
	turn() int
	// check tells whether move is legal for the side to move: its
	// notation (KIF, SAN), or why not.
	check(move string) (string, *session.Error)
	// play plays a checked move and says how the game ends by the rules
	// after it, or nil while it goes on.
	play(move string) *Result
	// over is how the game ends by the rules in the current position (a
	// game may not start there), or nil.
	over() *Result
	// declare judges a declaration of a win by side c (shogi's 入玉宣言);
	// nil: the game has none.
	declare(c int) *Result
	// cannotWin: side c has no way to win on the board (a loss on time
	// against it is a draw).
	cannotWin(c int) bool
	// position is the game's start with moves, as a search takes it.
	position(moves []string) *session.Position
	// notes is where the State keeps the moves' notation.
	notes(st *State) *[]string
	// record is the ending of a game that ended as r, as POST
	// /v1/records/export takes it for this game (KIF's words, a PGN
	// result).
	record(r *Result) string
}

// shogiBoard: the rules of the end are checkmate, 千日手 (perpetual check
// loses), 入玉宣言.
type shogiBoard struct {
	sfen   string // the start, as sent to an engine
	pos    shogi.Position
	lastTo shogi.Square
	hist   *history
	first  shogi.Color // the side to move at the start
}

func newShogiBoard(sfen string, start *shogi.Position, moves []shogi.Move) *shogiBoard {
	b := &shogiBoard{sfen: sfen, pos: *start, lastTo: shogi.NoSquare, first: start.Turn()}
	b.hist = newHistory(&b.pos)
	for _, mv := range moves {
		b.pos.Play(mv)
		b.lastTo = mv.To
		b.hist.add(&b.pos)
	}
	return b
}

func (b *shogiBoard) turn() int { return int(b.pos.Turn()) }

func (b *shogiBoard) check(move string) (string, *session.Error) {
	m, err := b.pos.CheckMove(move)
	if err != nil {
		e := err.(*shogi.Error)
		return "", &session.Error{Code: string(e.Code), Message: e.Message, MoveIndex: -1}
	}
	return b.pos.KIF(m, b.lastTo), nil
}

func (b *shogiBoard) play(move string) *Result {
	m, _ := b.pos.CheckMove(move) // checked by the caller
	mover := b.pos.Turn()
	b.pos.Play(m)
	b.lastTo = m.To
	b.hist.add(&b.pos)
	if len(b.pos.LegalMoves()) == 0 {
		return &Result{Winner: colorName(int(mover)), Reason: "checkmate", End: "mate"}
	}
	first := b.first
	if rep, checker := b.hist.repetition(func(i int) shogi.Color { return first ^ shogi.Color((i-1)&1) }); rep {
		if checker == noColor {
			return &Result{Reason: "repetition", End: "repetition"}
		}
		// The record's ending is worded from the side to move.
		end := "illegal_win"
		if shogi.Color(checker) == b.pos.Turn() {
			end = "illegal_loss"
		}
		return &Result{Winner: colorName(checker ^ 1), Reason: "perpetual_check", End: end}
	}
	return nil
}

func (b *shogiBoard) over() *Result {
	if len(b.pos.LegalMoves()) == 0 {
		return &Result{Winner: colorName(int(b.pos.Turn()) ^ 1), Reason: "checkmate", End: "mate"}
	}
	return nil
}

func (b *shogiBoard) declare(c int) *Result {
	ok, points, why := declarationPoints(&b.pos, shogi.Color(c))
	if ok {
		return &Result{Winner: colorName(c), Reason: "declaration", End: "declare_win", Detail: itoa(points) + " points"}
	}
	return &Result{Winner: colorName(c ^ 1), Reason: "illegal_declaration", End: "illegal_loss", Detail: why}
}

func (b *shogiBoard) cannotWin(int) bool { return false }

func (b *shogiBoard) position(moves []string) *session.Position {
	return &session.Position{Start: b.sfen, Moves: moves}
}

func (b *shogiBoard) notes(st *State) *[]string { return &st.MovesKIF }
func (b *shogiBoard) record(r *Result) string   { return r.End }

// startTurnOf is the side to move of a start: shogi's SFEN or chess's FEN
// has it as its second field ("b" or "w").
func startTurnOf(pos string) int {
	if f := strings.Fields(pos); len(f) >= 2 && f[1] == "w" {
		return 1
	}
	return 0
}
