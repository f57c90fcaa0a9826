package chess

import "github.com/usid/usid/internal/rules"

// Code is a stable, machine-readable reason why a position or move is refused.
// Clients match on codes; messages are for people and may change.
type Code = rules.Code

// Codes for FEN syntax (ParseFEN, ParsePositionCommand).
const (
	CodeFENFields      Code = "fen_fields"             // not 6 (or 4) space-separated fields
	CodeFENRanks       Code = "fen_ranks"              // the board does not have 8 ranks
	CodeFENRankWidth   Code = "fen_rank_width"         // a rank does not describe 8 squares, or two digits touch
	CodeFENPiece       Code = "fen_piece"              // unknown piece letter or character on the board
	CodeFENSide        Code = "fen_side"               // side to move is not "w" or "b"
	CodeFENCastling    Code = "fen_castling"           // malformed castling field: bad or repeated letter
	CodeFENEnPassant   Code = "fen_en_passant"         // en-passant field is not "-" or a square
	CodeFENHalfmove    Code = "fen_halfmove"           // halfmove clock is not a count of at most 4 digits
	CodeFENFullmove    Code = "fen_fullmove"           // move number is not a positive count of at most 4 digits
	CodePositionSyntax      = rules.CodePositionSyntax // a UCI position is not "startpos|fen <fen> [moves ...]"
)

// Codes for the rules a position must obey (Position.Validate).
const (
	CodeNoKing          Code = "no_king"           // a side has no king
	CodeTwoKings        Code = "two_kings"         // a side has more than one king
	CodePawnBackRank    Code = "pawn_back_rank"    // a pawn on the first or last rank
	CodeTooManyPawns    Code = "too_many_pawns"    // more than 8 pawns of one side
	CodeTooManyPieces   Code = "too_many_pieces"   // more pieces than the set plus promotions of the missing pawns
	CodeCastlingRights  Code = "castling_rights"   // a castling right whose king or rook is not on its square
	CodeEnPassant       Code = "en_passant"        // an en-passant square no double step could have left
	CodeHalfmoveClock   Code = "halfmove_clock"    // a halfmove clock other than 0 after a double step
	CodeOpponentInCheck Code = "opponent_in_check" // the side not to move is in check
	CodeTooManyCheckers Code = "too_many_checkers" // three or more pieces give check
	CodeImpossibleCheck Code = "impossible_check"  // a check that no last move could give
)

// Codes for moves (Position.CheckMove, Load). Errors with these codes carry
// the index of the bad move.
const (
	CodeMoveSyntax           Code = "move_syntax"            // not a UCI move (e2e4, e7e8q)
	CodeEmptySource          Code = "empty_source"           // no piece on the source square
	CodeOpponentPiece        Code = "opponent_piece"         // the piece belongs to the side not to move
	CodeCaptureOwn           Code = "capture_own"            // the destination holds one's own piece
	CodeUnreachable          Code = "unreachable"            // the piece cannot move there (or its path is blocked)
	CodePromotionRequired    Code = "promotion_required"     // a pawn reaches the last rank without promoting
	CodePromotionNotAllowed  Code = "promotion_not_allowed"  // a promotion letter on any other move
	CodeCastlingNotAllowed   Code = "castling_not_allowed"   // no right to that castling, or a square on its path is occupied
	CodeCastlingThroughCheck Code = "castling_through_check" // castling out of, through or into check
	CodeSelfCheck            Code = "self_check"             // the move leaves one's own king in check
)

// Codes for SAN moves (Position.ParseSAN).
const (
	CodeSANSyntax    Code = "san_syntax"    // not a SAN move
	CodeSANIllegal   Code = "san_illegal"   // no legal move fits the SAN
	CodeSANAmbiguous Code = "san_ambiguous" // several legal moves fit the SAN
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
