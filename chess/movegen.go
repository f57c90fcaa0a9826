package chess

// MaxMoves bounds the number of legal moves in any chess position (the
// known maximum is 218).
const MaxMoves = 256

// LegalMoves returns every legal move of the side to move. A position that
// breaks a rule (Validate) may get a partial answer; one without the side to
// move's king gets none.
func (p *Position) LegalMoves() []Move {
	var buf [MaxMoves]Move
	ms := p.appendLegal(buf[:0])
	return append([]Move(nil), ms...)
}

// pinned returns the pieces of color us that stand alone between their king
// on ksq and an enemy slider aimed at it.
func (p *Position) pinned(us Color, ksq Square) Bitboard {
	them := p.byColor[us^1]
	occ := p.occupied()
	snipers := (rookAttacks(ksq, 0)&(p.byKind[Rook]|p.byKind[Queen]) |
		bishopAttacks(ksq, 0)&(p.byKind[Bishop]|p.byKind[Queen])) & them
	var pinned Bitboard
	for snipers != 0 {
		s := snipers.pop()
		b := between[ksq][s] & occ
		if b != 0 && b&(b-1) == 0 && b&p.byColor[us] != 0 {
			pinned |= b
		}
	}
	return pinned
}

// appendLegal appends the legal moves to ms. Moves are generated legal, not
// filtered: checkers and pins are found first, only the king and en-passant
// captures (which remove two pieces from a line) are tried on the occupancy.
func (p *Position) appendLegal(ms []Move) []Move {
	us, them := p.turn, p.turn^1
	ksq := p.king[us]
	if ksq == NoSquare {
		return ms
	}
	occ := p.occupied()
	own, enemy := p.byColor[us], p.byColor[them]
	checkers := p.attackersTo(ksq, occ) & enemy

	occNoKing := occ &^ bb(ksq)
	for t := kingAttacks[ksq] &^ own; t != 0; {
		to := t.pop()
		if !p.attacked(to, them, occNoKing) {
			ms = append(ms, newMove(ksq, to, NoKind, flagNormal))
		}
	}
	if checkers&(checkers-1) != 0 {
		return ms // double check: only the king moves
	}
	target := ^own
	if checkers != 0 {
		c := checkers.first()
		target = between[ksq][c] | bb(c)
	}
	pinned := p.pinned(us, ksq)

	for b := p.pieces(us, Knight) &^ pinned; b != 0; {
		from := b.pop()
		ms = appendTargets(ms, from, knightAttacks[from]&target)
	}
	for b := p.pieces(us, Bishop) | p.pieces(us, Queen); b != 0; {
		from := b.pop()
		t := bishopAttacks(from, occ) & target
		if pinned.has(from) {
			t &= line[ksq][from]
		}
		ms = appendTargets(ms, from, t)
	}
	for b := p.pieces(us, Rook) | p.pieces(us, Queen); b != 0; {
		from := b.pop()
		t := rookAttacks(from, occ) & target
		if pinned.has(from) {
			t &= line[ksq][from]
		}
		ms = appendTargets(ms, from, t)
	}
	ms = p.appendPawnMoves(ms, ksq, occ, target, pinned)
	if checkers == 0 {
		ms = p.appendCastling(ms, ksq, occ)
	}
	return ms
}

func appendTargets(ms []Move, from Square, t Bitboard) []Move {
	for t != 0 {
		ms = append(ms, newMove(from, t.pop(), NoKind, flagNormal))
	}
	return ms
}

// appendPromotions appends the four promotions of a pawn move, queen first.
func appendPromotions(ms []Move, from, to Square) []Move {
	return append(ms,
		newMove(from, to, Queen, flagNormal), newMove(from, to, Rook, flagNormal),
		newMove(from, to, Bishop, flagNormal), newMove(from, to, Knight, flagNormal))
}

