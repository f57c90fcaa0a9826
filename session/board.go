// The rules of a position's game as a search needs them. A search, the
// cache and the events ask a board; shogi and chess each have one.

package session

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/internal/rules"
	"github.com/usid/usid/shogi"
	"github.com/usid/usid/usi"
)

// Games.
const (
	GameShogi = "shogi"
	GameChess = "chess"
)

// board is a checked position (start, moves, final position) of one game.
// Its methods do not change it and are safe for concurrent use.
type board interface {
	game() string
	// whiteToMove: the side to move is White (shogi's gote, chess's
	// White), whose clock is wtime.
	whiteToMove() bool
	// key is the position in the cache's key: board, side to move and what
	// else the rules count (hands; castling, en passant and the 50-move
	// counter), never the move number; prefixed with the game.
	key() string
	// repeats: a position occurs twice in the history (the start and the
	// position after each move), which changes an engine's answer.
	repeats() bool
	// checkMove: move is legal in the final position; ponder after it.
	checkMove(move string) error
	ponderOK(move, ponder string) bool
	// checkLine: every move of line is legal in turn from the final position.
	checkLine(line []string) error
	// notate writes moves from the final position in the game's notation
	// (KIF, SAN), cut short at the first illegal one.
	notate(line []string) []string
	// noMove is the best move that means the engine has none to play.
	noMove(move string) bool
	// chess960 reports a Chess960 position (the engine must be told
	// UCI_Chess960; its castling is king-takes-rook).
	chess960() bool
}

// shogiBoard is a shogi position (Checked's Start, Moves and Pos).
type shogiBoard struct{ c *Checked }

func (b shogiBoard) game() string      { return GameShogi }
func (b shogiBoard) chess960() bool    { return false }
func (b shogiBoard) whiteToMove() bool { return b.c.Pos.Turn() == shogi.White }
func (b shogiBoard) noMove(m string) bool {
	return m == usi.MoveResign || m == usi.MoveWin
}

func (b shogiBoard) key() string {
	sfen := b.c.Pos.SFEN()
	return sfen[:bytes.LastIndexByte([]byte(sfen), ' ')] // without the move number
}

// repeats: in shogi no move is irreversible (captured pieces come back as
// drops), so the whole history counts.
func (b shogiBoard) repeats() bool {
	c := b.c
	if len(c.Moves) < 4 { // a position comes back after four plies at the soonest
		return false
	}
	seen := make(map[string]struct{}, len(c.Moves)+1)
	pos := *c.Start
	var buf []byte
	for i := 0; ; i++ {
		buf = pos.AppendSFEN(buf[:0])
		buf = buf[:bytes.LastIndexByte(buf, ' ')] // without the move number
		if _, dup := seen[string(buf)]; dup {
			return true
		}
		seen[string(buf)] = struct{}{}
		if i == len(c.Moves) {
			return false
		}
		pos.Play(c.Moves[i])
	}
}

func (b shogiBoard) checkMove(move string) error {
	_, err := b.c.Pos.CheckMove(move)
	return err
}

func (b shogiBoard) ponderOK(move, ponder string) bool {
	m, err := b.c.Pos.CheckMove(move)
	if err != nil {
		return false
	}
	after := *b.c.Pos
	after.Play(m)
	_, err = after.CheckMove(ponder)
	return err == nil
}

func (b shogiBoard) checkLine(line []string) error {
	_, err := b.c.Pos.KIFLine(line, b.c.lastTo())
	return err
}

func (b shogiBoard) notate(line []string) []string {
	out, _ := b.c.Pos.KIFLine(line, b.c.lastTo())
	return out
}

// chessBoard is a chess position.
type chessBoard struct {
	start *chess.Position
	moves []chess.Move
	pos   *chess.Position // after the moves
}

func (b *chessBoard) game() string         { return GameChess }
func (b *chessBoard) whiteToMove() bool    { return b.pos.Turn() == chess.White }
func (b *chessBoard) noMove(m string) bool { return m == usi.MoveNone }
func (b *chessBoard) chess960() bool       { return b.start.Variant() == chess.Chess960 }

