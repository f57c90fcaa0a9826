package chess

// SAN returns the Standard Algebraic Notation of m, a legal move of p:
// "Nf3", "exd5", "e8=Q", "O-O", with the file, rank or both of the moving
// piece where another piece of its kind could go to the same square, and "+"
// or "#" when the move checks or mates.
func (p *Position) SAN(m Move) string {
	var b [12]byte
	return string(p.appendSAN(b[:0], m))
}

func (p *Position) appendSAN(b []byte, m Move) []byte {
	from, to := m.From(), m.To()
	var buf [MaxMoves]Move
	legal := p.appendLegal(buf[:0])
	switch kind := p.board[from].Kind(); {
	case m.IsCastling():
		b = append(b, "O-O"...)
		if to < from {
			b = append(b, "-O"...)
		}
	case kind == Pawn:
		if from.File() != to.File() {
			b = append(b, byte('a'+from.File()), 'x')
		}
		b = append(b, byte('a'+to.File()), byte('1'+to.Rank()))
		if k := m.Promotion(); k != NoKind {
			b = append(b, '=', k.Letter())
		}
	default:
		b = append(b, kind.Letter())
		sameFile, sameRank, others := false, false, false
		for _, o := range legal {
			if o.To() == to && o.From() != from && !o.IsCastling() && p.board[o.From()].Kind() == kind {
				others = true
				sameFile = sameFile || o.From().File() == from.File()
				sameRank = sameRank || o.From().Rank() == from.Rank()
			}
		}
		if others {
			switch {
			case !sameFile:
				b = append(b, byte('a'+from.File()))
			case !sameRank:
				b = append(b, byte('1'+from.Rank()))
			default:
				b = append(b, byte('a'+from.File()), byte('1'+from.Rank()))
			}
		}
		if p.board[to] != NoPiece {
			b = append(b, 'x')
		}
		b = append(b, byte('a'+to.File()), byte('1'+to.Rank()))
	}
	q := *p
	q.Play(m)
	if q.InCheck() {
		if len(q.appendLegal(buf[:0])) == 0 {
			return append(b, '#')
		}
		b = append(b, '+')
	}
	return b
}

// sanMove is the content of a SAN move before the position gives it a
// meaning: a castling side, or a piece kind, its destination, what it says of
// the origin (file, rank: -1 when not given) and a promotion.
type sanMove struct {
	castle       int // -1, kingSide or queenSide
	kind         Kind
	file, rank   int
	to           Square
	promo        Kind
	capture, chk bool
}

// parseSAN reads the syntax of a SAN move. It accepts "0-0" for "O-O" and a
// promotion without "=" ("e8Q"), as PGN in the wild has them; "x", "+" and
// "#" are read but not required to be right (as python-chess does).
func parseSAN(s string) (sanMove, bool) {
	sm := sanMove{castle: -1, file: -1, rank: -1}
	if n := len(s); n > 0 && (s[n-1] == '+' || s[n-1] == '#') {
		s, sm.chk = s[:n-1], true
	}
	switch s {
	case "O-O", "0-0":
		sm.castle = kingSide
		return sm, true
	case "O-O-O", "0-0-0":
		sm.castle = queenSide
		return sm, true
	}
	if len(s) < 2 {
		return sm, false
	}
	i := 0
	sm.kind = Pawn
	if k := kindOfLetter(s[0]); k != NoKind && k != Pawn {
		sm.kind, i = k, 1
	}
	// The destination is the last square; what stands between the piece
	// letter and it is disambiguation and the capture mark.
	end := len(s)
	if sm.kind == Pawn {
		if k := kindOfLetter(s[end-1]); k >= Knight && k <= Queen {
			sm.promo, end = k, end-1
			if end > 0 && s[end-1] == '=' {
				end--
			}
		}
	}
	if end-i < 2 {
		return sm, false
	}
	to, ok := parseSquare(s[end-2], s[end-1])
	if !ok {
		return sm, false
	}
	sm.to = to
	mid := s[i : end-2]
	if n := len(mid); n > 0 && mid[n-1] == 'x' {
		sm.capture, mid = true, mid[:n-1]
	}
	switch len(mid) {
	case 0:
	case 1:
		switch c := mid[0]; {
		case c >= 'a' && c <= 'h':
			sm.file = int(c - 'a')
		case c >= '1' && c <= '8' && sm.kind != Pawn:
			sm.rank = int(c - '1')
		default:
			return sm, false
		}
	case 2:
		from, ok := parseSquare(mid[0], mid[1])
		if !ok || sm.kind == Pawn {
			return sm, false
		}
		sm.file, sm.rank = from.File(), from.Rank()
	default:
		return sm, false
	}
	if sm.kind == Pawn && (sm.capture != (sm.file >= 0)) {
		return sm, false // a pawn capture is "exd5": file and x together
	}
	return sm, true
}

// ParseSAN reads a SAN move and returns the one legal move it names, or an
// *Error: san_syntax, san_illegal (no legal move fits) or san_ambiguous.
func (p *Position) ParseSAN(s string) (Move, error) {
	sm, ok := parseSAN(s)
	if !ok {
		return 0, newError(CodeSANSyntax, "%q is not a SAN move (e4, Nf3, exd5, e8=Q, O-O)", clip(s))
	}
	var buf [MaxMoves]Move
	var found Move
	n := 0
	for _, m := range p.appendLegal(buf[:0]) {
		if sm.castle >= 0 {
			if m.IsCastling() && (m.To() > m.From()) == (sm.castle == kingSide) {
				found, n = m, n+1
			}
			continue
		}
		from := m.From()
		if m.IsCastling() || p.board[from].Kind() != sm.kind || m.To() != sm.to || m.Promotion() != sm.promo ||
			sm.file >= 0 && from.File() != sm.file || sm.rank >= 0 && from.Rank() != sm.rank {
			continue
		}
		found, n = m, n+1
	}
	switch {
	case n == 0:
		return 0, newError(CodeSANIllegal, "%s is not a legal move here", clip(s))
	case n > 1:
		return 0, newError(CodeSANAmbiguous, "%s fits %d legal moves; say which piece moves", clip(s), n)
	}
	return found, nil
}
