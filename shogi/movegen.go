package shogi

// MaxMoves bounds the number of legal moves in any position (the known
// maximum is 593), so a [MaxMoves]Move buffer never grows.
const MaxMoves = 600

// sqSet is a set of squares, one bit each.
type sqSet struct{ lo, hi uint64 }

var allSquares = sqSet{^uint64(0), ^uint64(0)}

func (b *sqSet) add(s Square) {
	if s < 64 {
		b.lo |= 1 << uint(s)
	} else {
		b.hi |= 1 << uint(s-64)
	}
}

func (b sqSet) has(s Square) bool {
	if s < 64 {
		return b.lo>>uint(s)&1 != 0
	}
	return b.hi>>uint(s-64)&1 != 0
}

// LegalMoves returns every legal move of the side to move.
func (p *Position) LegalMoves() []Move {
	var buf [MaxMoves]Move
	ms := p.appendLegal(buf[:0])
	return append([]Move(nil), ms...)
}

// IsCheckmate reports whether the side to move is in check and has no legal move.
func (p *Position) IsCheckmate() bool { return p.InCheck() && !p.hasLegalMove() }

func (p *Position) hasLegalMove() bool {
	var buf [MaxMoves]Move
	return len(p.appendLegal(buf[:0])) > 0
}

// appendLegal appends the legal moves of the side to move to ms.
//
// It generates moves that obey the piece rules and filters only those that
// can expose the king: king moves, moves of pinned pieces, and — when in
// check — only moves that capture the checker or block it are generated.
func (p *Position) appendLegal(ms []Move) []Move {
	us, them := p.turn, p.turn^1
	ksq := p.king[us]
	targets, drops := allSquares, allSquares
	var pinned sqSet
	if ksq != NoSquare {
		n, checker := p.checkers(ksq, them)
		switch n {
		case 0:
		case 1:
			// Capture the checker, or block a distant slider.
			targets, drops = sqSet{}, sqSet{}
			targets.add(checker)
			if d, ok := lineDir(ksq, checker); ok {
				for s := neighbor[ksq][d]; s != checker; s = neighbor[s][d] {
					targets.add(s)
					drops.add(s)
				}
			}
		default:
			// Double check: only the king may move.
			return p.appendKingMoves(ms, ksq)
		}
		pinned = p.pinned(ksq)
	}

	for from := Square(0); from < 81; from++ {
		pc := p.board[from]
		if pc == NoPiece || pc.Color() != us {
			continue
		}
		if from == ksq {
			ms = p.appendKingMoves(ms, ksq)
			continue
		}
		start := len(ms)
		ms = p.appendPieceMoves(ms, from, pc, targets)
		if pinned.has(from) {
			ms = p.keepSafe(ms, start, ksq)
		}
	}
	return p.appendDrops(ms, drops)
}

// appendPieceMoves appends the moves of piece pc on from to squares in targets,
// with the promotion choices the rules allow.
func (p *Position) appendPieceMoves(ms []Move, from Square, pc Piece, targets sqSet) []Move {
	us := pc.Color()
	for _, d := range stepDirs[pc] {
		to := neighbor[from][d]
		if to == NoSquare {
			continue
		}
		if t := p.board[to]; (t == NoPiece || t.Color() != us) && targets.has(to) {
			ms = appendWithPromotion(ms, us, pc.Kind(), from, to)
		}
	}
	for _, d := range slideDirs[pc] {
		for to := neighbor[from][d]; to != NoSquare; to = neighbor[to][d] {
			t := p.board[to]
			if t != NoPiece && t.Color() == us {
				break
			}
			if targets.has(to) {
				ms = appendWithPromotion(ms, us, pc.Kind(), from, to)
			}
			if t != NoPiece {
				break
			}
		}
	}
	return ms
}

func appendWithPromotion(ms []Move, us Color, k Kind, from, to Square) []Move {
	if k.CanPromote() && (inZone(us, from) || inZone(us, to)) {
		ms = append(ms, Move{From: from, To: to, Promote: true})
		if deadSquare(us, k, to) {
			return ms
		}
	}
	return append(ms, Move{From: from, To: to})
}

