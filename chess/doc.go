// Package chess knows the rules of chess: FEN positions (standard and
// Chess960), UCI and SAN moves, legal move generation, perft, and position
// validation with stable error codes. It does no I/O.
//
// usid uses it to refuse every illegal position or move before a chess (UCI)
// engine sees it: Stockfish and its kin assume legal input and crash on
// positions that are not (its issues 3256, 3533, 6312 and 6476 among
// others; testdata/fens.tsv keeps those positions, each refused with its
// code).
//
// # Board representation
//
// A Position holds bitboards (one 64-bit set per kind and per color; a1 is
// bit 0, h8 bit 63) and a mailbox of 64 Pieces, the side to move, castling
// rights as the squares of the castling rooks (so Chess960 needs nothing
// more), the en-passant square and the two counters. Sliding attacks walk
// precomputed rays and stop at the first blocker with one bit scan.
//
// Legal moves are generated, not filtered: checkers and pinned pieces are
// found first; in check only captures of the checker and blocks are made
// (only king moves in double check); pinned pieces move along their pin.
// Only en-passant captures, which lift two pieces from one rank, are tried
// on the occupancy. Castling follows the Chess960 rule in both variants:
// the squares between king and rook and their targets empty but for those
// two, and no square the king crosses or lands on attacked with both
// lifted. A castling Move is stored as the king taking its rook; UCI writes
// it "e1g1" in standard chess and "e1h1" in Chess960.
//
// Perft counts with bulk counting (the last ply counts moves without
// playing them) on copies of the position.
//
// # FEN
//
// ParseFEN reads the six fields, or the first four (EPD style; the counters
// are then 0 and 1). Castling letters are KQkq; in Chess960 also X-FEN and
// Shredder-FEN file letters, K/Q naming the outermost rook on that side. FEN
// writes castling in X-FEN (KQkq in standard positions) and the en-passant
// square after every double step, whether or not a pawn can take, as the PGN
// standard's FEN section says. The counters have at most 4 digits.
// RepetitionKey is the position as the rules of repetition compare it (FIDE
// 9.2.3): the first four fields, the en-passant square only where an
// en-passant capture is a legal move; Game counts repetitions by it.
//
// # Validation codes
//
// Every refusal is an *Error with a Code, a human Message and, for moves,
// the MoveIndex of the first bad move. Codes are stable; clients match on
// them. (Codes shared with package shogi mean the same thing.)
//
// FEN syntax (ParseFEN, ParsePositionCommand):
//
//	fen_fields         not 6 or 4 whitespace-separated fields
//	fen_ranks          the board does not have 8 ranks
//	fen_rank_width     a rank does not describe exactly 8 squares, or two digits touch
//	fen_piece          an unknown piece letter or character on the board
//	fen_side           side to move other than "w" or "b"
//	fen_castling       a bad or repeated castling letter, more than 4, or two rights on one side
//	fen_en_passant     en passant other than "-" or a square
//	fen_halfmove       halfmove clock not 0..9999 (no sign, no leading zero)
//	fen_fullmove       move number not 1..9999
//	position_syntax    not "startpos|fen <fen> [moves ...]"
//
// Position rules (Position.Validate; all broken rules are reported):
//
//	no_king            a side has no king
//	two_kings          a side has more than one king
//	pawn_back_rank     a pawn on the first or last rank
//	too_many_pawns     more than 8 pawns of a side
//	too_many_pieces    more pieces beyond the set (a queen, two rooks, two knights,
//	                   a bishop per square color) than missing pawns to promote
//	castling_rights    a right whose rook is not on its square or whose king is not
//	                   on its starting square (e1/e8 and corner rooks in standard
//	                   chess; in Chess960 the king between the b- and g-files,
//	                   both kings on one file and rooks of one side on one file
//	                   when both colors keep the right)
//	en_passant         the square is not behind a pawn of the side not to move that
//	                   just double-stepped (wrong rank, no such pawn, the crossed
//	                   squares not empty). As python-chess's status(), a square no
//	                   pawn can take on, or whose only capture is pinned, is legal.
//	halfmove_clock     a clock other than 0 with an en-passant square
//	opponent_in_check  the side not to move is in check (kings side by side too)
//	too_many_checkers  three or more pieces give check
//	impossible_check   a check no last move gives: after a double step, a check the
//	                   step did not give or uncover, or two checks; two checkers
//	                   with no move that retracted leaves the king safe (two pawns
//	                   or knights, two on one line, two bishops, a queen that would
//	                   have uncovered its own line; promotions and en-passant
//	                   captures, which can give double checks, are tried). A single
//	                   check is not traced back to its origin.
//
// Moves (Position.CheckMove, Load; UCI long algebraic):
//
//	move_syntax             not a UCI move (e2e4, e7e8q; "0000" neither)
//	empty_source            no piece on the source square
//	opponent_piece          the piece belongs to the side not to move
//	capture_own             the destination holds one's own piece
//	unreachable             the piece cannot move there (or its path is blocked)
//	promotion_required      a pawn reaches the last rank without a promotion letter
//	promotion_not_allowed   a promotion letter on any other move
//	castling_not_allowed    no right to that castling, or a square on its path occupied
//	castling_through_check  castling out of, through or into check
//	self_check              the move leaves one's own king in check
//
// SAN (Position.ParseSAN): san_syntax, san_illegal (no legal move fits),
// san_ambiguous (several do). "x", "+" and "#" are not required to be right.
//
// # Concurrency
//
// Functions are safe for concurrent use. A Position is not: it is a plain
// value (no pointers inside) that one goroutine owns at a time; copy it
// (q := *p) to share a snapshot. Nothing needs releasing.
package chess
