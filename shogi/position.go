package shogi

// Position is a shogi position: the board, both hands, the side to move and
// the move number. The zero value is not useful; get one from ParseSFEN,
// Startpos or Load. A Position is a plain value: copy it to keep a snapshot.
type Position struct {
	board [81]Piece
	// hand[c][k] counts the pieces of kind k (Pawn..Gold) that c holds; index
	// King is never set in a valid position but keeps captures total-safe.
	hand       [2][King + 1]uint8
	turn       Color
	moveNumber int
	king       [2]Square // NoSquare when that side has no king
}

// StartSFEN is the standard starting position.
const StartSFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

// Startpos returns the standard starting position.
func Startpos() *Position {
	p, err := ParseSFEN(StartSFEN)
	if err != nil {
		panic(err)
	}
	return p
}

// At returns the piece on square s.
func (p *Position) At(s Square) Piece { return p.board[s] }

// Hand returns how many pieces of kind k color c holds.
func (p *Position) Hand(c Color, k Kind) int {
	if k > Gold {
		return 0
	}
	return int(p.hand[c][k])
}

// Turn returns the side to move.
func (p *Position) Turn() Color { return p.turn }

// MoveNumber returns the SFEN move count (plies, starting at 1).
func (p *Position) MoveNumber() int { return p.moveNumber }

// KingSquare returns c's king square, or NoSquare if c has no king.
func (p *Position) KingSquare(c Color) Square { return p.king[c] }

// undo holds what do needs to take a move back.
type undo struct {
	captured Piece
}

// do plays m without checking it; m must be pseudo-legal in p.
func (p *Position) do(m Move) undo {
	us := p.turn
	var u undo
	if m.Drop != NoKind {
		p.board[m.To] = NewPiece(us, m.Drop)
		p.hand[us][m.Drop]--
	} else {
		pc := p.board[m.From]
		u.captured = p.board[m.To]
		if u.captured != NoPiece {
			p.hand[us][u.captured.Kind().Base()]++
		}
		if m.Promote {
			pc += promoteOffset
		}
		p.board[m.From] = NoPiece
		p.board[m.To] = pc
		if pc.Kind() == King {
			p.king[us] = m.To
		}
	}
	p.turn = us ^ 1
	p.moveNumber++
	return u
}

// undo takes back m, which do played with result u.
func (p *Position) undo(m Move, u undo) {
	p.turn ^= 1
	p.moveNumber--
	us := p.turn
	if m.Drop != NoKind {
		p.board[m.To] = NoPiece
		p.hand[us][m.Drop]++
		return
	}
	pc := p.board[m.To]
	if m.Promote {
		pc -= promoteOffset
	}
	p.board[m.From] = pc
	p.board[m.To] = u.captured
	if u.captured != NoPiece {
		p.hand[us][u.captured.Kind().Base()]--
	}
	if pc.Kind() == King {
		p.king[us] = m.From
	}
}

// attacked reports whether any piece of color by attacks square s.
func (p *Position) attacked(s Square, by Color) bool {
	for d := 0; d < numDirs; d++ {
		n := neighbor[s][d]
		if n == NoSquare {
			continue
		}
		pc := p.board[n]
		if pc != NoPiece && pc.Color() == by && stepMask[pc]&(1<<opposite(d)) != 0 {
			return true
		}
	}
	for d := 0; d < 8; d++ {
		for n := neighbor[s][d]; n != NoSquare; n = neighbor[n][d] {
			pc := p.board[n]
			if pc == NoPiece {
				continue
			}
			if pc.Color() == by && slideMask[pc]&(1<<opposite(d)) != 0 {
				return true
			}
			break
		}
	}
	return false
}

// checkers finds the pieces of color by that attack square s: how many (0, 1
// or 2 — two is enough to know only the king can move) and where one of them is.
func (p *Position) checkers(s Square, by Color) (n int, at Square) {
	at = NoSquare
	for d := 0; d < numDirs; d++ {
		q := neighbor[s][d]
		if q == NoSquare {
			continue
		}
		pc := p.board[q]
		if pc != NoPiece && pc.Color() == by && stepMask[pc]&(1<<opposite(d)) != 0 {
			n, at = n+1, q
		}
	}
	for d := 0; d < 8; d++ {
		for q := neighbor[s][d]; q != NoSquare; q = neighbor[q][d] {
			pc := p.board[q]
			if pc == NoPiece {
				continue
			}
			// No piece both steps and slides in one direction, so nothing is counted twice.
			if pc.Color() == by && slideMask[pc]&(1<<opposite(d)) != 0 {
				n, at = n+1, q
			}
			break
		}
		if n >= 2 {
			return n, at
		}
	}
	return n, at
}

// InCheck reports whether the side to move's king is attacked.
func (p *Position) InCheck() bool {
	k := p.king[p.turn]
	return k != NoSquare && p.attacked(k, p.turn^1)
}
