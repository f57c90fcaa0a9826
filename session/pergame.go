// What differs between games at the session's level, asked of the
// position's game (package game) and its engines' dialect: the engine of
// a position's game, the notation beside engine moves, and the mate search
// that UCI answers with a best move.

package session

import (
	"cmp"
	"fmt"

	"github.com/usid/usid/game"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// CodeGameMismatch refuses a position of one game for an engine of
// another (a FEN for a shogi engine, an SFEN for a chess engine).
const CodeGameMismatch = "game_mismatch"

// variant960 is the variant of a position whose engine must be told
// UCI_Chess960 (the chess game's Chess960).
const variant960 = "chess960"

// engineOf is the engine for a position of game that names none, on
// every route (REST and WebSocket searches, broadcasts through newJob;
// game analyses and games against the engine through EngineFor): the
// first engine of that game that can take the request (for a mate, one
// that does mate searches; for a Chess960 position, one that advertises
// UCI_Chess960), else the first engine of that game (which then says what
// it cannot do: issue 43, a mate of an othello position went to the shogi
// default), as far as the probes have told; else the default engine,
// whose mismatch is then refused.
func (c *Service) engineOf(game string, mate bool, variant string) string {
	if c.Pool == nil {
		return c.DefaultEngine
	}
	first := ""
	for _, n := range c.Pool.Engines() {
		p := c.Pool.Profile(n)
		if p == nil || p.Game() != game {
			continue
		}
		if (!mate || p.Checkmate) && (variant != variant960 || p.Chess960) {
			return n
		}
		first = cmp.Or(first, n)
	}
	return cmp.Or(first, c.DefaultEngine)
}

// EngineFor is the engine a request naming none gets for position p: the
// first engine of its game, DefaultEngine for the default game.
func (c *Service) EngineFor(p *Position) string {
	if g := p.GameOf(); g != nil && g != game.Default() {
		return c.engineOf(g.Name(), false, p.Variant)
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
		if p.Game() != j.pos.GameName() {
			return gameMismatch(j, p.Game())
		}
		return no960(j, p)
	}
	return nil
}

// no960 refuses a Chess960 position for an engine that does not advertise
// UCI_Chess960 (CodeUnsupported).
func no960(j *job, p *probe.Profile) *Error {
	if j.pos.Variant() == variant960 && !p.Chess960 {
		return errorf(CodeUnsupported, "engine %s does not advertise UCI_Chess960: it cannot take a Chess960 position", j.engine)
	}
	return nil
}

func gameMismatch(j *job, engineGame string) *Error {
	g := j.pos.Game()
	return errorf(CodeGameMismatch, "engine %s plays %s; the request has a %s position (%s)", j.engine, engineGame, g.Name(), g.Field())
}

// notationError refuses a notation the position's game does not write.
func notationError(g game.Game, notation string) *Error {
	if g.Notation() == "" {
		return errorf(CodeInvalidField, "notation %q: %s moves have no other notation", clip(notation), g.Name())
	}
	return errorf(CodeInvalidField, "notation %q: the notation of %s moves is %q", clip(notation), g.Name(), g.Notation())
}

// notation sets the event field of the game's notation (KIF's _kif, SAN's
// _san) to n.
func notation(g game.Game, kif, san *[]string, n []string) {
	switch g.Notation() {
	case "kif":
		*kif = n
	case "san":
		*san = n
	}
}

// setPVNotation adds the line's notation to an info event.
func (j *job) setPVNotation(ev *Event, pv []string) {
	notation(j.pos.Game(), &ev.PVKIF, &ev.PVSAN, j.pos.Notate(pv))
}

// setMovesNotation adds a mate line's notation to a checkmate event.
func (j *job) setMovesNotation(ev *Event, line []string) {
	notation(j.pos.Game(), &ev.MovesKIF, &ev.MovesSAN, j.pos.Notate(line))
}

// setMoveNotation adds a legal best move's notation to a bestmove event.
func (j *job) setMoveNotation(ev *Event, move string) {
	n := j.pos.Notate([]string{move})
	if len(n) != 1 {
		return
	}
	var kif, san []string
	notation(j.pos.Game(), &kif, &san, n)
	if kif != nil {
		ev.MoveKIF = kif[0]
	}
	if san != nil {
		ev.MoveSAN = san[0]
	}
}

// bestMoveMateEvent turns a UCI engine's answer to "go mate <n>" into the
// checkmate event: "mate" when the engine ended the search by itself with a
// mate score for the side to move and a line the rules show to end in
// checkmate (finished by the rules where the engine cut it short),
// "timeout" when usid stopped it first, "nomate" otherwise. A line that
// does not mate is the engine's error, as a false tsume is.
func (c *Service) bestMoveMateEvent(j *job, res usi.Result, stoppedByUs bool, last *usi.Info) *Event {
	ev := &Event{Type: EventCheckmate, ID: j.id, Result: string(usi.NoMate)}
	if res.BestMove == nil {
		return errorEvent(j.id, errorf(CodeEngineError, "the engine answered go mate with checkmate"))
	}
	found := last.Has(usi.InfoScore) && last.Score.Mate && last.Score.Value > 0 && len(last.PV) > 0 &&
		last.PV[0] == res.BestMove.Move
	switch {
	case found:
		plies := 2*last.Score.Value - 1
		line, _, err := j.pos.Mate(last.PV, plies)
		if err == nil && len(line) > plies {
			err = fmt.Errorf("a mate in %d announced with a line of %d plies", last.Score.Value, len(line))
		}
		if err != nil {
			c.Logger.Warn("engine sent a false mate line", "id", j.id, "line", last.PV, "err", err)
			return errorEvent(j.id, errorf(CodeEngineError, "the engine's mate line failed verification: %v", err))
		}
		ev.Result, ev.Moves, ev.Verified = string(usi.MateFound), line, "line"
		if j.kif {
			j.setMovesNotation(ev, line)
		}
	case stoppedByUs:
		ev.Result = string(usi.MateTimeout) // stopped: nothing was proven
	}
	return ev
}
