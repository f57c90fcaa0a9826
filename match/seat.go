package match

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/usid/usid/session"
)

// seat is one player's engine for the games a worker plays: a session of
// usid's (session.Session) that searches for the match's owner, so that
// every move is checked, planned, charged to the owner's engine time and
// waits its turn in the fair queue as any search of the owner's does. Its
// options and level are set once; usinewgame starts each game. A seat
// belongs to one worker goroutine.
type seat struct {
	sess   *session.Session
	engine string
	seq    int
	flag   *time.Timer // stops the search under way when its player's time is out
}

// reply is an engine's answer to one move's search.
type reply struct {
	move string
	// score is the last live score from the mover's side in centipawns
	// (a mate as ±mateScore); ok false when the engine gave none.
	score  int
	scored bool
	// line is the engine's last line (multipv 1) with a score, as the
	// watch page shows the mover's evaluation; nil when it gave none.
	line    *Line
	elapsed time.Duration // the search's time with an engine (not its wait for one)
}

const mateScore = 100000

// openSeat starts p's session for who and sets p's options and level.
func openSeat(ctx context.Context, svc *session.Service, who session.Caller, p Player) (*seat, *Error) {
	s := &seat{sess: svc.NewSession(), engine: p.Engine}
	s.sess.SetCaller(who)
	names := make([]string, 0, len(p.Options))
	for k := range p.Options {
		names = append(names, k)
	}
	slices.Sort(names) // the same order every time: a match is repeatable
	set := func(name, value string) *Error {
		_, err := s.do(ctx, &session.Request{Type: session.TypeSetOption, Engine: p.Engine, Name: name, Value: value})
		return err
	}
	for _, k := range names {
		if err := set(k, p.Options[k]); err != nil {
			s.close()
			return nil, err
		}
	}
	if l := p.Level; l != nil && l.Option != "" {
		if err := set(l.Option, l.Value); err != nil {
			s.close()
			return nil, err
		}
	}
	if l := p.Level; l != nil {
		// A named level's options in play's order (UCI_Elo before
		// UCI_LimitStrength: the rating is in place when the limit is on).
		for _, k := range slices.Sorted(maps.Keys(l.Options)) {
			if err := set(k, l.Options[k]); err != nil {
				s.close()
				return nil, err
			}
		}
	}
	return s, nil
}

// newGame tells the engine a game starts (usinewgame, ucinewgame).
func (s *seat) newGame(ctx context.Context) *Error {
	_, err := s.do(ctx, &session.Request{Type: session.TypeNewGame, Engine: s.engine})
	return err
}

// search runs one move's search (r: an analyze with limits or a go with
// clocks) to its terminal event; a search past flag (0: none; counted as
// the move's time is) is stopped, so that a player whose clock ran out
// is not waited for.
func (s *seat) search(ctx context.Context, r *session.Request, flag time.Duration) (*reply, *Error) {
	r.Engine = s.engine
	return s.serve(ctx, r, flag)
}

// do serves a request other than a search (setoption, newgame).
func (s *seat) do(ctx context.Context, r *session.Request) (*reply, *Error) {
	return s.serve(ctx, r, 0)
}

// serve serves r and waits for its terminal event: bestmove (a reply), an
// option set or a control done (nil, nil), or an error.
func (s *seat) serve(ctx context.Context, r *session.Request, flag time.Duration) (*reply, *Error) {
	s.seq++
	r.ID = "m" + strconv.Itoa(s.seq)
	began := time.Now()
	rep := &reply{}
	if flag > 0 {
		id := r.ID
		stop := time.AfterFunc(flag, func() { s.sess.Serve(&session.Request{Type: session.TypeStop, ID: id}) })
		defer stop.Stop()
		s.flag = stop
	}
	s.sess.Serve(r)
	for {
		evs, err := s.sess.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &Error{Code: session.CodeCancelled, Message: "the match was cancelled", MoveIndex: -1}
			}
			return nil, &Error{Code: session.CodeEngineError, Message: "the engine's session ended: " + err.Error(), MoveIndex: -1}
		}
		for _, ev := range evs {
			if ev.ID != r.ID {
				continue
			}
			switch ev.Type {
			case session.EventEngine:
				began = time.Now() // the clock runs once the search has a process
				if flag > 0 {
					s.flag.Reset(flag)
				}
			case session.EventInfo:
				if ev.Score != nil && ev.MultiPV <= 1 {
					rep.line = lineOf(ev)
					if !ev.Cached {
						rep.score, rep.scored = scoreOf(ev.Score), true
					}
				}
			case session.EventBestMove:
				rep.move, rep.elapsed = ev.Move, time.Since(began)
				return rep, nil
			case session.EventCheckmate:
				return nil, &Error{Code: session.CodeEngineError, Message: "the engine answered a move's search with checkmate", MoveIndex: -1}
			case session.EventOption, session.EventReady:
				return nil, nil
			case session.EventError:
				return nil, &Error{Code: ev.Code, Message: ev.Message, MoveIndex: -1}
			}
		}
	}
}

// scoreOf is a score in centipawns from the side to move, a mate as
// ±mateScore.
func scoreOf(sc *session.Score) int {
	switch {
	case sc.Mate != nil && (*sc.Mate > 0 || (*sc.Mate == 0 && sc.MateSign == "+")):
		return mateScore
	case sc.Mate != nil:
		return -mateScore
	case sc.CP != nil:
		return *sc.CP
	}
	return 0
}

// close ends the session: a running search is stopped, the engine goes
// back to the pool.
func (s *seat) close() { s.sess.Close() }
