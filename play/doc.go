// Package play runs games against the engine with clocks the server keeps:
// a human (a page, over the WebSocket) plays one side from the initial
// position, a handicap or any position, the engine the other. Shogi and
// chess games differ only in their rules, a board per game (board.go,
// chess.go): a chess game ends by checkmate, stalemate, insufficient
// material, the third repetition, the fifty-move rule, resignation or
// time, and its engine is told UCI's clocks (wtime, btime, winc, binc,
// movestogo). The server
// counts both clocks (the human's runs from the moment the engine's move,
// or the game's start, was sent until the human's move arrives; the
// engine's while its search has a process), tells
// the engine its time with go btime/wtime and byoyomi or binc/winc, lets
// it ponder where it can (a level bounds its time per move: a strength
// option set low gets a time per move too, see levelTimed), and ends the
// game by the rules: checkmate,
// resignation, loss on time, 千日手 (a perpetual check loses), 入玉宣言 by
// the 27-point rule (the engine's bestmove win is checked), the move cap.
//
// The engine is driven through a session.Session of the game's own, so
// that every search is checked, planned, watched and charged to the
// player's engine time (session.Caller) like any other; pondering alone is
// charged to nobody until ponderhit, and gives its engine to a caller
// waiting for the kind (the engine searches afresh at the human's move).
// A game belongs to
// the client that started it; it lives on when that client's connection
// goes, for a grace period in which a play_resume from a new connection
// takes it up again with its clocks (they keep running); past it, or past
// Config.Idle in one turn whatever the clock, the player has left the game
// (lost by abandonment, aborted before the player's first move). Games are
// bounded per client, per network (session.Caller.Network) and in total,
// and ended games are kept for a while, bounded too. The engine's clock
// runs only while its search has a process: a search that waits for one
// (its idle engine was lent while the human thought) stands its clock.
//
// Each game's state (State, JSON) is saved to a Store after every change:
// the moves, and the clocks as they stood when the turn began. The memory
// store serves one process; the Redis store (a Shared one) lets any
// instance take a game over: the instance driving a game holds a lease on
// it and renews it; a play_resume on another instance asks for the game,
// which its holder hands back at its next renewal (or which is taken once
// the lease ran out: the holder died), and the new instance drives it
// from the saved clocks, so the time the move took counts against the side
// to move. A drain (Close) hands the games back at once. A game's end is
// stored again until Redis takes it (a short outage must not let another
// instance carry an ended game on), and a state read back is checked as a
// client's play_start is, its size measured on the Redis server first.
//
// # Concurrency
//
// A Manager is safe for concurrent use; each game has one lock, held while
// a request or an engine event changes it, never while waiting for an
// engine (the engine's session is served by its own worker). Close ends
// every game and waits for their engines to be given back.
package play
