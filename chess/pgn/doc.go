// Package pgn reads and writes chess games in PGN, the Portable Game
// Notation. It is pure: no I/O, no goroutines.
//
// Parse reads every game of a text: the tag pairs, then the movetext with
// comments ({...} and ; to the end of the line), NAGs ($n, and the suffixes
// ! ? !! ?? !? ?!, read as NAGs 1-6), recursive variations and the game
// termination marker. Every move of every line is checked by package chess:
// a game is accepted only if its start position (the standard one, or the
// FEN tag's) is legal and each SAN names exactly one legal move. A Variant
// tag of "Chess960" (or "chess 960", "Fischerandom") reads the game with
// Chess960 castling; other variants are refused. Parsing is linear in the
// input, whatever it is made of (many comments, tags, NAGs, variations,
// comment commands or games: BenchmarkRead, TestParseLinear); variations may
// nest MaxDepth deep, and a game holds at most DefaultMaxPlies moves, all
// its lines together (ParseMax sets another bound).
//
// A move's comments may hold the commands lichess and python-chess write:
// [%clk H:MM:SS] (the clock after the move), [%emt H:MM:SS] (the time it
// took) and [%eval 0.17] / [%eval #-3] (with an optional ",depth"), read
// into Ply.Clock, Ply.Elapsed and Ply.Eval; other commands ([%cal], ...)
// and commands written otherwise stay in the comment's text.
//
// A refused text is an *Error with the 1-based line of the bad token, the
// index of its game, a stable code (one of this package's pgn_* codes, or a
// chess code such as san_illegal or castling_rights for an illegal move or
// start position) and, for moves, the index of the move in its line.
//
// Leniency, where PGN in the wild differs from the standard: a missing
// termination marker at the end of the text (the Result tag, or "*", is
// the result), "0-0" for castling and promotions without "=". Move numbers
// are read but not checked against the ply.
//
// Write writes a Game in the PGN export format as lichess writes it: its
// tags in order, the movetext with canonical SAN, move numbers, a move's
// first NAG as its suffix when it is one of ! ? !! ?? !? ?! (the others as
// $n), its commands in a comment of their own ({ [%eval 0.17] [%clk
// 0:03:00] }) before its text, variations, wrapped at 80 columns.
// Parse(Write(g)) gives g back.
//
// # Sources
//
// The PGN standard (Steven J. Edwards, 1994), sections 8 (tag pairs,
// movetext, SAN) and 16.1 (FEN),
// https://www.saremba.de/chessgml/standards/pgn/pgn-complete.htm; the
// Chess960 Variant tag as lichess and python-chess write it.
//
// # Concurrency
//
// Functions are safe for concurrent use; a Game is a plain value owned by
// its caller. Nothing needs releasing.
package pgn
