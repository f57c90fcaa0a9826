package match

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/usid/usid/internal/redislease"
	"github.com/usid/usid/session"
)

// Matches across pods (Config.Redis): a match is stored in Redis when it
// starts (redisStore) and every pod sharing the store plays its games.
// Each pod looks for games every Check, claims them (at most the match's
// concurrency held at once, over all pods) and plays each under a lease it
// renews; an ended game is stored at once. A pod that dies loses only the
// game it held: its lease runs out and another pod plays it again from its
// start. GET and DELETE read and change the store, so they answer the
// same on every pod, and the result is computed from the stored games.

// Open makes a Manager: with cfg.Redis, one whose matches are shared by
// every instance using that Redis and prefix (it plays their games once
// SetCallers is called); else this process's matches (as New).
func Open(cfg Config) (*Manager, error) {
	m := New(cfg)
	if cfg.Redis == nil {
		return m, nil
	}
	st, err := newRedisStore(*cfg.Redis, m.cfg.Keep+time.Minute, m.cfg.MaxKept)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.shared, m.slots = st, make(chan struct{}, m.cfg.MaxRunning*m.cfg.MaxConcurrency)
	m.loopDone = make(chan struct{})
	go m.loop()
	return m, nil
}

// SetCallers says whom the searches of a game taken from the shared store
// are for, given its match's owner (the owner's engine-time budget);
// until it is called, this instance plays no game from the store.
func (m *Manager) SetCallers(f func(client string) session.Caller) {
	m.mu.Lock()
	m.callers = f
	m.mu.Unlock()
}

func (m *Manager) callerFor(client string) (session.Caller, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.callers == nil {
		return session.Caller{}, false
	}
	return m.callers(client), true
}

// startShared stores checked match c for who.
func (m *Manager) startShared(who session.Caller, r *Request, c *checked) (string, *Error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", invalid("the request: %v", err)
	}
	id := newID()
	got, err := m.shared.create(m.ctx, id, who.Client, b, c.games, c.Concurrency, m.cfg.MaxPerClient, m.cfg.MaxMatches)
	switch {
	case err != nil:
		m.cfg.Logger.Warn("match: redis", "err", err)
		return "", errStore()
	case got == "client":
		return "", errPerClient(m.cfg.MaxPerClient)
	case got == "full":
		return "", errFull(m.cfg.MaxMatches)
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
	return id, nil
}

func errStore() *Error {
	// As broadcasts answer their store's outage: a 503 to retry.
	return &Error{Code: session.CodeQueueFull, Message: "matches are unavailable for a moment (their store does not answer); retry", MoveIndex: -1, Retry: 5 * time.Second}
}

// getShared is match id as stored, a copy (Wait on it returns at once if
// it had ended, else when ctx is done), or nil; the error when Redis could
// not be read (a stored match unlike usid's reads as none).
func (m *Manager) getShared(id string) (*Match, *Error) {
	st, err := m.shared.load(m.ctx, id, m.cfg.MaxGames)
	if err != nil {
		m.cfg.Logger.Warn("match: reading a stored match", "id", clip(id), "err", err)
		if !errors.Is(err, errStoredMatch) && !errors.Is(err, redislease.ErrTooMany) {
			return nil, errStore()
		}
	}
	if st == nil {
		return nil, nil
	}
	mt, err := m.fromStore(id, st)
	if err != nil {
		m.cfg.Logger.Warn("match: a stored match", "id", clip(id), "err", err)
	}
	return mt, nil
}

var errPlanned = errors.New("the stored games planned differ from its request's")

// fromStore makes the Match st says.
func (m *Manager) fromStore(id string, st *stored) (*Match, error) {
	var r Request
	if err := json.Unmarshal(st.req, &r); err != nil {
		return nil, err
	}
	c, cerr := m.check(&r)
	if cerr != nil {
		return nil, cerr
	}
	if c.games != st.planned {
		return nil, errPlanned
	}
	mt := &Match{id: id, owner: session.Caller{Client: st.owner}, c: c, done: make(chan struct{}), status: st.status, games: make([]*Game, c.games), ended: st.ended}
	mt.table = m.table(mt)
	for i, g := range st.playing {
		mt.games[i] = g
	}
	for i, g := range st.games {
		mt.games[i] = g
	}
	if st.err != nil {
		mt.err = &Error{Code: st.err.Code, Message: st.err.Message, MoveIndex: -1}
	}
	if st.status != StatusQueued && st.status != StatusRunning {
		close(mt.done)
		mt.games = keptGames(mt.games)
	}
	return mt, nil
}

// loop claims the stored matches' games while this pod has slots, every
// Check or when a match starts here, until the Manager closes.
func (m *Manager) loop() {
	defer close(m.loopDone)
	t := time.NewTicker(m.shared.check)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		case <-m.kick:
		}
		if _, ok := m.callerFor(""); !ok {
			continue
		}
		ids, err := m.shared.live(m.ctx, m.cfg.MaxMatches)
		if err != nil {
			m.cfg.Logger.Warn("match: redis", "err", err)
			continue
		}
		m.claim(ids)
	}
}

