package server

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/usid/usid/games"
)

// Whole-game analysis (package games): POST starts a background job and
// answers 202 with its id; GET reads it as it stands; DELETE cancels it.
// A job belongs to the client identity that started it (an API key, or an
// anonymous client's address): to any other its id is not_found.

func (s *Server) startGameAnalysis(w http.ResponseWriter, r *http.Request) {
	var req games.Request
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	if s.refuseWhileDraining(w, r) {
		return
	}
	c := clientOf(r)
	// A job is charged to the client's search rate once; it holds no lease
	// slot (it runs in the background, bounded per client by games).
	if err := s.gate.allow(r.Context(), c); err != nil {
		s.problem(w, r, err)
		return
	}
	v, err := s.cfg.Games.Start(s.gate.caller(c), &req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/games/analysis/"+v.ID)
	writeJSON(w, http.StatusAccepted, v)
}

// getGameAnalysis answers with the job's encoding, made once per change
// of the job (games.Manager.GetEncoded), and 304 to an If-None-Match of
// its ETag: polling an unchanged job costs next to nothing (issue 35).
// A 304 counts as a read of a followed job all the same.
func (s *Server) getGameAnalysis(w http.ResponseWriter, r *http.Request) {
	e, err := s.cfg.Games.GetEncoded(clientOf(r).id, chi.URLParam(r, "id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeTagged(w, r, e.JSON, e.ETag)
}

// cancelWait bounds how long DELETE waits for a job's searches to stop.
const cancelWait = 10 * time.Second

func (s *Server) cancelGameAnalysis(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	v, err := s.cfg.Games.Cancel(ctx, clientOf(r).id, chi.URLParam(r, "id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
