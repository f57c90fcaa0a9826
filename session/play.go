package session

import "context"

// Games against the engine (play_*) are run by package play, which imports
// this package; a Session only forwards the requests, as it does for
// analyze_game. A game outlives the connection that started it for a grace
// period, so the runner, not the session, owns it.

// Play request types.
const (
	TypePlayStart   = "play_start"   // a new game: Play has side, start, clocks, level
	TypePlayMove    = "play_move"    // the human's move in game Game
	TypePlayResign  = "play_resign"  // the human resigns game Game
	TypePlayDeclare = "play_declare" // the human declares a win (入玉宣言) in game Game
	TypePlayResume  = "play_resume"  // attach this connection to game Game again (after a reload)
)

// EventPlay carries a game's state (Event.Play), after every move and at
// its end.
const EventPlay = "play"

// PlayRunner serves play_* requests for one client. Package play
// implements it; the server gives each Session the runner of its client
// (SetPlay).
type PlayRunner interface {
	// Play serves r. emit gets r's answer (an error, or the game's state)
	// and, for play_start and play_resume, every later event of the game
	// until ctx ends (the connection closed) or another connection
	// resumes the game. Play must not block on an engine; emit must not
	// block either.
	Play(ctx context.Context, r *Request, emit func(*Event))
}

// SetPlay lets the session take play_* requests; without a runner they are
// refused as unsupported. Call it before the first Handle.
func (s *Session) SetPlay(p PlayRunner) {
	s.mu.Lock()
	s.play = p
	s.mu.Unlock()
}

func (s *Session) servePlay(req *Request) {
	s.mu.Lock()
	p, draining := s.play, s.draining
	s.mu.Unlock()
	switch {
	case draining:
		s.out.push(errorEvent(req.ID, errorf(CodeShuttingDown, "the server is shutting down; reconnect to another instance")))
	case p == nil:
		s.out.push(errorEvent(req.ID, errorf(CodeUnsupported, "this server does not play games")))
	default:
		p.Play(s.ctx, req, func(ev *Event) { s.out.push(ev) })
	}
}
