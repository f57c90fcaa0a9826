package server

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/usid/usid/review"
)

// Whole-game analysis (package review): POST starts a background job and
// answers 202 with its id; GET reads it as it stands; DELETE cancels it.
// A job belongs to the client identity that started it (an API key, or an
// anonymous client's address): to any other its id is not_found.

// admitWork decodes into req the request of a handler that starts work
// for its client (a game analysis, a broadcast) and admits it: refused
// while draining, charged once to the client's search rate, refused while
// its engine-time budget is spent. It returns the client, or nil when it
// has answered with the refusal.
func (s *Server) admitWork(w http.ResponseWriter, r *http.Request, req any) *client {
	if err := s.decode(w, r, req); err != nil {
		s.problem(w, r, err)
		return nil
	}
	if s.refuseWhileDraining(w, r) {
		return nil
	}
	c := clientOf(r)
	if err := s.gate.allow(r.Context(), c); err != nil {
		s.problem(w, r, err)
		return nil
	}
	return c
}

func (s *Server) startGameAnalysis(w http.ResponseWriter, r *http.Request) {
	var req review.Request
	// A job is charged to the client's search rate once; it holds no lease
	// slot (it runs in the background, bounded per client by games).
	c := s.admitWork(w, r, &req)
	if c == nil {
		return
	}
	v, err := s.cfg.Review.Start(s.gate.caller(c), &req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/games/analysis/"+v.ID)
	writeJSON(w, http.StatusAccepted, v)
}

// getGameAnalysis answers with the job's encoding, made once per change
// of the job (review.Manager.GetEncoded), and 304 to an If-None-Match of
// its ETag: polling an unchanged job costs next to nothing (issue 35).
// A 304 counts as a read of a followed job all the same.
func (s *Server) getGameAnalysis(w http.ResponseWriter, r *http.Request) {
	e, err := s.cfg.Review.GetEncoded(clientOf(r).id, chi.URLParam(r, "id"))
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
	v, err := s.cfg.Review.Cancel(ctx, clientOf(r).id, chi.URLParam(r, "id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
