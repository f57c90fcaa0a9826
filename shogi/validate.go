package shogi

import (
	"fmt"

	"github.com/usid/usid/internal/rules"
)

// Validate checks the rules a position must obey and returns every broken
// rule (nil when the position is legal): piece totals, kings, nifu, pieces
// that could never move, and the side not to move being in check. A position
// where one side has no king is legal (tsume problems), as long as one king
// is on the board.
func (p *Position) Validate() []*Error {
	var errs []*Error
	var count [King + 1]int
	var kings [2]int
	var pawnFiles [2][10]int
	for s := Square(0); s < 81; s++ {
		pc := p.board[s]
		if pc == NoPiece {
			continue
		}
		c, k := pc.Color(), pc.Kind()
		count[k.Base()]++
		switch k {
		case King:
			kings[c]++
		case Pawn:
			pawnFiles[c][s.File()]++
		}
		if deadSquare(c, k, s) {
			errs = append(errs, newError(CodeDeadPiece, "%s %s on %s could never move again", colorName(c), kindName[k], s))
		}
	}
	for _, c := range []Color{Black, White} {
		if p.hand[c][King] > 0 {
			errs = append(errs, newError(CodeKingInHand, "%s holds a king in hand", colorName(c)))
		}
		for k := Pawn; k <= Gold; k++ {
			count[k] += int(p.hand[c][k])
		}
	}
	for _, k := range handKinds {
		if count[k] > maxPieces[k] {
			errs = append(errs, newError(CodeTooManyPieces, "%d %ss on the board and in hand; a set has %d", count[k], kindName[k], maxPieces[k]))
		}
	}
	for _, c := range []Color{Black, White} {
		if kings[c] > 1 {
			errs = append(errs, newError(CodeTwoKings, "%s has %d kings", colorName(c), kings[c]))
		}
		for f := 1; f <= 9; f++ {
			if pawnFiles[c][f] > 1 {
				errs = append(errs, newError(CodeNifu, "%s has %d unpromoted pawns on file %d (nifu)", colorName(c), pawnFiles[c][f], f))
			}
		}
	}
	if kings[Black]+kings[White] == 0 {
		errs = append(errs, newError(CodeNoKing, "there is no king on the board"))
	}
	// Only with at most one king each is "the king" well defined.
	if kings[Black] <= 1 && kings[White] <= 1 {
		them := p.turn ^ 1
		if k := p.king[them]; k != NoSquare && p.attacked(k, p.turn) {
			errs = append(errs, newError(CodeOpponentInCheck, "%s is to move while %s's king is in check", colorName(p.turn), colorName(them)))
		}
	}
	return errs
}

var kindName = [...]string{
	NoKind: "empty", Pawn: "pawn", Lance: "lance", Knight: "knight", Silver: "silver",
	Bishop: "bishop", Rook: "rook", Gold: "gold", King: "king", ProPawn: "tokin",
	ProLance: "promoted lance", ProKnight: "promoted knight", ProSilver: "promoted silver",
	Horse: "horse", Dragon: "dragon",
}

// String returns the English name of the kind, such as "pawn" or "horse".
func (k Kind) String() string {
	if int(k) < len(kindName) {
		return kindName[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Load builds a position from an SFEN (or "startpos") and a list of USI moves,
// checking everything: SFEN syntax, the rules of the position, and each move
// in turn. On success it returns the final position and nil. Otherwise it
// returns the errors — a syntax error alone, all rule errors of the start
// position, or the first refused move with its MoveIndex — and the last
// position it reached (nil if the SFEN did not parse; the start position if
// it broke a rule; the position before the refused move).
func Load(sfen string, moves []string) (*Position, []*Error) {
	p := new(Position)
	if err := p.parseSFEN(sfen); err != nil {
		return nil, []*Error{err}
	}
	if errs := p.Validate(); errs != nil {
		return p, errs
	}
	return p, rules.PlayMoves(moves, p.CheckMove, func(m Move) { p.do(m) })
}