// claim claims games of the matches ids, oldest first, while this pod
// has free slots, and plays each.
func (m *Manager) claim(ids []string) {
	for _, id := range ids {
		for m.ctx.Err() == nil {
			select {
			case m.slots <- struct{}{}:
			default:
				return // every slot busy: wait for the next look
			}
			i, err := m.shared.claim(m.ctx, id)
			if err != nil || i < 0 {
				<-m.slots
				break
			}
			m.cfg.Logger.Info("match game claimed", "match", id, "game", i, "pod", m.shared.pod)
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				defer func() { <-m.slots }()
				m.playShared(id, i)
			}()
		}
	}
}

// playShared plays game i of match id, claimed, then the match's next
// games while there are some, on one pair of seats.
func (m *Manager) playShared(id string, i int) {
	st, err := m.shared.load(m.ctx, id, m.cfg.MaxGames)
	var mt *Match
	if err == nil && st != nil {
		mt, err = m.fromStore(id, st)
	}
	if mt == nil {
		// Not playable here (gone, or unlike what this pod checks): the
		// lease is given up for another pod, or the match's end.
		m.cfg.Logger.Warn("match: a claimed match unreadable", "id", clip(id), "err", err)
		_ = m.shared.release(m.ctx, id, i)
		return
	}
	var seats [2]*seat
	defer func() {
		for _, s := range seats {
			if s != nil {
				s.close()
			}
		}
	}()
	for i >= 0 && m.playOne(mt, &seats, i) {
		if i, err = m.shared.claim(m.ctx, id); err != nil {
			return
		}
		if i >= 0 {
			m.cfg.Logger.Info("match game claimed", "match", id, "game", i, "pod", m.shared.pod)
		}
	}
}

// playOne plays game i of mt under its lease and stores its end; it
// reports whether the seats may play on. Every Check, it renews the lease
// and writes the game as it stands if it changed, so that every pod
// lists it and its watch page follows it.
func (m *Manager) playOne(mt *Match, seats *[2]*seat, i int) bool {
	ctx, cancel := context.WithCancel(m.ctx)
	defer cancel()
	var now latest
	var renewing sync.WaitGroup
	renewing.Go(func() {
		t := time.NewTicker(m.shared.check)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// An error (Redis away) keeps playing: the end is stored if
			// the lease outlived the outage, else another pod plays again.
			if ok, err := m.shared.renew(ctx, mt.id, i); err == nil && !ok {
				cancel() // lost, or the match was cancelled
				return
			}
			if g := now.take(); g != nil {
				_ = m.shared.progress(ctx, mt.id, i, g) // for watchers only: the next change writes it again
			}
		}
	})
	g, err := m.playClaimed(ctx, mt, seats, i, now.set)
	cancel()
	renewing.Wait()
	if err != nil {
		switch {
		case m.ctx.Err() != nil:
			if !m.killed.Load() {
				_ = m.shared.release(context.Background(), mt.id, i) // another pod takes it at once
			}
		case ctx.Err() == nil:
			_ = m.shared.release(m.ctx, mt.id, i)
			_ = m.shared.stop(m.ctx, mt.id, err)
		}
		return false
	}
	ok, serr := m.shared.finish(m.ctx, mt.id, i, g)
	if serr != nil || !ok {
		return serr == nil // lost (another pod plays it) or the match ended
	}
	if mt.c.sprt != nil {
		if st, _ := m.shared.load(m.ctx, mt.id, m.cfg.MaxGames); st != nil {
			if now, _ := m.fromStore(mt.id, st); now != nil {
				_, p := now.counts()
				if mt.c.sprt.Decide(mt.c.sprt.LLR(p)) != "" {
					_ = m.shared.stop(m.ctx, mt.id, nil)
				}
			}
		}
	}
	return true
}

// latest is a game under way as it last stood, until taken: the player
// sets it after each move, the lease's renewer takes it to store.
type latest struct {
	mu sync.Mutex
	g  *Game
}

func (l *latest) set(g *Game) {
	cp := g.snapshot()
	l.mu.Lock()
	l.g = cp
	l.mu.Unlock()
}

// take is the game if it changed since the last take, else nil.
func (l *latest) take() *Game {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.g
	l.g = nil
	return g
}

// playClaimed opens the seats if they are not yet, and plays game i,
// telling progress of each move.
func (m *Manager) playClaimed(ctx context.Context, mt *Match, seats *[2]*seat, i int, progress func(*Game)) (*Game, *Error) {
	who, _ := m.callerFor(mt.owner.Client)
	for k, p := range mt.c.Players {
		if seats[k] != nil {
			continue
		}
		s, err := openSeat(ctx, m.cfg.Service, who, p)
		if err != nil {
			return nil, err
		}
		seats[k] = s
	}
	op := i / 2 % len(mt.c.openings)
	return mt.table.playGame(ctx, mt.c.openings[op], op, i%2, *seats, progress)
}

// kill stops this pod as a crash would (tests): its games are abandoned
// under their leases, nothing more is written.
func (m *Manager) kill() {
	m.killed.Store(true)
	m.Close()
}
