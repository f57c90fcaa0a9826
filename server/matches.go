package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/usid/usid/match"
	"github.com/usid/usid/session"
)

// Engine matches (package match): POST starts a match and answers 201
// with its id; GET reads it as it stands (anyone with its id: a match is
// watchable; tagged, so that polling an unchanged match is a 304); DELETE
// cancels it (its owner only: to any other client its id is not_found)
// and answers it as it ended.

func (s *Server) matchRoutes(r chi.Router) {
	r.Post("/matches", s.startMatch)
	r.With(s.readGuard).Get("/matches/{id}", s.getMatch)
	r.With(s.readGuard).Get("/matches/{id}/games/{n}", s.getMatchGame)
	r.Delete("/matches/{id}", s.cancelMatch)
}

func (s *Server) startMatch(w http.ResponseWriter, r *http.Request) {
	var req match.Request
	// Charged to the client's search rate once; its searches are charged
	// to the client's engine time as they run.
	c := s.admitWork(w, r, &req)
	if c == nil {
		return
	}
	id, err := s.cfg.Matches.Start(s.gate.caller(c), &req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/matches/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func errNoMatch(id string) *session.Error {
	return &session.Error{Code: codeNotFound, Message: "no match " + clipText(id), MoveIndex: -1}
}

func (s *Server) getMatch(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	mt, err := s.cfg.Matches.Lookup(id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if mt == nil {
		s.problem(w, r, errNoMatch(id))
		return
	}
	body, tag := mt.Encoded()
	writeTagged(w, r, body, tag)
}

// getMatchGame answers one game of a match with the players' own lines,
// as its watch page follows it (polling, tagged: the game changes once a
// move, and an unchanged one is 304).
func (s *Server) getMatchGame(w http.ResponseWriter, r *http.Request) {
	id, arg := chi.URLParam(r, "id"), chi.URLParam(r, "n")
	mt, lerr := s.cfg.Matches.Lookup(id)
	if lerr != nil {
		s.problem(w, r, lerr)
		return
	}
	if mt == nil {
		s.problem(w, r, errNoMatch(id))
		return
	}
	n, err := strconv.Atoi(arg)
	var g *match.GameView
	if err == nil && len(arg) <= 6 {
		g = mt.Game(n)
	}
	if g == nil {
		s.problem(w, r, &session.Error{Code: codeNotFound, Message: "match " + clipText(id) + " has no game " + clipText(arg) + " (not started, or not kept)", MoveIndex: -1})
		return
	}
	body, etag := encodeTagged(g)
	writeTagged(w, r, body, etag)
}

func (s *Server) cancelMatch(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	found, err := s.cfg.Matches.Cancel(id, s.gate.caller(clientOf(r)))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if !found {
		s.problem(w, r, errNoMatch(id))
		return
	}
	mt, err := s.cfg.Matches.Lookup(id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if mt == nil { // ended and forgotten meanwhile
		s.problem(w, r, errNoMatch(id))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	_ = mt.Wait(ctx) // its engines stop; answered as it stands if they take longer
	writeJSON(w, http.StatusOK, mt.View())
}

// clipText bounds a client's text echoed in an error.
func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
