package play

import (
	"context"
	"errors"
	"time"

	"github.com/usid/usid/session"
	"github.com/usid/usid/usi"
)

// orphan is how long a game in progress that no instance renews is kept
// for its player: the lease (its instance died) and the grace.
func (m *Manager) orphan() time.Duration {
	lease, _ := m.shared.Timing()
	return lease + m.cfg.Grace
}

// renewLoop renews the leases of the games this instance drives, every
// check: a game lost to another instance is let go, a game another
// instance asks for is handed back (saved, its lease given up).
func (m *Manager) renewLoop(ctx context.Context) {
	defer close(m.renewDone)
	_, check := m.shared.Timing()
	t := time.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		all := make([]*game, 0, len(m.games))
		for _, g := range m.games {
			all = append(all, g)
		}
		m.mu.Unlock()
		// (A game's lock is never taken under the Manager's: end takes
		// them the other way round.)
		var ids []string
		var gs []*game
		for _, g := range all {
			if g.live() {
				ids, gs = append(ids, g.st.ID), append(gs, g)
			}
		}
		if len(ids) == 0 {
			continue
		}
		got, err := m.shared.Renew(ctx, ids)
		if err != nil {
			m.cfg.Logger.Warn("game leases not renewed", "err", err)
			continue
		}
		for i, v := range got {
			switch v {
			case -1:
				m.cfg.Logger.Warn("game lost to another instance", "game", ids[i])
				gs[i].leave(false)
			case 1:
				m.cfg.Logger.Info("game handed back: its player resumes it elsewhere", "game", ids[i])
				gs[i].leave(true)
			}
		}
	}
}

// finish stores st, ended, in the shared store: a failure to reach Redis
// is tried again, with a growing pause, until the game would be an orphan
// (the lease and the grace), so that an outage shorter than that never
// lets another instance take an ended game over as still playing. Only
// another instance's lease (it took the game over after this one's ran
// out) stops it at once.
func (m *Manager) finish(st *State) {
	defer m.finishes.Done()
	giveUp := time.Now().Add(m.orphan())
	pause := 50 * time.Millisecond
	for tries := 1; ; tries++ {
		err := m.shared.Finish(context.Background(), st, m.cfg.Keep, m.cfg.MaxKept)
		if err == nil {
			if tries > 1 {
				m.cfg.Logger.Info("ended game stored after a failure", "game", st.ID, "tries", tries)
			}
			return
		}
		if errors.Is(err, ErrNotHeld) || time.Now().Add(pause).After(giveUp) {
			m.cfg.Logger.Error("ended game not stored: another instance may carry it on", "game", st.ID, "tries", tries, "err", err)
			return
		}
		if tries == 1 {
			m.cfg.Logger.Warn("ended game not stored; trying again", "game", st.ID, "err", err)
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}

// takeOver serves a play_resume for a game this instance does not drive:
// it takes the game from the store, once the instance driving it has
// handed it back (asked, at its next renewal) or has lost its lease (it
// died), and drives it from its saved state: the clocks as they stood at
// the turn's start, so the time the move between instances took counts
// against the side to move.
func (m *Manager) takeOver(ctx context.Context, who session.Caller, req *session.Request, emit func(*session.Event)) *session.Error {
	id := req.Game
	m.mu.Lock()
	for {
		if g := m.games[id]; g != nil {
			m.mu.Unlock()
			if g.owner != who.Client {
				return newError(CodeNotFound, "no game %q: unknown, forgotten, or started by another client", clipID(id))
			}
			g.attach(ctx, req.ID, emit)
			return nil
		}
		ch := m.taking[id]
		if ch == nil {
			break
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return newError(session.CodeCancelled, "the connection went")
		}
		m.mu.Lock()
	}
	if m.closed {
		m.mu.Unlock()
		return newError(session.CodeShuttingDown, "the server is shutting down; reconnect to another instance")
	}
	ch := make(chan struct{})
	m.taking[id] = ch
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.taking, id)
		m.mu.Unlock()
		close(ch)
	}()

	lease, check := m.shared.Timing()
	deadline := time.Now().Add(lease + 2*check + time.Second)
	for {
		status, st, err := m.shared.Take(ctx, id, who.Client, m.orphan())
		if errors.Is(err, errTooBig) {
			m.cfg.Logger.Warn("a stored game refused", "game", clipID(id), "err", err)
			return newError(session.CodeInvalidField, "game %s: its stored state is too large to be a game", clipID(id))
		}
		if err != nil {
			m.cfg.Logger.Warn("game not taken over", "game", clipID(id), "err", err)
			return newError(session.CodeUnavailable, "the game's store failed; retry")
		}
		switch status {
		case "ok":
			return m.drive(ctx, who, st, req.ID, emit)
		case "inactive":
			if perr := m.checkStored(st, nil, time.Now()); perr != nil {
				m.cfg.Logger.Warn("a stored game refused", "game", clipID(id), "err", perr.Message)
				return perr
			}
			if st.Status == statusPlaying {
				// Nobody drove it for longer than the grace: abandoned.
				st.Status, st.Ended = statusEnded, time.Now()
				st.Result = &Result{Winner: colorName(colorOf(st.Human) ^ 1), Reason: "abandoned", End: "abort"}
			}
			emit(stateEvent(req.ID, st, time.Now()))
			return nil
		case "held":
			if time.Now().After(deadline) {
				return newError(session.CodeBusy, "game %s is still driven by another instance; retry", clipID(id))
			}
			select {
			case <-time.After(check / 5):
			case <-ctx.Done():
				return newError(session.CodeCancelled, "the connection went")
			}
		default:
			return newError(CodeNotFound, "no game %q: unknown, forgotten, or started by another client", clipID(id))
		}
	}
}

