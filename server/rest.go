package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/session"
	"github.com/usid/usid/usi"
)

// engineJSON is one engine in GET /v1/engines.
type engineJSON struct {
	Name          string                     `json:"name"`
	ID            idJSON                     `json:"id"`
	Options       []optionJSON               `json:"options"`
	ClientOptions map[string]pool.OptionRule `json:"client_options"`
	// Levels are the strengths play_start's play.level.id names, weakest
	// first (pool.Levels); [] for an engine without a strength option.
	Levels       []pool.Level     `json:"levels"`
	Capabilities capabilitiesJSON `json:"capabilities"` // derived from the profile
	Profile      *probe.Profile   `json:"profile"`      // null while the engine is being probed
	Error        string           `json:"error,omitempty"`
	Instances    int              `json:"instances"`
	Idle         int              `json:"idle"`
	Busy         int              `json:"busy"`
	Starting     int              `json:"starting"`
	Queue        int              `json:"queue"`
	Available    bool             `json:"available"`
	RetryAfterS  int              `json:"retry_after_s,omitempty"`
}

type idJSON struct {
	Name   string `json:"name"`
	Author string `json:"author"`
}

type optionJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default string   `json:"default"`
	Min     *int64   `json:"min,omitempty"`
	Max     *int64   `json:"max,omitempty"`
	Vars    []string `json:"vars,omitempty"`
}

type capabilitiesJSON struct {
	Go        []string `json:"go"`
	Checkmate bool     `json:"checkmate"`
}

func (s *Server) engines(w http.ResponseWriter, r *http.Request) {
	out := []engineJSON{}
	for _, st := range s.cfg.Pool.Status() {
		e := engineJSON{
			Name: st.Name, ID: idJSON{st.ID.Name, st.ID.Author}, Options: []optionJSON{},
			ClientOptions: st.ClientOptions, Levels: st.Levels, Capabilities: capabilitiesJSON{Go: []string{}}, Profile: st.Profile, Error: st.LastError,
			Instances: st.Instances, Idle: st.Idle, Busy: st.Busy + st.Resetting, Starting: st.Starting, Queue: st.Queue,
			Available: st.Available, RetryAfterS: int(st.RetryAfter.Round(time.Second).Seconds()),
		}
		if st.Profile != nil {
			e.Capabilities = capabilitiesJSON{st.Profile.NativeParams(), st.Profile.Checkmate}
		}
		if e.ClientOptions == nil {
			e.ClientOptions = map[string]pool.OptionRule{}
		}
		if e.Levels == nil {
			e.Levels = []pool.Level{}
		}
		for _, o := range st.Options {
			e.Options = append(e.Options, optionOf(o))
		}
		out = append(out, e)
	}
	body, etag := encodeTagged(map[string]any{"engines": out})
	writeTagged(w, r, body, etag)
}

func optionOf(o usi.Option) optionJSON {
	j := optionJSON{Name: o.Name, Type: string(o.Type), Default: o.Default, Vars: o.Vars}
	if o.HasMin {
		j.Min = &o.Min
	}
	if o.HasMax {
		j.Max = &o.Max
	}
	return j
}

// validateRequest is the body of POST /v1/validate.
type validateRequest struct {
	Position *session.Position `json:"position"`
	Notation string            `json:"notation"`
}

func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	var req validateRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	p := req.Position
	if p == nil {
		p = &session.Position{}
	}
	g, variant, gerr := p.CheckGame()
	if gerr != nil {
		s.problem(w, r, gerr) // two games' fields, an unknown variant: the request, not the position, is wrong
		return
	}
	if req.Notation != "" && req.Notation != g.Notation() {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: fmt.Sprintf("notation: the notation of %s moves is %q", g.Name(), g.Notation()), MoveIndex: -1})
		return
	}
	if max := s.cfg.Service.Caps.MaxMoves; len(p.Moves) > max {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "position.moves: more than the allowed moves", MoveIndex: -1})
		return
	}
	start := p.Start
	if start == "" {
		start = "startpos"
	}
	writeJSON(w, http.StatusOK, g.Inspect(start, variant, p.Moves, req.Notation != ""))
}