// appendKingMoves appends the king's moves to squares the opponent does not attack.
func (p *Position) appendKingMoves(ms []Move, ksq Square) []Move {
	us := p.turn
	king := p.board[ksq]
	// Lift the king so that a slider checking it also covers the squares behind it.
	p.board[ksq] = NoPiece
	for _, d := range stepDirs[king] {
		to := neighbor[ksq][d]
		if to == NoSquare {
			continue
		}
		if t := p.board[to]; (t == NoPiece || t.Color() != us) && !p.attacked(to, us^1) {
			ms = append(ms, Move{From: ksq, To: to})
		}
	}
	p.board[ksq] = king
	return ms
}

// keepSafe drops from ms[start:] the moves that leave the king on ksq attacked.
func (p *Position) keepSafe(ms []Move, start int, ksq Square) []Move {
	kept := start
	for _, m := range ms[start:] {
		u := p.do(m)
		safe := !p.attacked(ksq, p.turn)
		p.undo(m, u)
		if safe {
			ms[kept] = m
			kept++
		}
	}
	return ms[:kept]
}

// appendDrops appends the legal drops on empty squares in targets.
func (p *Position) appendDrops(ms []Move, targets sqSet) []Move {
	us := p.turn
	hand := &p.hand[us]
	var pawnFiles [10]bool
	if hand[Pawn] > 0 {
		own := NewPiece(us, Pawn)
		for s := Square(0); s < 81; s++ {
			if p.board[s] == own {
				pawnFiles[s.File()] = true
			}
		}
	}
	enemyKing := p.king[us^1]
	for k := Pawn; k <= Gold; k++ {
		if hand[k] == 0 {
			continue
		}
		for to := Square(0); to < 81; to++ {
			if p.board[to] != NoPiece || !targets.has(to) || deadSquare(us, k, to) {
				continue
			}
			if k == Pawn {
				if pawnFiles[to.File()] {
					continue
				}
				if enemyKing != NoSquare && neighbor[to][forward(us)] == enemyKing && p.dropMates(to) {
					continue // uchifuzume
				}
			}
			ms = append(ms, Move{From: NoSquare, To: to, Drop: k})
		}
	}
	return ms
}

// dropMates reports whether dropping a pawn on to checkmates the opponent.
func (p *Position) dropMates(to Square) bool {
	m := Move{From: NoSquare, To: to, Drop: Pawn}
	u := p.do(m)
	mate := !p.hasLegalMove()
	p.undo(m, u)
	return mate
}

// pinned returns the pieces of the side to move that shield its king on ksq
// from an enemy slider.
func (p *Position) pinned(ksq Square) sqSet {
	var set sqSet
	us := p.turn
	for d := 0; d < 8; d++ {
		shield := NoSquare
		for s := neighbor[ksq][d]; s != NoSquare; s = neighbor[s][d] {
			pc := p.board[s]
			if pc == NoPiece {
				continue
			}
			if pc.Color() == us {
				if shield != NoSquare {
					break
				}
				shield = s
				continue
			}
			if shield != NoSquare && slideMask[pc]&(1<<opposite(d)) != 0 {
				set.add(shield)
			}
			break
		}
	}
	return set
}

// lineDir returns the direction from a to b when they share a rank, file or
// diagonal and are not adjacent (so squares lie between them).
func lineDir(a, b Square) (int, bool) {
	dr, dc := int(b)/9-int(a)/9, int(b)%9-int(a)%9
	if dr*dr <= 1 && dc*dc <= 1 {
		return 0, false
	}
	if dr != 0 && dc != 0 && dr != dc && dr != -dc {
		return 0, false
	}
	sr, sc := sign(dr), sign(dc)
	for d := 0; d < 8; d++ {
		if dirDelta[d][0] == sr && dirDelta[d][1] == sc {
			return d, true
		}
	}
	return 0, false
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// Perft counts the leaf nodes of the legal move tree to the given depth.
func (p *Position) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	bufs := make([][MaxMoves]Move, depth)
	q := *p // perft plays moves; leave p untouched even if a caller shares it
	return q.perft(bufs)
}

func (p *Position) perft(bufs [][MaxMoves]Move) uint64 {
	ms := p.appendLegal(bufs[0][:0])
	if len(bufs) == 1 {
		return uint64(len(ms))
	}
	var n uint64
	for _, m := range ms {
		u := p.do(m)
		n += p.perft(bufs[1:])
		p.undo(m, u)
	}
	return n
}
