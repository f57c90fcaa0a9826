package server

import "net/http"

// playGames answers GET /v1/play/games: the caller's games against the
// engine in progress (play_* over the WebSocket), so that a page can show
// the games of its closed tabs, which hold the client's slots, and resume
// or resign them.
func (s *Server) playGames(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.Play.Playing(r.Context(), clientOf(r).id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"games": list})
}
