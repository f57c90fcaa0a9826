// Package kifu reads and writes shogi game records: KIF, KI2, CSA, USI
// position commands and bare SFEN. It is pure: no I/O, no goroutines.
//
// Parse detects the format (or takes the one it is told), accepts UTF-8 or
// Shift_JIS text (KIF files of Windows GUIs are Shift_JIS, the ".kifu"
// extension is UTF-8), and checks every move with the rules of package shogi:
// a record is accepted only if its start position is legal and every move of
// every line (main line and variations) is a legal move. A refused record is
// an *Error with the 1-based line number of the first bad line, a stable code
// (a shogi code such as "unreachable" or "nifu" for an illegal move or
// position, or one of this package's record_* / move_* codes for notation
// it cannot read) and, for moves, the index of the move in its line.
//
// A Record's main line (Moves) is the game; each Move may carry variations
// (alternatives to that move, each a line of its own, recursively), the
// comments written after it and its consumed time. ExportKIF writes a Record
// as KIF, with per-move comments and evaluations as "*" comment lines, and its
// variations as "変化" blocks; Parse reads the result back to the same game
// (start, lines, comments, times in whole seconds, end) by construction:
// nothing of a header or a comment can come out as structure (a header line
// is written only where the reader reads it back as that header).
//
// Parsing is linear in the text: comment lines are gathered and joined once,
// a move's repeated modifiers (右右右...) are kept once (TestBombsLinear;
// BenchmarkParseBombs, BenchmarkParseCommentBomb, BenchmarkParseNormal).
//
// # Sources
//
// The formats are documented by their authors; the parser follows these
// public descriptions:
//
//   - KIF and KI2: Kakinoki Yoshikazu, "KIF形式" (the format of Kifu for
//     Windows), http://kakinoki.o.oo7.jp/kif_format.html — headers, 手合割
//     names, the move line with consumed times, "*" comments, "&" bookmarks,
//     "#" ignored lines, 変化 blocks, the BOD board diagram, and the KI2
//     move notation with 右/左/直/上/引/寄/打/成/不成.
//   - The relative move notation of KI2 (which piece moved when several
//     could): the Japan Shogi Association's "棋譜の表記方法",
//     https://www.shogi.or.jp/faq/kihuhyouki.html.
//   - CSA: the Computer Shogi Association's "CSA標準棋譜ファイル形式"
//     (V2.2, and V3.0 for fractional times),
//     http://www2.computer-shogi.org/protocol/record_v22.html and
//     http://www2.computer-shogi.org/protocol/record_v3.html.
//   - USI position commands and SFEN: the Shogidokoro USI page,
//     http://shogidokoro.starfree.jp/usi.html.
//   - Evaluation comments in the form ShogiHome reads ("#評価値=", "#読み筋="):
//     ShogiHome's source, https://github.com/sunfish-shogi/shogihome.
//
// The start positions of the KIF handicaps (手合割) are the standard ones,
// the handicap giver (上手) being White and moving first.
//
// # Concurrency
//
// Functions are safe for concurrent use; a Record is a plain value owned by
// its caller. Nothing needs releasing.
package kifu
