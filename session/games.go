package session

import (
	"encoding/json"
)

// Whole-game analysis (analyze_game) is run by package review, which imports
// this package; a Session only forwards the request and the job's events.
// The split keeps imports one way: a Session knows the GameRunner
// interface, not the games package.

// TypeAnalyzeGame asks for every position of a game to be analysed (package
// games runs it as a background job).
const TypeAnalyzeGame = "analyze_game"

// Events of a whole-game analysis.
const (
	// EventProgress: a position of the game has been analysed (Progress,
	// Positions). Several may be merged into one while the client reads.
	EventProgress = "progress"
	// EventGameAnalysis is a game analysis' terminal event: Status done or
	// cancelled, with the Summary (an analysis that failed ends in an error
	// event instead).
	EventGameAnalysis = "game_analysis"
)

// GameProgress counts a game analysis' positions.
type GameProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
	// EstimatedLeftMS estimates the time left of a running or queued
	// analysis, in milliseconds: from the searches done so far, or from
	// the time per position before the first ends (absent when the limit
	// is a depth or nodes and no search has ended yet).
	EstimatedLeftMS *int64 `json:"estimated_left_ms,omitempty"`
}

// GameThresholds are an analyze_game request's judgement thresholds:
// win-rate drops (0..1) of an inaccuracy, a mistake, a blunder (package
// games checks and documents them).
type GameThresholds struct {
	Inaccuracy float64 `json:"inaccuracy"`
	Mistake    float64 `json:"mistake"`
	Blunder    float64 `json:"blunder"`
}

// GameRunner starts whole-game analyses on behalf of one client. Package
// games implements it; the server gives each Session the runner of its
// client (SetGames).
type GameRunner interface {
	// StartGame checks r (type analyze_game) and starts a job, or refuses
	// it. emit then gets the job's progress events and exactly one terminal
	// event (game_analysis or error), all carrying r.ID; it is called from
	// the job's goroutines and must not block.
	StartGame(r *Request, emit func(*Event)) (GameHandle, *Error)
}

// GameHandle is a Session's hold on a job it started.
type GameHandle interface {
	Cancel() // the job ends cancelled (its terminal event still comes)
	Detach() // no more events; the job runs on (it outlives the session)
}

// CheckGameAnalysis checks the search that a game analysis runs at each
// position, as Analyze would (engine name, notation, the position and its
// moves, the limits against the caps; at least one limit), and returns the
// checked game. A game analysis searches one line per position: multipv is
// not taken.
func (c *Service) CheckGameAnalysis(r *Request) (*Checked, *Error) {
	a := *r
	a.Type = TypeAnalyze
	if a.MultiPV != 0 {
		return nil, errorf(CodeInvalidField, "multipv: a game analysis searches one line per position")
	}
	j, err := c.newJob(&a)
	if err != nil {
		return nil, err
	}
	if !j.bounded {
		return nil, errorf(CodeInvalidField, "limits: set movetime_ms, depth or nodes for each position (at most %v of movetime)", c.Caps.MaxMoveTime)
	}
	return j.pos, nil
}

// SetGames lets the session take analyze_game requests; without a runner
// they are refused as unsupported. Call it before the first Handle.
func (s *Session) SetGames(g GameRunner) {
	s.mu.Lock()
	s.games = g
	s.mu.Unlock()
}

// gameState is the session's side of the game jobs it started.
type gameState struct {
	jobs map[string]*gameEntry // by request id, until the terminal event
	idle chan struct{}         // closed when jobs becomes empty (for Drain); nil when not waited on
}

type gameEntry struct {
	h      GameHandle // nil while StartGame runs
	cancel bool       // stop came while StartGame ran
	keep   bool       // the request said keep: the job outlives the session
}

// Lock order: a job holds its own lock while it emits, and emit takes s.mu;
// so the session never calls a GameRunner or GameHandle while holding s.mu.