// analyzeRequest is the body of POST /v1/analyze.
type analyzeRequest struct {
	Position *session.Position `json:"position"`
	Engine   string            `json:"engine"`
	Limits   *session.Limits   `json:"limits"`
	MultiPV  int               `json:"multipv"`
	Notation string            `json:"notation"`
}

func (b *analyzeRequest) request() *session.Request {
	return &session.Request{Position: b.Position, Engine: b.Engine, Limits: b.Limits, MultiPV: b.MultiPV, Notation: b.Notation}
}

// mateRequest is the body of POST /v1/mate.
type mateRequest struct {
	Position  *session.Position `json:"position"`
	Engine    string            `json:"engine"`
	TimeoutMS int64             `json:"timeout_ms"`
	Notation  string            `json:"notation"`
	MateIn    *int              `json:"mate_in"` // chess: go mate <n>
}

func (b *mateRequest) request() *session.Request {
	return &session.Request{Position: b.Position, Engine: b.Engine, TimeoutMS: b.TimeoutMS, Notation: b.Notation, MateIn: b.MateIn}
}

// searchRoute serves a REST search (analyze, mate): the body is read first,
// so that a client pays its rate and holds a lease slot only for a request
// it has sent in full; then the client's quota; then the search, under a
// context that a drain running out of grace cuts.
func searchRoute[B any, R any](s *Server, request func(*B) *session.Request, run func(context.Context, *session.Request) (R, *session.Error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body B
		if err := s.decode(w, r, &body); err != nil {
			s.problem(w, r, err)
			return
		}
		done := s.admit(w, r)
		if done == nil {
			return
		}
		defer done()
		ctx, end := s.searchContext(r)
		defer end()
		ctx, timing := session.WithTiming(ctx)
		res, err := run(ctx, request(&body))
		// Where the time went (W3C Server-Timing): the wait for an engine,
		// and the engine's search. Absent parts (a cached answer) are 0.
		w.Header().Set("Server-Timing", fmt.Sprintf("queue;dur=%.1f, search;dur=%.1f",
			float64(timing.Queue.Microseconds())/1000, float64(timing.Search.Microseconds())/1000))
		if cut := s.wasCut(r); cut != nil {
			err = cut
		}
		if err != nil {
			s.problem(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// searchContext is r's context, ended too when a drain runs out of grace
// (Server.cut); the returned func releases it.
func (s *Server) searchContext(r *http.Request) (context.Context, func()) {
	ctx, cancel := context.WithCancel(session.WithCaller(r.Context(), s.gate.caller(clientOf(r))))
	stop := context.AfterFunc(s.cut, cancel)
	return ctx, func() { stop(); cancel() }
}

// wasCut is the answer for a search the drain stopped before its limit: it
// honoured no limit, so it is refused rather than passed off as an answer.
func (s *Server) wasCut(r *http.Request) *session.Error {
	if s.cut.Err() == nil || r.Context().Err() != nil {
		return nil
	}
	return &session.Error{Code: session.CodeShuttingDown, Message: "the server is shutting down: the search was stopped before its limit; retry", MoveIndex: -1}
}

// admit applies the client's rate and lease quota to a REST search; the
// returned func, if not nil, must be called when the search is over.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) func() {
	if s.refuseWhileDraining(w, r) {
		return nil
	}
	c := clientOf(r)
	if err := s.gate.allow(r.Context(), c); err != nil {
		s.problem(w, r, err)
		return nil
	}
	done, err := s.gate.takeLease(c)
	if err != nil {
		s.problem(w, r, err)
		return nil
	}
	return done
}

func (s *Server) refuseWhileDraining(w http.ResponseWriter, r *http.Request) bool {
	if s.draining.Load() {
		s.problem(w, r, &session.Error{Code: session.CodeShuttingDown, Message: "the server is shutting down", MoveIndex: -1})
		return true
	}
	return false
}