// drive carries on st, taken over by this instance.
func (m *Manager) drive(ctx context.Context, who session.Caller, st *State, reqID string, emit func(*session.Event)) *session.Error {
	// A state read back is checked as a request is: its game replayed by
	// the rules, its sizes within the bounds a game can reach here.
	b, perr := m.boardOf(st)
	if perr == nil {
		perr = m.checkStored(st, b, time.Now())
	}
	if perr == nil && ((b.notes(st) != nil && len(*b.notes(st)) != len(st.Moves)) || len(st.TimesMS) != len(st.Moves) || (st.ClocksMS != nil && len(st.ClocksMS) != len(st.Moves)) || st.Pre > len(st.Moves) ||
		(st.Human != "b" && st.Human != "w") || b.over() != nil) {
		perr = newError(session.CodeInvalidField, "game %s: its stored state does not hold together", clipID(st.ID))
	}
	if perr != nil { // never expected: usid wrote it, checked as it was played
		m.cfg.Logger.Warn("a stored game refused", "game", clipID(st.ID), "err", perr.Message)
		m.shared.Hand(context.Background(), st)
		return perr
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.shared.Hand(context.Background(), st)
		return newError(session.CodeShuttingDown, "the server is shutting down; reconnect to another instance")
	}
	m.countLocked(st.Owner, st.Network)
	g := newGame(m, who, st, b)
	m.games[st.ID] = g
	m.mu.Unlock()
	g.resume(ctx, reqID, emit)
	return nil
}

// checkStored checks a stored state's clocks as a play_start's are
// checked (its time control within the caps), its clocks within what that
// control can give, and its turn's start against this instance's clock: a
// start in the future (another instance's clock ahead of this one's, or a
// hand in the Redis) is taken as now, never as time given to the side to
// move.
func (m *Manager) checkStored(st *State, b *board, now time.Time) *session.Error {
	o := Options{Side: st.Human, Clock: st.TC, Level: st.Level}
	if err := o.check(m.cfg.Service.Caps); err != nil {
		return err
	}
	if b == nil { // not replayed yet: the game by its stored start
		var perr *session.Error
		if b, perr = m.boardOf(st); perr != nil {
			return perr
		}
	}
	if d := usi.DialectNamed(b.g.Dialects()[0]); d != nil && !d.Byoyomi {
		if err := o.checkIncrements(b.g.Name()); err != nil {
			return err
		}
	}
	for c := range 2 {
		tc := st.TC.of(c)
		if st.Played[c] < 0 || st.Played[c] > len(st.Moves) {
			return newError(session.CodeInvalidField, "game %s: %d moves played by %s in a game of %d", clipID(st.ID), st.Played[c], colorName(c), len(st.Moves))
		}
		// The most main time a side can hold: its main time, and an
		// increment per move (and the main time again per period).
		per := tc.IncMS
		if tc.Moves > 0 {
			per += tc.MainMS
		}
		if most := tc.MainMS + int64(st.Played[c]+1)*per; st.Main[c] < 0 || st.Main[c] > most {
			return newError(session.CodeInvalidField, "game %s: %s's main time %d ms: want 0..%d", clipID(st.ID), colorName(c), st.Main[c], most)
		}
	}
	if st.TurnStart.After(now) {
		m.cfg.Logger.Warn("a stored game's turn starts in the future: taken as now", "game", clipID(st.ID), "ahead", st.TurnStart.Sub(now))
		st.TurnStart = now
	}
	return nil
}

// boardOf replays a stored game by its rules, checked as a request's
// position is (sizes within what a game can reach here): its board.
func (m *Manager) boardOf(st *State) (*board, *session.Error) {
	maxMoves := max(m.cfg.Service.Caps.MaxMoves, 1024) + m.cfg.MaxPlies
	chk, perr := session.CheckPosition(startOf(st, st.Moves), maxMoves)
	if perr != nil {
		return nil, perr
	}
	return boardAt(chk)
}
