package shogi

import "github.com/usid/usid/internal/rules"

// Code is a stable, machine-readable reason why a position or move is refused.
// Clients match on codes; messages are for people and may change.
type Code = rules.Code

// Codes for SFEN syntax (ParseSFEN, ParsePositionCommand).
const (
	CodeSFENFields     Code = "sfen_fields"            // not 3 or 4 whitespace-separated fields
	CodeSFENRanks      Code = "sfen_ranks"             // the board does not have 9 ranks
	CodeSFENRankWidth  Code = "sfen_rank_width"        // a rank does not describe 9 squares
	CodeSFENPiece      Code = "sfen_piece"             // unknown piece letter or character on the board
	CodeSFENPromotion  Code = "sfen_promotion"         // '+' on G or K, doubled, or not before a piece
	CodeSFENSide       Code = "sfen_side"              // side to move is not "b" or "w"
	CodeSFENHand       Code = "sfen_hand"              // malformed hand: bad letter, count or repetition
	CodeSFENMoveNumber Code = "sfen_move_number"       // move count is not a positive integer
	CodePositionSyntax      = rules.CodePositionSyntax // a USI position is not "startpos|sfen <sfen> [moves ...]"
)

// Codes for the rules a position must obey (Position.Validate).
const (
	CodeTooManyPieces   Code = "too_many_pieces"   // more pieces of a kind than a set has (board and hands)
	CodeTwoKings        Code = "two_kings"         // one side has two kings
	CodeKingInHand      Code = "king_in_hand"      // a king is held in hand
	CodeNoKing          Code = "no_king"           // neither side has a king
	CodeNifu            Code = "nifu"              // two unpromoted pawns of one side on a file
	CodeDeadPiece       Code = "dead_piece"        // a P/L on the last rank or an N on the last two
	CodeOpponentInCheck Code = "opponent_in_check" // the side not to move is in check
)

// Codes for moves (Position.CheckMove, Load). Errors with these codes carry
// the index of the bad move.
const (
	CodeMoveSyntax          Code = "move_syntax"           // not a USI move
	CodeEmptySource         Code = "empty_source"          // no piece on the source square
	CodeOpponentPiece       Code = "opponent_piece"        // the piece belongs to the side not to move
	CodeUnreachable         Code = "unreachable"           // the piece cannot move to that square
	CodeCaptureOwn          Code = "capture_own"           // the destination holds one's own piece
	CodePromotionNotAllowed Code = "promotion_not_allowed" // a gold, king or promoted piece cannot promote
	CodePromotionZone       Code = "promotion_outside_zone"
	CodePromotionRequired   Code = "promotion_required" // the piece could never move again unpromoted
	CodeDropNotInHand       Code = "drop_not_in_hand"
	CodeDropOccupied        Code = "drop_occupied"
	CodeDropNifu            Code = "drop_nifu" // a pawn dropped on a file with one's unpromoted pawn
	CodeDropDead            Code = "drop_dead" // a P/L dropped on the last rank, an N on the last two
	CodeUchifuzume          Code = "uchifuzume"
	CodeSelfCheck           Code = "self_check" // the move leaves one's own king in check
	// CodeMateLine: a mate line (Position.ProveMateLine) is not a tsume
	// proof: a non-checking attacker move, a line that ends with the
	// defender's move or without checkmate, or a defender alternative that
	// escapes mate within the moves the line has left.
	CodeMateLine Code = "not_a_mate"
)

// Error is one reason a position or move is refused; MoveIndex is the index
// (from 0) of the refused move in a move list, or -1 when the error is about
// the position itself. It writes itself as {"code", "message", "move_index"?}.
type Error = rules.Error

// Errors joins several errors found in one position.
type Errors = rules.Errors

func newError(code Code, format string, args ...any) *Error {
	return rules.Newf(code, format, args...)
}