// startGame serves an analyze_game request.
func (s *Session) startGame(req *Request) {
	s.mu.Lock()
	g, draining := s.games, s.draining
	_, inUse := s.game.jobs[req.ID]
	var e *gameEntry
	if !draining && g != nil && !inUse && !s.closed {
		e = &gameEntry{keep: req.Keep}
		if s.game.jobs == nil {
			s.game.jobs = map[string]*gameEntry{}
		}
		s.game.jobs[req.ID] = e
	}
	s.mu.Unlock()
	switch {
	case draining:
		s.out.push(errorEvent(req.ID, errorf(CodeShuttingDown, "the server is shutting down; reconnect to another instance")))
		return
	case g == nil:
		s.out.push(errorEvent(req.ID, errorf(CodeUnsupported, "this server does not run game analyses")))
		return
	case inUse:
		s.out.push(errorEvent(req.ID, errorf(CodeInvalidField, "id %q names a game analysis still running; use another id", clip(req.ID))))
		return
	case e == nil:
		return // closed
	}
	// The job's events may come before StartGame returns (its terminal
	// event too): gameEvent forgets e then.
	h, err := g.StartGame(req, func(ev *Event) { s.gameEvent(req.ID, ev) })
	s.mu.Lock()
	live := s.game.jobs[req.ID] == e
	if err != nil {
		if live {
			s.forgetGameLocked(req.ID)
		}
		s.mu.Unlock()
		s.out.push(errorEvent(req.ID, err))
		return
	}
	e.h = h
	cancel := e.cancel
	s.mu.Unlock()
	if !live {
		// Ended already, or the session closed meanwhile: a job that
		// belongs to its connection ends with it.
		if !req.Keep {
			h.Cancel() // changes nothing if it has ended
		}
		h.Detach()
		return
	}
	if cancel {
		h.Cancel()
	}
}

// gameEvent passes a job's event to the client; a terminal event forgets
// the job.
func (s *Session) gameEvent(id string, ev *Event) {
	if ev.Type == EventProgress {
		s.out.pushProgress(ev)
		return
	}
	s.out.push(ev)
	if ev.Type != EventGameAnalysis && ev.Type != EventError {
		return
	}
	s.mu.Lock()
	s.forgetGameLocked(id)
	s.mu.Unlock()
	s.markEnded(id)
}

func (s *Session) forgetGameLocked(id string) {
	if _, ok := s.game.jobs[id]; !ok {
		return
	}
	delete(s.game.jobs, id)
	if len(s.game.jobs) == 0 && s.game.idle != nil {
		close(s.game.idle)
		s.game.idle = nil
	}
}

// stopGame cancels the game job started by request id, if there is one.
func (s *Session) stopGame(id string) bool {
	s.mu.Lock()
	e, ok := s.game.jobs[id]
	var h GameHandle
	if ok {
		if h = e.h; h == nil {
			e.cancel = true // StartGame is running: startGame cancels it
		}
	}
	s.mu.Unlock()
	if h != nil {
		h.Cancel()
	}
	return ok
}

// detachGames ends the session's hold on its jobs (Close): a job started
// with keep runs on without it, the others are cancelled (a job belongs
// to the page that started it unless it asked to outlive it).
func (s *Session) detachGames() {
	s.mu.Lock()
	var hs, cancel []GameHandle
	for _, e := range s.game.jobs {
		switch {
		case e.h == nil: // startGame finds it gone and cancels or detaches it
		case e.keep:
			hs = append(hs, e.h)
		default:
			cancel = append(cancel, e.h)
		}
	}
	s.game.jobs = nil
	if s.game.idle != nil {
		close(s.game.idle)
		s.game.idle = nil
	}
	s.mu.Unlock()
	for _, h := range cancel {
		h.Detach() // no event to a closed session, then the job ends
		h.Cancel()
	}
	for _, h := range hs {
		h.Detach()
	}
}

// gamesIdle returns a channel closed once the session's game jobs have
// sent their terminal events (at once when there are none).
func (s *Session) gamesIdle() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.game.jobs) == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.game.idle == nil {
		s.game.idle = make(chan struct{})
	}
	return s.game.idle
}

// pushProgress queues a progress event, merged into one of the same job
// still waiting to be sent: a slow client gets the latest count and every
// position, in order, in fewer messages, and progress never counts towards
// the events that make a client too slow.
func (o *outbox) pushProgress(e *Event) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	for i := len(o.queue) - 1; i >= 0; i-- {
		q := o.queue[i]
		if q.ID != e.ID {
			continue
		}
		if q.Type == EventProgress && q.Job == e.Job {
			m := *q
			m.Progress = e.Progress
			m.Positions = append(append([]json.RawMessage(nil), q.Positions...), e.Positions...)
			o.queue[i] = &m
			return true
		}
		break // keep the order around the request's other events
	}
	o.queue = append(o.queue, e)
	o.wake()
	return true
}
