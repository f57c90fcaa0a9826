package chess

// How a game of chess ends by the rules (FIDE Laws of Chess, articles 5
// and 9: https://handbook.fide.com/chapter/E012023): checkmate and
// stalemate end it at once, and so does a position where no sequence of
// legal moves can mate (5.2.2; here the material cases: king against king,
// a lone minor piece, bishops all on squares of one colour). The same
// position the third time (9.2) and fifty moves of each side without a
// capture or a pawn move (9.3) are draws a player may claim; usid's
// servers, like online play, apply them at once.

// Ending is the way a game ends at a position, or "" while it goes on.
type Ending string

// Endings, by the order Game.Ending looks for them.
const (
	EndCheckmate            Ending = "checkmate"
	EndStalemate            Ending = "stalemate"
	EndInsufficientMaterial Ending = "insufficient_material"
	EndRepetition           Ending = "repetition" // the same position a third time
	EndFiftyMoves           Ending = "fifty_moves"
)

// Draw reports whether the ending is a draw (all but checkmate).
func (e Ending) Draw() bool { return e != "" && e != EndCheckmate }

// InsufficientMaterial reports whether neither side can ever mate by
// material alone: kings only, a king and one knight or bishop against a
// lone king, or kings and bishops all on squares of one colour.
func (p *Position) InsufficientMaterial() bool {
	if p.byKind[Pawn]|p.byKind[Rook]|p.byKind[Queen] != 0 {
		return false
	}
	minors := p.byKind[Knight] | p.byKind[Bishop]
	switch minors.count() {
	case 0, 1:
		return true
	}
	if p.byKind[Knight] != 0 {
		return false
	}
	const light = Bitboard(0x55AA55AA55AA55AA)
	b := p.byKind[Bishop]
	return b&light == 0 || b&^light == 0
}

// repKey is what makes two positions the same for repetitions (9.2.3):
// the pieces on their squares, the side to move, the castling rights and
// the en-passant square where a capture on it is possible (usableEP).
type repKey struct {
	board  [64]Piece
	turn   Color
	castle [2][2]Square
	ep     Square
}

func (p *Position) repKey() repKey {
	return repKey{board: p.board, turn: p.turn, castle: p.castle, ep: p.usableEP()}
}

// usableEP is the en-passant square if the side to move can capture on it
// by a legal move, else NoSquare. FIDE 9.2.3 counts the en-passant right
// only when the capture is possible: after 1.e4 no black pawn can take on
// e3, and the position is the one 1...Nf6 2.Nf3 Ng8 3.Ng1 brings back.
// Possible means legal: a pawn beside the one that moved is not enough
// where the capture would leave its king in check (stockfish 15 drops the
// square only when no pawn stands beside).
func (p *Position) usableEP() Square {
	us := p.turn
	if p.ep == NoSquare || pawnAttacks[us^1][p.ep]&p.pieces(us, Pawn) == 0 {
		return NoSquare // the cheap answer for most double pushes
	}
	var buf [MaxMoves]Move
	for _, m := range p.appendLegal(buf[:0]) {
		if m.IsEnPassant() {
			return p.ep
		}
	}
	return NoSquare
}

// CanCaptureEnPassant reports whether the side to move has a legal
// en-passant capture (a FEN's en-passant square may be one no pawn can
// use).
func (p *Position) CanCaptureEnPassant() bool { return p.usableEP() != NoSquare }

// RepetitionKey names the position as the rules of repetition see it
// (FIDE 9.2.3): the first four fields of its FEN, with the en-passant
// square only where an en-passant capture is legal ("-" after 1.e4) and
// the castling rights as they are. Two positions are the same for the
// threefold rule exactly when their keys are equal.
func (p *Position) RepetitionKey() string {
	q := *p
	q.ep = p.usableEP()
	fen := q.FEN()
	for n, i := 0, 0; i < len(fen); i++ {
		if fen[i] == ' ' {
			if n++; n == 4 {
				return fen[:i]
			}
		}
	}
	return fen
}

// Game follows a game from its start for the rules of its end: the
// position and the positions since the last capture or pawn move (the
// only ones that can come back). Not safe for concurrent use.
type Game struct {
	pos  Position
	seen map[repKey]int
}

// NewGame starts a game at start (copied).
func NewGame(start *Position) *Game {
	g := &Game{pos: *start, seen: map[repKey]int{}}
	g.seen[g.pos.repKey()]++
	return g
}

// Position returns the game's current position; the caller must not change it.
func (g *Game) Position() *Position { return &g.pos }

// Play plays a legal move (checked by the caller).
func (g *Game) Play(m Move) {
	g.pos.Play(m)
	if g.pos.halfmove == 0 {
		clear(g.seen) // a capture or a pawn move: nothing before comes back
	}
	g.seen[g.pos.repKey()]++
}

// Ending says how the game ends at its current position, or "": checkmate,
// stalemate, insufficient material, the third repetition, the fifty-move
// rule, in that order (a move that mates ends the game even on the
// fiftieth move, 9.3).
func (g *Game) Ending() Ending {
	p := &g.pos
	switch {
	case p.IsCheckmate():
		return EndCheckmate
	case p.IsStalemate():
		return EndStalemate
	case p.InsufficientMaterial():
		return EndInsufficientMaterial
	case g.seen[p.repKey()] >= 3:
		return EndRepetition
	case p.halfmove >= 100:
		return EndFiftyMoves
	}
	return ""
}

// GameEnding plays moves (legal, checked by the caller) from start and
// says how the game ends after them, or "".
func GameEnding(start *Position, moves []Move) Ending {
	g := NewGame(start)
	for _, m := range moves {
		g.Play(m)
	}
	return g.Ending()
}
