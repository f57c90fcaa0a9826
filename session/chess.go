// What is particular to chess positions: the engine of the position's game,
// SAN beside long algebraic moves, and the mate search UCI answers with a
// best move.

package session

import (
	"fmt"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// CodeGameMismatch refuses a position of one game for an engine of the
// other (a FEN for a shogi engine, an SFEN for a chess engine).
const CodeGameMismatch = "game_mismatch"

// engineOf is the engine for a position of game that names none: the
// first engine of that game (for a mate, one that does mate searches; for
// a Chess960 position, one that advertises UCI_Chess960), as far as the
// probes have told; else the default engine, whose mismatch is then
// refused.
func (c *Service) engineOf(game string, mate, chess960 bool) string {
	if c.Pool != nil {
		for _, n := range c.Pool.Engines() {
			if p := c.Pool.Profile(n); p != nil && p.Game() == game && (!mate || p.Checkmate) && (!chess960 || p.Chess960) {
				return n
			}
		}
	}
	return c.DefaultEngine
}

// EngineFor is the engine a request naming none gets for position p: the
// first engine of a chess position's game, DefaultEngine for shogi.
func (c *Service) EngineFor(p *Position) string {
	if p.Game() == GameChess {
		return c.engineOf(GameChess, false, p.Variant == Variant960)
	}
	return c.DefaultEngine
}

// sameGame refuses a job whose engine is known to play another game than
// its position's. An engine not probed yet is checked again on its lease.
func (c *Service) sameGame(j *job) *Error {
	if c.Pool == nil {
		return nil
	}
	if p := c.Pool.Profile(j.engine); p != nil {
		if p.Game() != j.pos.Game() {
			return gameMismatch(j, p.Game())
		}
		return no960(j, p)
	}
	return nil
}

// no960 refuses a Chess960 position for an engine that does not advertise
// UCI_Chess960 (CodeUnsupported).
func no960(j *job, p *probe.Profile) *Error {
	if j.pos.board.chess960() && !p.Chess960 {
		return errorf(CodeUnsupported, "engine %s does not advertise UCI_Chess960: it cannot take a Chess960 position", j.engine)
	}
	return nil
}

func gameMismatch(j *job, engineGame string) *Error {
	what := map[string]string{GameShogi: "a shogi position (sfen)", GameChess: "a chess position (fen)"}
	return errorf(CodeGameMismatch, "engine %s plays %s; the request has %s", j.engine, engineGame, what[j.pos.Game()])
}

// setPVNotation adds the line's notation (KIF or SAN) to an info event.
func (j *job) setPVNotation(ev *Event, pv []string) {
	n := j.pos.board.notate(pv)
	if j.pos.Game() == GameChess {
		ev.PVSAN = n
	} else {
		ev.PVKIF = n
	}
}

// setMoveNotation adds a legal best move's notation to a bestmove event.
func (j *job) setMoveNotation(ev *Event, move string) {
	n := j.pos.board.notate([]string{move})
	if len(n) != 1 {
		return
	}
	if j.pos.Game() == GameChess {
		ev.MoveSAN = n[0]
	} else {
		ev.MoveKIF = n[0]
	}
}

// chessMateEvent turns a UCI engine's answer to "go mate <n>" into the
// checkmate event: "mate" when the engine ended the search by itself with a
// mate score for the side to move and a line the rules show to end in
// checkmate, "timeout" when usid stopped it first, "nomate" otherwise. A
// line that does not mate is the engine's error, as a false tsume is.
func (c *Service) chessMateEvent(j *job, b *chessBoard, res usi.Result, stoppedByUs bool, last *usi.Info) *Event {
	ev := &Event{Type: EventCheckmate, ID: j.id, Result: string(usi.NoMate)}
	if res.BestMove == nil {
		return errorEvent(j.id, errorf(CodeEngineError, "the engine answered go mate with checkmate"))
	}
	found := last.Has(usi.InfoScore) && last.Score.Mate && last.Score.Value > 0 && len(last.PV) > 0 &&
		last.PV[0] == res.BestMove.Move
	switch {
	case found:
		plies := 2*last.Score.Value - 1
		line, err := b.mateLine(last.PV, plies)
		if err == nil && len(line) > plies {
			err = fmt.Errorf("a mate in %d announced with a line of %d plies", last.Score.Value, len(line))
		}
		if err != nil {
			c.Logger.Warn("engine sent a false mate line", "id", j.id, "line", last.PV, "err", err)
			return errorEvent(j.id, errorf(CodeEngineError, "the engine's mate line failed verification: %v", err))
		}
		ev.Result, ev.Moves, ev.Verified = string(usi.MateFound), line, "line"
		if j.kif {
			ev.MovesSAN = b.notate(line)
		}
	case stoppedByUs:
		ev.Result = string(usi.MateTimeout) // stopped: nothing was proven
	}
	return ev
}
