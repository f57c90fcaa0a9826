// Package shogi knows the rules of shogi: SFEN positions, USI moves, legal
// move generation and validation with stable error codes. It does no I/O.
//
// usid uses it to refuse every illegal position or move before an engine sees
// it, to verify mate lines, and to list legal moves for the web board.
//
// # Board representation
//
// A Position is a mailbox: an array of 81 Pieces indexed by Square in SFEN
// reading order (9a is 0, 1a is 8, 9i is 72, 1i is 80), two hands of counts
// per kind, the side to move, the move number and both king squares. A Piece
// packs the Kind in its low four bits and the Color in bit 4; promoted kinds
// are their base kind + 8. Move generation walks precomputed tables: the
// neighbor of every square in each of 12 directions (8 king steps, 4 knight
// jumps) and, per piece, the directions it steps and slides in.
//
// Legal moves are generated, not filtered wholesale: the side to move's
// checkers and pinned pieces are found once; when in check only captures of
// the checker and blocks are generated (only king moves in double check);
// only king moves and moves of pinned pieces are tried on the board. A pawn
// drop in front of the enemy king is tried too, to refuse uchifuzume. A
// side without a king (a tsume problem) has no self-check constraint.
//
// Position.CheckMove decides a single move without generating all moves and
// names the rule it breaks; tests check it agrees with the generator on every
// possible move of many positions.
//
// # Validation codes
//
// Every refusal is an *Error with a Code, a human Message and, for moves, the
// MoveIndex of the first bad move. Codes are stable; clients match on them.
//
// SFEN syntax (ParseSFEN, ParsePositionCommand):
//
//	sfen_fields        not 3 or 4 fields (board, side, hands, optional move count)
//	sfen_ranks         the board does not have 9 ranks
//	sfen_rank_width    a rank does not describe exactly 9 squares
//	sfen_piece         an unknown piece letter or character on the board
//	sfen_promotion     '+' on G or K, doubled, or not followed by a piece
//	sfen_side          side to move other than "b" or "w"
//	sfen_hand          malformed hands: bad letter, zero or 3-digit count, "+"
//	sfen_move_number   move count not a positive integer
//	position_syntax    not "startpos|sfen <sfen> [moves ...]"
//
// Position rules (Position.Validate; all broken rules are reported):
//
//	too_many_pieces    more of a kind on board and in hands than a set has
//	                   (18 P; 4 each of L N S G; 2 each of B R)
//	two_kings          one side has two kings
//	king_in_hand       a king is held in hand
//	no_king            no king at all (one king alone is fine: tsume)
//	nifu               two unpromoted pawns of one side on a file
//	dead_piece         a P or L on the far rank, an N on the far two ranks
//	opponent_in_check  the side not to move is in check
//
// Moves (Position.CheckMove, Load):
//
//	move_syntax            not a USI move (7g7f, 8h2b+, P*5e)
//	empty_source           no piece on the source square
//	opponent_piece         the piece belongs to the side not to move
//	promotion_not_allowed  a gold, king or promoted piece promotes
//	capture_own            the destination holds one's own piece
//	unreachable            the piece cannot move there (or its path is blocked)
//	promotion_outside_zone promotes with neither square in the promotion zone
//	promotion_required     an unpromoted P/L/N would be left unable to move
//	drop_not_in_hand       the dropped piece is not in hand
//	drop_occupied          the drop square is occupied
//	drop_nifu              a pawn drop on a file with one's unpromoted pawn
//	drop_dead              a P/L dropped on the far rank, an N on the far two
//	uchifuzume             a pawn drop that checkmates
//	self_check             the move leaves one's own king in check
//	not_a_mate             a mate line with a quiet attacker move or no mate at its end
//
// # Concurrency
//
// Functions are safe for concurrent use. A Position is not: it is a plain
// value that one goroutine owns at a time; copy it (q := *p) to share a
// snapshot. The query methods (LegalMoves, CheckMove, IsCheckmate, Perft)
// change the position temporarily while they work, so they too need the
// position to themselves.
package shogi
