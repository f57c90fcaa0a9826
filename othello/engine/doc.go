// Package engine is usid's own othello engine, the program behind `usid
// othello-engine`: it speaks USI-X on stdin and stdout (ServeUSIX), as the
// public othello engines do, so the pool runs it as it runs any engine.
//
// The search works on its own bitboards (Board: the discs of the side to
// move and of its opponent; Moves and Flips by shift-fills): iterative
// deepening principal variation search with a transposition table and
// move ordering (search.go, think.go), a hand-weighted evaluation
// (eval.go), and an exact endgame solver, win/loss/draw then the exact
// margin (endgame.go). Budget turns a go command's clock into the
// search's time limits (clock.go). The match harness (match.go) plays
// games in process, for the strength tests. Positions come in through
// package othello, which checks them.
//
// # Concurrency
//
// Serve runs one session: it reads commands on its own goroutine while a
// search runs on another, which writes its info lines and bestmove under
// a lock; stop and ponderhit reach the search through its Control (atomic
// flags and deadlines). A Searcher, and a Player built on one, serves one
// goroutine at a time. Board, Moves, Flips, Evaluate, Perft and Budget are
// pure functions, safe for concurrent use.
package engine
