package play

import (
	"github.com/usid/usid/chess"
	"github.com/usid/usid/session"
)

// chessBoard: the rules of the end are those of chess (chess.Game):
// checkmate, stalemate, insufficient material, the same position a third
// time, fifty moves without a capture or a pawn move; the server applies
// the draws at once, as online play does. A loss on time against a side
// left with its king alone is a draw (FIDE Laws 6.9: it cannot mate).
type chessBoard struct {
	fen string // the start as sent to an engine: "startpos" or a FEN
	g   *chess.Game
}

func newChessBoard(fen string, start *chess.Position, moves []string) *chessBoard {
	b := &chessBoard{fen: fen, g: chess.NewGame(start)}
	for _, s := range moves {
		m, _ := b.g.Position().CheckMove(s) // checked by session.CheckPosition
		b.g.Play(m)
	}
	return b
}

// side is a chess colour as an index into "bw".
func side(c chess.Color) int {
	if c == chess.White {
		return 1
	}
	return 0
}

func (b *chessBoard) turn() int { return side(b.g.Position().Turn()) }

func (b *chessBoard) check(move string) (string, *session.Error) {
	pos := b.g.Position()
	m, err := pos.CheckMove(move)
	if err != nil {
		e := err.(*chess.Error)
		return "", &session.Error{Code: string(e.Code), Message: e.Message, MoveIndex: -1}
	}
	return pos.SAN(m), nil
}

func (b *chessBoard) play(move string) *Result {
	mover := b.turn()
	m, _ := b.g.Position().CheckMove(move) // checked by the caller
	b.g.Play(m)
	return b.ending(mover)
}

func (b *chessBoard) over() *Result { return b.ending(b.turn() ^ 1) }

// ending is the game's end by the rules now, mover having moved last.
func (b *chessBoard) ending(mover int) *Result {
	switch e := b.g.Ending(); e {
	case "":
		return nil
	case chess.EndCheckmate:
		return &Result{Winner: colorName(mover), Reason: "checkmate"}
	default:
		return &Result{Reason: string(e)} // stalemate, insufficient_material, repetition, fifty_moves
	}
}

func (b *chessBoard) declare(int) *Result { return nil }

func (b *chessBoard) cannotWin(c int) bool {
	pos := b.g.Position()
	for sq := chess.Square(0); sq < 64; sq++ {
		if p := pos.At(sq); p != chess.NoPiece && side(p.Color()) == c && p.Kind() != chess.King {
			return false
		}
	}
	return true
}

func (b *chessBoard) position(moves []string) *session.Position {
	p := &session.Position{Game: "chess", Start: b.fen, Moves: moves}
	if b.g.Position().Variant() == chess.Chess960 {
		p.Variant = session.Variant960
	}
	return p
}

func (b *chessBoard) notes(st *State) *[]string { return &st.MovesSAN }

// record is the PGN result: 1-0, 0-1, 1/2-1/2 for a draw, * for a game
// aborted without a winner.
func (b *chessBoard) record(r *Result) string {
	switch {
	case r.Winner == "w":
		return "1-0"
	case r.Winner == "b":
		return "0-1"
	case r.Reason == "aborted":
		return "*"
	}
	return "1/2-1/2"
}
