package play

import (
	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/session"
)

// board is a game's rules as play needs them, asked of the game's Match
// (package game): which moves are legal, how they are written, how the
// game ends by the rules, what a record calls the end. The game's clocks,
// turns, pondering and bounds are the same for every game. Sides are
// indexes into "bw" (0: "b", 1: "w"), as State's clocks are. A board
// belongs to its game (guarded by its lock).
type board struct {
	g     gameseam.Game
	start gameseam.Position // the game's start, without moves
	m     gameseam.Match
}

// newBoard is the board of a checked start (without moves).
func newBoard(start gameseam.Position) *board {
	return &board{g: start.Game(), start: start, m: start.Match()}
}

// boardAt is the board after chk's moves, from chk's start.
func boardAt(chk *session.Checked) (*board, *session.Error) {
	start, err := chk.Game().Check(chk.Start(), chk.Variant(), nil)
	if err != nil {
		return nil, newError(string(err.Code), "%s", err.Message)
	}
	return &board{g: chk.Game(), start: start, m: chk.Match()}, nil
}

func sideIndex(s string) int {
	if s == gameseam.White {
		return 1
	}
	return 0
}

// turn is the side to move.
func (b *board) turn() int { return sideIndex(b.m.Turn()) }

// firstTurn is the side to move at the start.
func (b *board) firstTurn() int { return sideIndex(b.start.SideToMove()) }

// check tells whether move is legal for the side to move: its notation
// (KIF, SAN; the move itself where the game has none), or why not.
func (b *board) check(move string) (string, *session.Error) {
	note, err := b.m.Check(move)
	if err != nil {
		return "", &session.Error{Code: string(err.Code), Message: err.Message, MoveIndex: -1}
	}
	return note, nil
}

func result(r *gameseam.Result) *Result {
	if r == nil {
		return nil
	}
	return &Result{Winner: r.Winner, Reason: r.Reason, End: r.End, Detail: r.Detail}
}

// play plays a checked move and says how the game ends by the rules after
// it, or nil while it goes on.
func (b *board) play(move string) *Result { return result(b.m.Play(move)) }

// over is how the game ends by the rules in the current position (a game
// may not start there), or nil.
func (b *board) over() *Result { return result(b.m.Over()) }

// declare judges a declaration of a win by side c (shogi's 入玉宣言);
// nil: the game has none.
func (b *board) declare(c int) *Result { return result(b.m.Declare(colorName(c))) }

// cannotWin: side c has no way to win on the board (a loss on time
// against it is a draw).
func (b *board) cannotWin(c int) bool { return b.m.CannotWin(colorName(c)) }

// position is the game's start with moves, as a search takes it.
func (b *board) position(moves []string) *session.Position {
	return &session.Position{Game: b.g.Name(), Start: b.start.Start(), Variant: b.start.Variant(), Moves: moves}
}

// notes is where the State keeps the moves' notation, or nil for a game
// whose moves need none.
func (b *board) notes(st *State) *[]string {
	switch b.g.Notation() {
	case "kif":
		return &st.MovesKIF
	case "san":
		return &st.MovesSAN
	}
	return nil
}

// record is the ending of a game that ended as r, as POST
// /v1/records/export takes it for this game (KIF's words, a PGN result).
func (b *board) record(r *Result) string {
	return b.m.RecordEnd(&gameseam.Result{Winner: r.Winner, Reason: r.Reason, End: r.End, Detail: r.Detail})
}

// endWords: the game's record names its ends in words (KIF's), so that a
// resignation on the other side's turn is worded apart; a PGN result names
// the winner either way.
func (b *board) endWords() bool {
	return b.m.RecordEnd(&gameseam.Result{Reason: "resign", End: "resign"}) == "resign"
}

// setStart keeps the game's start in st: its game, its text (SFEN holds
// it for every game but those whose positions are FENs), its variant.
func setStart(st *State, start gameseam.Position) {
	g := start.Game()
	st.Rules, st.Variant, st.First = g.Name(), start.Variant(), start.SideToMove()
	if g.Field() == "fen" {
		st.FEN = start.Text() // the whole FEN, as the board draws it
	} else {
		st.SFEN = start.Start()
	}
	if n := (&board{g: g}).notes(st); n != nil {
		*n = []string{}
	}
}

// startOf is a stored game's start as a client's position.
func startOf(st *State, moves []string) *session.Position {
	p := &session.Position{Game: st.Rules, Start: st.SFEN, Variant: st.Variant, Moves: moves}
	if st.FEN != "" {
		p.Start = st.FEN
		if p.Game == "" { // stored before the games had one seam
			if g := gameseam.ByField("fen"); g != nil {
				p.Game = g.Name()
			}
		}
	}
	return p
}
