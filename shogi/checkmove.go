package shogi

// CheckMove parses a USI move and checks that it is legal in p, returning the
// move or an *Error whose code says why not. p is not changed.
func (p *Position) CheckMove(s string) (Move, error) {
	m, err := ParseMove(s)
	if err != nil {
		return Move{}, err
	}
	if e := p.checkMove(m); e != nil {
		return Move{}, e
	}
	return m, nil
}

// Play plays m if it is legal, and otherwise returns an *Error and leaves p as it was.
func (p *Position) Play(m Move) error {
	if e := p.checkMove(m); e != nil {
		return e
	}
	p.do(m)
	return nil
}

// IsLegal reports whether m is a legal move in p.
func (p *Position) IsLegal(m Move) bool { return p.checkMove(m) == nil }

// checkMove decides m's legality directly, without generating every move, and
// names the first rule it breaks.
func (p *Position) checkMove(m Move) *Error {
	us := p.turn
	if m.To < 0 || m.To > 80 {
		return newError(CodeMoveSyntax, "the destination is off the board")
	}
	if m.Drop != NoKind {
		if e := p.checkDrop(m); e != nil {
			return e
		}
	} else {
		if m.From < 0 || m.From > 80 {
			return newError(CodeMoveSyntax, "the source is off the board")
		}
		if e := p.checkBoardMove(m); e != nil {
			return e
		}
	}

	u := p.do(m)
	defer p.undo(m, u)
	if k := p.king[us]; k != NoSquare && p.attacked(k, us^1) {
		return newError(CodeSelfCheck, "%s leaves %s's king in check", m, colorName(us))
	}
	if m.Drop == Pawn {
		if k := p.king[us^1]; k != NoSquare && neighbor[m.To][forward(us)] == k && !p.hasLegalMove() {
			return newError(CodeUchifuzume, "%s is a pawn drop that checkmates (uchifuzume)", m)
		}
	}
	return nil
}

func (p *Position) checkDrop(m Move) *Error {
	us, k := p.turn, m.Drop
	if k < Pawn || k > Gold {
		return newError(CodeMoveSyntax, "only P, L, N, S, G, B and R can be dropped")
	}
	if p.hand[us][k] == 0 {
		return newError(CodeDropNotInHand, "%s has no %s in hand for %s", colorName(us), kindName[k], m)
	}
	if t := p.board[m.To]; t != NoPiece {
		return newError(CodeDropOccupied, "%s drops on %s, which holds a %s", m, m.To, kindName[t.Kind()])
	}
	if deadSquare(us, k, m.To) {
		return newError(CodeDropDead, "a %s dropped on %s could never move (%s)", kindName[k], m.To, m)
	}
	if k == Pawn {
		own := NewPiece(us, Pawn)
		for r := 1; r <= 9; r++ {
			if p.board[NewSquare(m.To.File(), r)] == own {
				return newError(CodeDropNifu, "%s already has an unpromoted pawn on file %d (nifu): %s", colorName(us), m.To.File(), m)
			}
		}
	}
	return nil
}

func (p *Position) checkBoardMove(m Move) *Error {
	us := p.turn
	pc := p.board[m.From]
	if pc == NoPiece {
		return newError(CodeEmptySource, "no piece stands on %s (%s)", m.From, m)
	}
	if pc.Color() != us {
		return newError(CodeOpponentPiece, "the %s on %s is %s's, but %s is to move (%s)", kindName[pc.Kind()], m.From, colorName(pc.Color()), colorName(us), m)
	}
	k := pc.Kind()
	if m.Promote && !k.CanPromote() {
		return newError(CodePromotionNotAllowed, "a %s cannot promote (%s)", kindName[k], m)
	}
	if t := p.board[m.To]; t != NoPiece && t.Color() == us {
		return newError(CodeCaptureOwn, "%s's own %s stands on %s (%s)", colorName(us), kindName[t.Kind()], m.To, m)
	}
	if !p.reaches(m.From, m.To, pc) {
		return newError(CodeUnreachable, "a %s on %s cannot reach %s (%s)", kindName[pc.Kind()], m.From, m.To, m)
	}
	switch {
	case m.Promote && !inZone(us, m.From) && !inZone(us, m.To):
		return newError(CodePromotionZone, "%s promotes outside the promotion zone", m)
	case !m.Promote && deadSquare(us, k, m.To):
		return newError(CodePromotionRequired, "a %s on %s could never move again, so it must promote (%s+)", kindName[k], m.To, m)
	}
	return nil
}

// reaches reports whether piece pc on from moves to to by its pattern, with
// a slider's path clear.
func (p *Position) reaches(from, to Square, pc Piece) bool {
	for _, d := range stepDirs[pc] {
		if neighbor[from][d] == to {
			return true
		}
	}
	for _, d := range slideDirs[pc] {
		for s := neighbor[from][d]; s != NoSquare; s = neighbor[s][d] {
			if s == to {
				return true
			}
			if p.board[s] != NoPiece {
				break
			}
		}
	}
	return false
}