// key: the FEN without the move number. The 50-move counter stays in:
// engines scale their evaluation by it (Stockfish does), so two positions
// that differ in it are two questions. The en-passant square is in only
// where a pawn can take on it (chess.Position.RepetitionKey): after 1.e4
// the position is the one without e3 in every way an engine can see (the
// same legal moves, the same future), and stockfish itself drops such a
// square ("position fen ... b KQkq e3 0 1" then "d" prints "- 0 1").
func (b *chessBoard) key() string {
	game := "chess "
	if b.chess960() {
		game = "chess960 " // the same FEN, other castling rules
	}
	return game + b.pos.RepetitionKey() + " " + strconv.Itoa(b.pos.Halfmove())
}

// repeats: only the positions since the last capture or pawn move can come
// back, and they are compared as the rules of repetition compare them
// (chess.Position.RepetitionKey: an en-passant square no pawn can use is
// no difference).
func (b *chessBoard) repeats() bool {
	if len(b.moves) < 4 {
		return false
	}
	seen := map[string]struct{}{}
	pos := *b.start
	for i := 0; ; i++ {
		k := pos.RepetitionKey()
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
		if i == len(b.moves) {
			return false
		}
		pos.Play(b.moves[i])
	}
}

func (b *chessBoard) checkMove(move string) error {
	_, err := b.pos.CheckMove(move)
	return err
}

func (b *chessBoard) ponderOK(move, ponder string) bool {
	m, err := b.pos.CheckMove(move)
	if err != nil {
		return false
	}
	after := *b.pos
	after.Play(m)
	_, err = after.CheckMove(ponder)
	return err == nil
}

func (b *chessBoard) checkLine(line []string) error {
	pos := *b.pos
	for i, s := range line {
		m, err := pos.CheckMove(s)
		if err != nil {
			return errors.New("move " + strconv.Itoa(i+1) + ": " + err.Error())
		}
		pos.Play(m)
	}
	return nil
}

func (b *chessBoard) notate(line []string) []string {
	pos := *b.pos
	out := make([]string, 0, len(line))
	for _, s := range line {
		m, err := pos.CheckMove(s)
		if err != nil {
			break
		}
		out = append(out, pos.SAN(m))
		pos.Play(m)
	}
	return out
}

// mateBudget bounds the positions usid searches to finish a mate line an
// engine cut short (chess.FindMate).
const mateBudget = 2_000_000

// mateLine checks a chess mate search's answer and returns the whole line:
// the engine's moves are legal, and they end in checkmate within plies (the
// mate it announced) or usid finishes them to a forced mate within what is
// left (engines stop their lines early: Stockfish's "go mate" answers with a
// line of two plies for a mate in two).
func (b *chessBoard) mateLine(pv []string, plies int) ([]string, error) {
	pos := *b.pos
	line := append([]string(nil), pv...)
	for i, s := range pv {
		m, err := pos.CheckMove(s)
		if err != nil {
			return nil, errors.New("move " + strconv.Itoa(i+1) + ": " + err.Error())
		}
		pos.Play(m)
	}
	if pos.IsCheckmate() {
		return line, nil
	}
	left := plies - len(pv)
	if left <= 0 {
		return nil, errors.New("the line does not end in checkmate")
	}
	if len(pv)%2 == 0 { // the mating side to move
		rest, ok := pos.FindMate(left, mateBudget)
		if !ok {
			return nil, errors.New("no mate in the " + strconv.Itoa(left) + " plies the line leaves")
		}
		return append(line, rules.Strings(rest)...), nil
	}
	// The defender to move: every reply must be mated in what is left.
	var first []string
	for _, d := range pos.LegalMoves() {
		q := pos
		q.Play(d)
		rest, ok := q.FindMate(left-1, mateBudget)
		if !ok {
			return nil, errors.New("the defender's " + d.String() + " escapes the mate announced")
		}
		if first == nil {
			first = append([]string{d.String()}, rules.Strings(rest)...)
		}
	}
	if first == nil {
		return nil, errors.New("the line ends in stalemate")
	}
	return append(line, first...), nil
}
