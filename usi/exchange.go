// What usid asks of a running engine - isready, usinewgame, gameover, go,
// stop - and the search it starts.

package usi

import (
	"context"
	"fmt"
	"time"
)

// IsReady sends "isready" and waits for "readyok", at most
// Config.ReadyOKTimeout (ErrTimeout) or until ctx is done. It is the health
// check, and the way to wait for options and usinewgame to be applied. It
// may be called during a search: the engine answers without stopping.
func (e *Engine) IsReady(ctx context.Context) error {
	e.writeMu.Lock()
	e.mu.Lock()
	e.readySent++
	n := e.readySent
	e.mu.Unlock()
	err := e.writeLocked("isready\n")
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	t := time.NewTimer(e.cfg.ReadyOKTimeout)
	defer t.Stop()
	for {
		// readyok lines answer isready lines in order, so a late answer to
		// an isready that timed out is not taken for this one.
		e.mu.Lock()
		got, ch := e.readyGot >= n, e.readyCh
		e.mu.Unlock()
		if got {
			return nil
		}
		select {
		case <-ch:
		case <-e.done:
			return e.Err()
		case <-t.C:
			return fmt.Errorf("%w: no readyok within %v (an engine loading large evaluation files or allocating a big hash may need a longer ready timeout)", ErrTimeout, e.cfg.ReadyOKTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NewGame sends "usinewgame" ("ucinewgame" in UCI). Follow it with IsReady.
func (e *Engine) NewGame() error { return e.sendIdle(newGameCmd{e.cfg.Dialect}) }

// GameOver sends "gameover win|lose|draw"; in a dialect without it (UCI) it
// only checks that no search runs: the next new game says enough.
func (e *Engine) GameOver(r GameResult) error {
	if !e.cfg.Dialect.GameOver {
		if _, err := (GameOver{Result: r}).Line(); err != nil {
			return err
		}
		e.mu.Lock()
		busy := e.search != nil
		e.mu.Unlock()
		if busy {
			return ErrBusy
		}
		return nil
	}
	return e.sendIdle(GameOver{Result: r})
}

// GameOverStones sends UOI's "gameover <result> by <reason> bstone N wstone
// N" in a dialect that has it (StoneGameOver); elsewhere it only checks the
// command and that no search runs, as GameOver does.
func (e *Engine) GameOverStones(g GameOverStones) error {
	if !e.cfg.Dialect.StoneGameOver {
		if _, err := g.Line(); err != nil {
			return err
		}
		e.mu.Lock()
		busy := e.search != nil
		e.mu.Unlock()
		if busy {
			return ErrBusy
		}
		return nil
	}
	return e.sendIdle(g)
}

// newGameCmd is the dialect's new-game command.
type newGameCmd struct{ d *Dialect }

func (c newGameCmd) Line() (string, error) { return c.d.NewGame, nil }

// sendIdle sends a command that USI allows only between searches.
func (e *Engine) sendIdle(c Command) error {
	line, err := c.Line()
	if err != nil {
		return err
	}
	e.mu.Lock()
	busy := e.search != nil
	e.mu.Unlock()
	if busy {
		return ErrBusy
	}
	return e.write(line)
}

// Go sends the position and go commands and returns the search in flight.
// Both commands are validated before anything is sent. One search at a time:
// while one is in flight (including one stopping) Go fails with ErrBusy.
// When ctx is done the search is stopped as by Search.Stop; its result is
// still the engine's bestmove. A "go mate" search ends with Checkmate (or
// with BestMove, from engines such as fairy-stockfish).
func (e *Engine) Go(ctx context.Context, pos Position, g Go) (*Search, error) {
	d := e.cfg.Dialect
	var lines string
	if g.Pass && d.PassCommand {
		passLine, err := d.PassLine(pos)
		if err != nil {
			return nil, err
		}
		lines = passLine + "\n"
	} else {
		posLine, err := d.PositionLine(pos)
		if err != nil {
			return nil, err
		}
		goLine, err := d.GoLine(g)
		if err != nil {
			return nil, err
		}
		lines = posLine + "\n" + goLine + "\n"
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// writeMu first: a Stop from another goroutine must not reach the
	// engine before this go.
	e.writeMu.Lock()
	e.mu.Lock()
	if err := e.errLocked(); err != nil {
		e.mu.Unlock()
		e.writeMu.Unlock()
		return nil, err
	}
	if e.search != nil {
		e.mu.Unlock()
		e.writeMu.Unlock()
		return nil, ErrBusy
	}
	s := newSearch(e, g.Ponder)
	e.search = s
	e.mu.Unlock()
	err := e.writeLocked(lines)
	e.writeMu.Unlock()
	if err != nil {
		e.endSearch(s, Result{}, err)
		return nil, err
	}
	if g.Pass && d.PassCommand {
		// The engine does not answer a pass command: its move is the pass.
		e.endSearch(s, Result{BestMove: &BestMove{Move: MovePass}}, nil)
		return s, nil
	}
	s.watch(ctx)
	return s, nil
}

// ActiveSearch returns the search in flight, or nil.
func (e *Engine) ActiveSearch() *Search {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.search
}

// Stop stops the search in flight, if any (see Search.Stop). Safe from any
// goroutine.
func (e *Engine) Stop() {
	if s := e.ActiveSearch(); s != nil {
		s.Stop()
	}
}

// endSearch ends s, if it is still the search in flight, with res or err.
func (e *Engine) endSearch(s *Search, res Result, err error) bool {
	e.mu.Lock()
	if e.search == s {
		e.search = nil
	}
	e.mu.Unlock()
	return s.finish(res, err)
}