// appendPawnMoves appends pawn moves. Unpinned pawns move as a set (one shift
// per direction); the few pinned ones one by one, kept on their pin line.
func (p *Position) appendPawnMoves(ms []Move, ksq Square, occ, target, pinned Bitboard) []Move {
	us := p.turn
	pawns := p.pieces(us, Pawn)
	enemy := p.byColor[us^1]
	free := pawns &^ pinned
	var single, double, capL, capR Bitboard
	var up Square
	lastRank, thirdRank := rank8, rankBB(2)
	if us == White {
		up = 8
		single = free << 8 &^ occ
		double = (single & thirdRank) << 8 &^ occ
		capL = (free &^ fileA) << 7 & enemy
		capR = (free &^ fileH) << 9 & enemy
	} else {
		up = -8
		lastRank, thirdRank = rank1, rankBB(5)
		single = free >> 8 &^ occ
		double = (single & thirdRank) >> 8 &^ occ
		capL = (free &^ fileA) >> 9 & enemy
		capR = (free &^ fileH) >> 7 & enemy
	}
	single &= target
	double &= target
	capL &= target
	capR &= target
	for b := single; b != 0; {
		to := b.pop()
		if lastRank.has(to) {
			ms = appendPromotions(ms, to-up, to)
		} else {
			ms = append(ms, newMove(to-up, to, NoKind, flagNormal))
		}
	}
	for b := double; b != 0; {
		to := b.pop()
		ms = append(ms, newMove(to-2*up, to, NoKind, flagNormal))
	}
	for _, c := range [2]struct {
		b     Bitboard
		delta Square
	}{{capL, up - 1}, {capR, up + 1}} {
		for b := c.b; b != 0; {
			to := b.pop()
			if lastRank.has(to) {
				ms = appendPromotions(ms, to-c.delta, to)
			} else {
				ms = append(ms, newMove(to-c.delta, to, NoKind, flagNormal))
			}
		}
	}
	for b := pawns & pinned; b != 0; {
		from := b.pop()
		keep := target & line[ksq][from]
		var t Bitboard
		if one := from + up; !occ.has(one) {
			t |= bb(one)
			if relativeRank(us, from) == 1 && !occ.has(one+up) {
				t |= bb(one + up)
			}
		}
		t |= pawnAttacks[us][from] & enemy
		for t &= keep; t != 0; {
			to := t.pop()
			if lastRank.has(to) {
				ms = appendPromotions(ms, from, to)
			} else {
				ms = append(ms, newMove(from, to, NoKind, flagNormal))
			}
		}
	}
	if p.ep != NoSquare {
		capSq := p.ep - up
		for b := pawnAttacks[us^1][p.ep] & pawns; b != 0; {
			from := b.pop()
			// Try it on the occupancy: the capture empties two squares of a
			// line (a rank pin) and may or may not answer a check.
			after := occ&^bb(from)&^bb(capSq) | bb(p.ep)
			if p.attackersTo(ksq, after)&enemy&^bb(capSq) == 0 {
				ms = append(ms, newMove(from, p.ep, NoKind, flagEnPassant))
			}
		}
	}
	return ms
}

// appendCastling appends the castling moves (the side to move is not in
// check). Squares on the king's and the rook's paths must be empty but for
// those two; the squares the king crosses and lands on must not be attacked,
// seen with king and rook lifted (as they would be in Chess960).
func (p *Position) appendCastling(ms []Move, ksq Square, occ Bitboard) []Move {
	us := p.turn
	for side, rsq := range p.castle[us] {
		if rsq == NoSquare {
			continue
		}
		kTo, rTo := castlingTargets(us, side)
		lifted := occ &^ bb(ksq) &^ bb(rsq)
		if (between[ksq][kTo]|bb(kTo)|between[rsq][rTo]|bb(rTo))&lifted != 0 {
			continue
		}
		ok := true
		for path := between[ksq][kTo] | bb(kTo); path != 0 && ok; {
			ok = !p.attacked(path.pop(), us^1, lifted)
		}
		if ok {
			m := newMove(ksq, rsq, NoKind, flagCastle)
			if p.variant == Chess960 {
				m |= move960Bit
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// Perft counts the leaf nodes of the legal move tree of the given depth. The
// position is unchanged afterwards.
func (p *Position) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	// One position per ply, allocated once: a copy on the stack of a
	// recursive function would escape to the heap at every node.
	stack := make([]Position, depth)
	stack[0] = *p
	return perft(stack, depth)
}

// perft counts from stack[0], playing each move into stack[1]; the last ply
// only counts moves (bulk counting).
func perft(stack []Position, depth int) uint64 {
	p := &stack[0]
	var buf [MaxMoves]Move
	ms := p.appendLegal(buf[:0])
	if depth == 1 {
		return uint64(len(ms))
	}
	child := &stack[1]
	var n uint64
	for _, m := range ms {
		*child = *p
		child.Play(m)
		n += perft(stack[1:], depth-1)
	}
	return n
}
