package chess

// CheckMove decides whether the UCI move s is legal in p and returns it, or
// an *Error naming the rule it breaks (MoveIndex -1). p is unchanged.
//
// Castling is "e1g1" (the king's two-square step) in standard chess and the
// king taking its own rook ("e1h1") in Chess960, as UCI writes each.
func (p *Position) CheckMove(s string) (Move, error) {
	u, ok := parseUCI(s)
	if !ok {
		return 0, newError(CodeMoveSyntax, "%q is not a UCI move (e2e4, e7e8q)", clip(s))
	}
	us := p.turn
	pc := p.board[u.from]
	switch {
	case pc == NoPiece:
		return 0, newError(CodeEmptySource, "no piece on %s", u.from)
	case pc.Color() != us:
		return 0, newError(CodeOpponentPiece, "the piece on %s is %s's, and %s is to move", u.from, colorName(us^1), colorName(us))
	}
	var buf [MaxMoves]Move
	legal := p.appendLegal(buf[:0])
	if side, ok := p.castlingSide(u); ok {
		if u.promo != NoKind {
			return 0, newError(CodePromotionNotAllowed, "%s castles; a castling move has no promotion", s)
		}
		rsq := p.castle[us][side]
		if rsq == NoSquare || (p.variant == Chess960 && rsq != u.to) {
			return 0, newError(CodeCastlingNotAllowed, "%s has no right to castle on the %s side with that rook", colorName(us), sideName(side))
		}
		for _, m := range legal {
			if m.IsCastling() && m.To() == rsq {
				return m, nil
			}
		}
		kTo, rTo := castlingTargets(us, side)
		lifted := p.occupied() &^ bb(u.from) &^ bb(rsq)
		if (between[u.from][kTo]|bb(kTo)|between[rsq][rTo]|bb(rTo))&lifted != 0 {
			return 0, newError(CodeCastlingNotAllowed, "castling on the %s side needs the squares between king and rook and their targets empty", sideName(side))
		}
		return 0, newError(CodeCastlingThroughCheck, "the king may not castle out of, through or into check")
	}
	target := p.board[u.to]
	if target != NoPiece && target.Color() == us {
		return 0, newError(CodeCaptureOwn, "%s holds %s's own piece", u.to, colorName(us))
	}
	lastRank := relativeRank(us, u.to) == 7
	if pc.Kind() == Pawn && lastRank && u.promo == NoKind {
		return 0, newError(CodePromotionRequired, "a pawn reaching %s must promote (add q, r, b or n)", u.to)
	}
	if u.promo != NoKind && (pc.Kind() != Pawn || !lastRank) {
		return 0, newError(CodePromotionNotAllowed, "only a pawn reaching the last rank promotes")
	}
	if !p.reaches(pc, u.from, u.to) {
		return 0, newError(CodeUnreachable, "the %s on %s cannot move to %s", kindName(pc.Kind()), u.from, u.to)
	}
	for _, m := range legal {
		if m.From() == u.from && m.To() == u.to && m.Promotion() == u.promo && !m.IsCastling() {
			return m, nil
		}
	}
	return 0, newError(CodeSelfCheck, "%s leaves %s's king in check", s, colorName(us))
}

// castlingSide reports whether u, a move of the side to move's piece, is
// written as castling for p's variant, and on which side.
func (p *Position) castlingSide(u uciMove) (int, bool) {
	us := p.turn
	ksq := p.king[us]
	if u.from != ksq || relativeRank(us, ksq) != 0 || u.to.Rank() != ksq.Rank() {
		return 0, false
	}
	side := kingSide
	if u.to < u.from {
		side = queenSide
	}
	if p.variant == Chess960 {
		// The king takes its own rook; a plain king step onto an empty
		// square (or a capture) is a king move.
		return side, p.board[u.to] == NewPiece(us, Rook)
	}
	if ksq.File() != 4 {
		return 0, false
	}
	return side, u.to.File() == 6 || u.to.File() == 2
}

// reaches reports whether pc on from could move to to on this board, kings
// and pins aside: the piece's pattern, the path empty, a pawn's capture
// only onto a piece or the en-passant square.
func (p *Position) reaches(pc Piece, from, to Square) bool {
	occ := p.occupied()
	if pc.Kind() != Pawn {
		return attacksFrom(pc.Kind(), pc.Color(), from, occ).has(to)
	}
	us := pc.Color()
	fwd := Square(8)
	if us == Black {
		fwd = -8
	}
	switch {
	case to == from+fwd:
		return !occ.has(to)
	case to == from+2*fwd:
		return relativeRank(us, from) == 1 && !occ.has(from+fwd) && !occ.has(to)
	case pawnAttacks[us][from].has(to):
		return occ.has(to) || to == p.ep
	}
	return false
}

func sideName(side int) string {
	if side == kingSide {
		return "king"
	}
	return "queen"
}

func kindName(k Kind) string {
	return [...]string{"nothing", "pawn", "knight", "bishop", "rook", "queen", "king"}[k]
}
