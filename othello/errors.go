package othello

import "github.com/usid/usid/internal/rules"

// Code is a stable, machine-readable reason why a position or move is refused.
// Clients match on codes; messages are for people and may change.
type Code = rules.Code

// Codes for the position token and the ofen (ParsePosition, ParseOFEN,
// ParseAny, ParsePositionCommand).
const (
	CodeLength         Code = "othello_length"         // fewer than 65 characters (an ofen: not exactly 65), or a token in several words
	CodeCell           Code = "othello_cell"           // a cell other than X, O (ofen: 0) or -
	CodeSide           Code = "othello_side"           // the side letter (character 65) is not B or W
	CodeMoveNumber     Code = "othello_move_number"    // what follows the side letter is not 1..9999
	CodePositionSyntax      = rules.CodePositionSyntax // not "startpos|sfen <token> [moves ...]"
)

// Codes for the rules a position must obey (Position.Validate).
const (
	CodeCentreEmpty  Code = "centre_empty"  // d4, e4, d5 or e5 is empty
	CodeIsolatedDisc Code = "isolated_disc" // a disc not linked to the centre through touching discs
)

// Codes for moves (Position.CheckMove, Load, ParseTranscript). Errors with
// these codes carry the index of the bad move.
const (
	CodeMoveSyntax     Code = "move_syntax"      // not a square a1..h8 (lower case) or "pass"
	CodeGameOver       Code = "game_over"        // a move after the end: neither side can move
	CodePassNotAllowed Code = "pass_not_allowed" // "pass" while the side to move has a square
	CodeOccupied       Code = "occupied"         // the square holds a disc
	CodeFlipsNothing   Code = "flips_nothing"    // the disc would turn over no disc
	CodeWrongSide      Code = "wrong_side"       // the side to move must pass; the square is the opponent's move
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
