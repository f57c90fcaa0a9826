package chess

// checkProblem says why the check(s) on the side to move could not have been
// given by the last move, or returns "". It is asked only with one or two
// checkers (three are too_many_checkers).
//
//   - After a double step (a valid en-passant square), the pawn that stepped
//     gives the only check, or its step uncovered it: the king was safe with
//     the pawn back on its square (python-chess's status() rule).
//   - Two checkers need a last move that gives one check and uncovers the
//     other. checkProblem retracts every move that could have put one of the
//     checkers on its square (a step, a slide, a pawn push or capture, a
//     promotion, or an en-passant capture, which lifts two pawns from the
//     board) and accepts if one of them leaves the king unattacked before
//     it. That refuses two checking pawns or knights, two checkers on one
//     line through the king, two bishops, and two rooks except
//     after a capture-promotion beside the king.
//
// A single check without a double step is accepted: which piece gave it is
// not checked.
func (p *Position) checkProblem(checkers Bitboard) string {
	us, them := p.turn, p.turn^1
	ksq := p.king[us]
	occ := p.occupied()
	if p.ep != NoSquare {
		if checkers.count() > 1 {
			return "two pieces give check, but the last move was a double step, which gives at most one"
		}
		fwd := Square(8)
		if us == Black {
			fwd = -8
		}
		pushedTo, pushedFrom := p.ep-fwd, p.ep+fwd
		before := occ&^bb(pushedTo) | bb(pushedFrom)
		if checkers.first() != pushedTo && p.attackersTo(ksq, before)&p.byColor[them]&^bb(pushedTo) != 0 {
			return "the king is in check from " + checkers.first().String() + ", which the last move, a double step to " + pushedTo.String() + ", could not have given"
		}
		return ""
	}
	if checkers.count() < 2 {
		return ""
	}
	canUncapture := p.byColor[us].count() < 16
	for b := checkers; b != 0; {
		t := b.pop()
		for _, r := range p.retractions(t) {
			if r.capture && !canUncapture {
				continue
			}
			before := occ&^bb(t) | bb(r.from)
			if r.capture {
				before |= bb(t) // one of our pieces stood there
			}
			if !p.attackedBefore(ksq, before, t, r.from, r.kind) {
				return ""
			}
		}
	}
	if p.epCaptureExplains(ksq, occ) {
		return ""
	}
	a, b := checkers.first(), checkers.last()
	return "the king is in check from " + a.String() + " and " + b.String() + "; no single move gives that double check"
}

// retraction is a way the piece now on some square t may have got there:
// from an empty square, as kind (a pawn, for a promotion), capturing or not.
type retraction struct {
	from    Square
	kind    Kind
	capture bool // the move was a capture (for pawns: it must be)
}

// retractions lists the moves that could have brought the side not to
// move's piece on t there, from squares that are empty now.
func (p *Position) retractions(t Square) []retraction {
	pc := p.board[t]
	them := pc.Color()
	occ := p.occupied()
	var rs []retraction
	add := func(from Bitboard, kind Kind, capture bool) {
		for from &^= occ; from != 0; {
			rs = append(rs, retraction{from: from.pop(), kind: kind, capture: capture})
		}
	}
	back := Square(-8) // the direction a pawn of them moved from
	if them == Black {
		back = 8
	}
	switch k := pc.Kind(); k {
	case Pawn:
		// A double step would have left an en-passant square.
		if one := t + back; one >= 0 && one < 64 {
			add(bb(one), Pawn, false)
		}
		add(pawnAttacks[them^1][t], Pawn, true)
	case King:
		// A king gives no check.
	default:
		from := attacksFrom(k, them, t, occ)
		add(from, k, false)
		add(from, k, true)
		if relativeRank(them, t) == 7 {
			// A promotion: the pawn came from the seventh rank.
			add(bb(t+back), Pawn, false)
			add(pawnAttacks[them^1][t], Pawn, true)
		}
	}
	return rs
}

// attackedBefore reports whether the king on ksq was attacked by the side
// not to move before its last move: occupancy before, the mover (kind) back
// on from instead of on t.
func (p *Position) attackedBefore(ksq Square, before Bitboard, t, from Square, kind Kind) bool {
	them := p.turn ^ 1
	if p.attackersTo(ksq, before)&p.byColor[them]&^bb(t) != 0 {
		return true
	}
	return attacksFrom(kind, them, from, before).has(ksq)
}

// epCaptureExplains reports whether an en-passant capture by the side not to
// move could have given the present checks: it lifts the capturing pawn and
// the captured one, so it may uncover two lines.
func (p *Position) epCaptureExplains(ksq Square, occ Bitboard) bool {
	us, them := p.turn, p.turn^1
	if p.byColor[us].count() >= 16 {
		return false // no room for the captured pawn
	}
	landRank := 2 // them = Black captured on rank 3
	dir := Square(8)
	if them == White {
		landRank, dir = 5, -8
	}
	for b := p.pieces(them, Pawn) & rankBB(landRank); b != 0; {
		t := b.pop()
		captured := t + dir // where our pawn stood after its double step
		origin := t - dir   // where it stepped from: empty since
		if occ&(bb(captured)|bb(origin)) != 0 {
			continue
		}
		for _, df := range [2]int{-1, 1} {
			file := captured.File() + df
			if file < 0 || file > 7 {
				continue
			}
			f := NewSquare(file, captured.Rank())
			if occ.has(f) {
				continue
			}
			before := occ&^bb(t) | bb(f) | bb(captured)
			if !p.attackedBefore(ksq, before, t, f, Pawn) {
				return true
			}
		}
	}
	return false
}
