package chess

import "github.com/usid/usid/internal/rules"

// Validate checks the rules a position must obey before an engine may see
// it, and reports every rule it breaks (nil if none). The rules are those of
// a position reachable in a game, as far as they can be checked without
// retro-analysis of the whole game; see the package doc for each code.
func (p *Position) Validate() []*Error {
	var errs []*Error
	add := func(code Code, format string, args ...any) { errs = append(errs, newError(code, format, args...)) }

	kingsOK := true
	for _, c := range [2]Color{White, Black} {
		switch n := p.pieces(c, King).count(); {
		case n == 0:
			add(CodeNoKing, "%s has no king", colorName(c))
			kingsOK = false
		case n > 1:
			add(CodeTwoKings, "%s has %d kings", colorName(c), n)
			kingsOK = false
		}
	}
	if b := p.byKind[Pawn] & (rank1 | rank8); b != 0 {
		add(CodePawnBackRank, "a pawn stands on %s, on the first or last rank", b.first())
	}
	for _, c := range [2]Color{White, Black} {
		pawns := p.pieces(c, Pawn).count()
		if pawns > 8 {
			add(CodeTooManyPawns, "%s has %d pawns, more than 8", colorName(c), pawns)
			continue
		}
		if extra := p.promotedAtLeast(c); extra > 8-pawns {
			add(CodeTooManyPieces, "%s has %d pieces more than its set, but only %d missing pawns to promote", colorName(c), extra, 8-pawns)
		}
	}
	if kingsOK {
		if e := p.checkCastlingRights(); e != nil {
			errs = append(errs, e)
		}
	}
	epOK := true
	if p.ep != NoSquare {
		if msg := p.epProblem(); msg != "" {
			add(CodeEnPassant, "en-passant square %s: %s", p.ep, msg)
			epOK = false
		} else if p.halfmove != 0 {
			add(CodeHalfmoveClock, "halfmove clock %d, but the en-passant square says the last move was a pawn's", p.halfmove)
		}
	}
	if !kingsOK {
		return errs
	}
	if p.attacked(p.king[p.turn^1], p.turn, p.occupied()) {
		add(CodeOpponentInCheck, "%s is to move, but %s's king is in check", colorName(p.turn), colorName(p.turn^1))
	}
	if checkers := p.checkers(); checkers != 0 {
		if n := checkers.count(); n > 2 {
			add(CodeTooManyCheckers, "%d pieces give check; no move gives more than two", n)
		} else if epOK {
			if msg := p.checkProblem(checkers); msg != "" {
				add(CodeImpossibleCheck, "%s", msg)
			}
		}
	}
	return errs
}

// promotedAtLeast counts the pieces of c beyond the initial set (a queen,
// two rooks, two knights, a bishop on each square color): each of them
// must be a promoted pawn.
func (p *Position) promotedAtLeast(c Color) int {
	over := func(n, set int) int { return max(n-set, 0) }
	bishops := p.pieces(c, Bishop)
	return over(p.pieces(c, Queen).count(), 1) +
		over(p.pieces(c, Rook).count(), 2) +
		over(p.pieces(c, Knight).count(), 2) +
		over((bishops&lightSquares).count(), 1) +
		over((bishops&^lightSquares).count(), 1)
}

// lightSquares are the light squares (h1 is light, a1 dark).
const lightSquares Bitboard = 0x55aa55aa55aa55aa

// checkCastlingRights reports a castling right the position cannot have:
// the rook is not on its square, the king not on its starting square (e1/e8
// in standard chess; in Chess960 any square between its rooks, but the two
// kings on one file, between the b- and g-files, and rooks of the same side
// on one file, since a Chess960 start is symmetric).
func (p *Position) checkCastlingRights() *Error {
	for _, c := range [2]Color{White, Black} {
		for side, rsq := range p.castle[c] {
			if rsq == NoSquare {
				continue
			}
			letter := string(p.castlingLetter(c, side, rsq))
			if p.board[rsq] != NewPiece(c, Rook) {
				return newError(CodeCastlingRights, "castling right %s, but no %s rook stands on %s", letter, colorName(c), rsq)
			}
			if p.variant == Standard {
				ksq, corner := p.king[c], 7
				if side == queenSide {
					corner = 0
				}
				if ksq.File() != 4 || relativeRank(c, ksq) != 0 {
					return newError(CodeCastlingRights, "castling right %s, but %s's king is not on %s", letter, colorName(c), NewSquare(4, 7*int(c)))
				}
				if rsq.File() != corner {
					return newError(CodeCastlingRights, "castling right %s needs the rook on the %c-file in standard chess (Chess960 allows others)", letter, 'a'+corner)
				}
			}
		}
	}
	if p.variant == Chess960 {
		for _, c := range [2]Color{White, Black} {
			if (p.castle[c][0] != NoSquare || p.castle[c][1] != NoSquare) && (p.king[c].File() == 0 || p.king[c].File() == 7) {
				return newError(CodeCastlingRights, "%s may castle, but its king stands on a corner file; a Chess960 king starts between its rooks", colorName(c))
			}
		}
		w, b := p.castle[White], p.castle[Black]
		if (w[0] != NoSquare || w[1] != NoSquare) && (b[0] != NoSquare || b[1] != NoSquare) && p.king[White].File() != p.king[Black].File() {
			return newError(CodeCastlingRights, "both sides may castle, but their kings stand on different files; a Chess960 start is symmetric")
		}
		for side := range 2 {
			if w[side] != NoSquare && b[side] != NoSquare && w[side].File() != b[side].File() {
				return newError(CodeCastlingRights, "castling rooks %s and %s of one side stand on different files; a Chess960 start is symmetric", w[side], b[side])
			}
		}
	}
	return nil
}

// epProblem says why the en-passant square cannot follow a double step of
// the side not to move, or returns "". As python-chess's status() does, the
// square only has to be where a double step just passed: on the sixth rank
// (third for Black to move), with that side's pawn in front of it and the
// square and the one behind it empty. Whether a pawn can actually capture
// there (one may be absent or pinned) does not matter: FEN writes the square
// after every double step.
func (p *Position) epProblem() string {
	us, them := p.turn, p.turn^1
	if relativeRank(us, p.ep) != 5 {
		want := 6
		if us == Black {
			want = 3
		}
		return "not on rank " + string(rune('0'+want)) + ", where a double step of the side not to move passes"
	}
	fwd := Square(8)
	if us == Black {
		fwd = -8
	}
	if p.board[p.ep-fwd] != NewPiece(them, Pawn) {
		return "no " + colorName(them) + " pawn on " + (p.ep - fwd).String() + " that just made the double step"
	}
	if p.board[p.ep] != NoPiece || p.board[p.ep+fwd] != NoPiece {
		return "the squares the double step crossed are not empty"
	}
	return ""
}

// Load parses fen ("startpos" for the standard start) for variant v,
// validates it, and plays the UCI moves in order. It returns the final
// position, or the errors that stopped it: syntax (position nil), the rules
// the position breaks (position as parsed), or the first illegal move (with
// its MoveIndex; position before that move).
func Load(fen string, moves []string, v Variant) (*Position, []*Error) {
	if fen == "startpos" {
		fen = StartFEN
	}
	p, err := ParseFEN(fen, v)
	if err != nil {
		return nil, []*Error{err.(*Error)}
	}
	if errs := p.Validate(); errs != nil {
		return p, errs
	}
	return p, rules.PlayMoves(moves, p.CheckMove, p.Play)
}
