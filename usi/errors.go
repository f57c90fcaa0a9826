package usi

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them (test with
// errors.Is); the message around it says what happened.
var (
	// ErrBadCommand: a command value is invalid (not a USI move, not an SFEN,
	// a control character, a negative number, a value the engine's option
	// does not accept). Nothing was sent to the engine.
	ErrBadCommand = errors.New("usi: invalid command")

	// ErrUnknownOption: SetOption named an option the engine did not advertise.
	ErrUnknownOption = errors.New("usi: unknown option")

	// ErrSyntax: ParseMessage could not make sense of an engine line.
	ErrSyntax = errors.New("usi: unrecognized engine message")

	// ErrTimeout: the engine missed a deadline (usiok, readyok, bestmove after
	// stop, exit after quit, or reading its stdin).
	ErrTimeout = errors.New("usi: engine timed out")

	// ErrEngineExited: the engine process is gone. When it exited on its own
	// the error also wraps the *exec.ExitError carrying its status.
	ErrEngineExited = errors.New("usi: engine exited")

	// ErrClosed: Close was called. Work in flight at that moment and any call
	// made afterwards fail with it (Engine.Err wraps both ErrClosed and
	// ErrEngineExited after Close).
	ErrClosed = errors.New("usi: engine closed")

	// ErrBusy: a search is still in flight, so the engine cannot take a new
	// search or an option change yet (USI sends setoption only to a waiting
	// engine).
	ErrBusy = errors.New("usi: engine busy with a search")

	// ErrUndecided: Detect saw usiok but not, in time, whether the engine
	// plays shogi (USI) or othello (USI-X). It is also an ErrTimeout when
	// the time ran out.
	ErrUndecided = errors.New("usi: usiok, but USI or USI-X undecided")
)
