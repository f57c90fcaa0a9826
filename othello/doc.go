// Package othello knows the rules of othello: the USI-X position token and
// moves, the UOI draft's ofen and square names, legal move generation with
// passes, the end of the game and its result, the move transcript, perft,
// and validation with stable error codes. It does no I/O.
//
// usid uses it to refuse every illegal position or move before an othello
// engine sees it: the USI-X engines check nothing and answer, or crash on,
// whatever they are sent.
//
// # Notation
//
// USI-X (the protocol real engines speak) names a square by its file letter
// a–h, left to right, and rank digit 1–8, top to bottom: a1 is the top left
// corner, h1 the top right. A position is one token without spaces: the 64
// cells a1 b1 … h1 a2 … h8, X black, O (the letter) white, - empty, then B or
// W for the side to move, then an optional move number (1..9999; without it,
// one more than the discs beyond the start's four, as in a game without
// passes). The start is
//
//	---------------------------OX------XO---------------------------B1
//
// (d4 and e5 white, e4 and d5 black); Black moves first, to c4, d3, e6 or f5.
// A move is the square, in lower case, or "pass". A USI-X engine is sent
// "position startpos moves …" or "position sfen <token> moves …"
// (ParsePositionCommand).
//
// The UOI draft, USI-X's predecessor, transposes the names: its letter is
// the row and its digit the column (USI-X d3 is UOI c4; Square.UOI,
// ParseUOISquare, UOIToUSIX, USIXToUOI). Its position, the ofen, is exactly
// 65 characters: the same 64 cells in the same physical order (row by row
// from the top left), but 0 (zero) for white, then B or W, no move number
// (ParseOFEN, Position.OFEN, OFENToToken, TokenToOFEN). ParseAny takes either:
// an input whose cells hold a zero is an ofen. A board without white discs
// has no zero and no O; it reads the same in both formats, so the rule never
// misreads a board.
//
// The move transcript (ParseTranscript, Transcript) is the common record
// format: the squares one after the other ("f5d6c3d3c4…"), in either case,
// passes left out; the reader puts a pass back wherever the side to move
// has no square.
//
// # Rules
//
// A disc must turn over at least one line of the opponent's discs. A pass is
// a move only when the side to move has no square and its opponent has one;
// LegalMoves is then [Pass]. The game is over when neither side can move
// (two passes in a row, a full board or a side without discs); LegalMoves is
// then empty and Outcome gives the Result: the winner by disc count and the
// score by the World Othello Federation's rule (FinalScore): the empty
// squares go to the winner, shared equally in a draw.
//
// Perft counts move paths with a pass as a ply and an ended game as one path
// (the standard counting; from the start 4, 12, 56, 244, 1396, 8200, 55092,
// 390216 at depths 1–8).
//
// # Board representation
//
// A Position holds two bitboards (a1 is bit 0, h8 bit 63), the side to move
// and the move number. The squares a side may play are found for all
// directions at once by filling lines of opponent discs from its own discs
// with shifts (doubling the step after the first two), masking the a and h
// files for the shifts that change the file; a move's flips are found by
// walking the eight directions from its square.
//
// # Validation codes
//
// Every refusal is an *Error with a Code, a human Message and, for moves, the
// MoveIndex of the first bad move. Codes are stable; clients match on them.
//
// Position syntax (ParsePosition, ParseOFEN, ParseAny, ParsePositionCommand):
//
//	othello_length       fewer than 65 characters (an ofen: not exactly 65), or a
//	                     token written in several words
//	othello_cell         a cell other than X, O (ofen: 0) or -
//	othello_side         character 65 is not B or W
//	othello_move_number  what follows the side letter is not 1..9999 (no sign,
//	                     no leading zero, no space)
//	position_syntax      not "startpos|sfen <token> [moves ...]"
//
// Position rules (Position.Validate; all broken rules are reported). Discs
// are never taken off and each is put next to one of the other side's, so
// every position of a game has its four centre squares occupied and all its
// discs linked to them through touching discs. A board that breaks this is
// no game's (usually a cell lost or shifted in the writing) and is refused:
//
//	centre_empty         d4, e4, d5 or e5 is empty
//	isolated_disc        a disc not linked to the centre through touching discs
//
// Nothing else about a board is refused: the side to move may have to pass,
// the game may be over, a side may have no disc. In particular the side
// letter is never wrong for a board: a position where the side to move must
// pass is legal (its one move is "pass"), as after a move that leaves the
// opponent without a square.
//
// Moves (Position.CheckMove, Load, ParseTranscript), checked in this order:
//
//	move_syntax          not a square a1..h8 in lower case, or "pass"
//	game_over            a move after the end: neither side can move
//	pass_not_allowed     "pass" while the side to move has a square
//	occupied             the square holds a disc
//	wrong_side           the side to move has no square and must pass, and the
//	                     square is its opponent's move: a "pass" is missing from
//	                     the list (a transcript reader puts it in instead)
//	flips_nothing        the disc would turn over no disc
//
// # Concurrency
//
// Functions are safe for concurrent use. A Position is not: it is a plain
// value (no pointers inside) that one goroutine owns at a time; copy it
// (q := *p) to share a snapshot.
package othello
