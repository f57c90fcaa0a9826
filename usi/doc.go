// Package usi speaks the USI shogi engine protocol and runs one engine
// process.
//
// USI is defined in two public documents: Tord Romstad's original draft,
// which gives SFEN, the move format and every command (published with
// Shogidokoro's extensions marked at http://hgm.nubati.net/usi.html), and
// the Shogidokoro GUI's page
// (http://shogidokoro.starfree.jp/usi.html, in Japanese), the de facto
// standard engines implement, which adds among others "go mate" answered by
// "checkmate", "byoyomi", "bestmove win" and "gameover". USI derives from
// the chess protocol UCI by Rudolf Huber and Stefan Meyer-Kahlen (their
// description is published at http://www.shredderchess.com/download.html; a
// copy is at http://wbec-ridderkerk.nl/html/UCIProtocol.html). Commands
// from both USI documents are built; where they differ in what is sent
// (byoyomi with increments, where "ponder" goes), the package does as
// Shogidokoro does, since engines are written against it.
//
// The same code speaks the family's other dialects (Dialect): UCI, and for
// othello USI-X (Yua Hyodo's "USI-X protocol, othello version": USI's words
// over an othello board, what public othello engines speak) and the UOI
// draft it was renamed from (DialectUSIX and DialectUOI say how they
// differ). usi imports no game's rules: the dialects check form only, and
// what needs a board (the position reached, for UOI; whether the side to
// move must pass) is given by the caller.
//
// It has three parts:
//
//   - Commands (USI, Debug, IsReady, SetOption, Register, USINewGame,
//     Position, Go, Stop, PonderHit, GameOver, Quit): typed values whose Line
//     method validates every field and builds the line. A line never holds a
//     control character; invalid values give ErrBadCommand and nothing is
//     sent. Checks are syntactic only (IsMove, CheckSFEN): whether a position
//     or move is legal is for the shogi package, which usi does not import.
//   - ParseMessage, the parser for every engine message (ID, Option, USIOK,
//     ReadyOK, BestMove, Checkmate, Info, CopyProtection, Registration, and
//     the othello dialects' ScoreScale). It
//     skips unknown tokens and never panics; it allocates twice for a
//     typical info line.
//   - Engine, one engine process: Start (process group, handshake), options,
//     IsReady, NewGame, Go (a Search streaming Info and ending in one
//     Result), Stop, Ponderhit, Kill, Close. Detect learns which dialect an
//     engine speaks.
//
// # Concurrency
//
// An Engine has one owner at a time (the pool leases it to one session):
// Go, SetOption, ResetOptions, NewGame, GameOver and IsReady are called by
// the owner, one at a time, and Go accepts one search at a time (ErrBusy
// otherwise). IsReady may be called while a search runs.
//
// Safe from any goroutine at any time: Stop, Kill, Close, Done, Err, PID, ID,
// Options, OptionValue, ActiveSearch, and on a Search: Stop, Ponderhit, Hit, Done
// and Dropped. A Search's Next (or Deliver) and Wait are for one reading
// goroutine.
//
// Inside, one goroutine owns stdout and always drains it (info lines go to
// a bounded per-search queue that drops old lines when the reader lags, or
// after Search.Deliver to the reader's function on this goroutine;
// bestmove and checkmate are never dropped), one logs stderr, and one owns
// the process's Wait: when the engine exits, for any reason, the search in
// flight and any IsReady fail at once with an error wrapping
// ErrEngineExited, and Done is closed.
//
// # Who releases what
//
// Every Engine returned by Start must be closed with Close, also after it
// died or was killed: Close sends quit, kills the process group if it does
// not exit in time, and waits for the Engine's goroutines. Start leaves
// nothing behind when it fails. A Search needs no release: it ends with the
// engine's answer, with Stop (a bestmove within Config.StopTimeout, or the
// engine is killed), when the ctx given to Go is done (same as Stop), or
// when the engine exits or is closed.
package usi
