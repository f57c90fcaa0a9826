package server

import (
	"net/http"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/session"
)

// chessValidateResponse is chess's verdict plus the SAN of the moves played.
type chessValidateResponse struct {
	chess.Verdict
	MovesSAN []string `json:"moves_san,omitempty"`
}

// validateChess answers /v1/validate for a chess position (a FEN).
func (s *Server) validateChess(w http.ResponseWriter, r *http.Request, p *session.Position, notation string) {
	if notation != "" && notation != "san" {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: `notation: the notation of chess moves is "san"`, MoveIndex: -1})
		return
	}
	if p.SFEN != "" {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "position: give sfen (shogi) or fen (chess), not both", MoveIndex: -1})
		return
	}
	if max := s.cfg.Service.Caps.MaxMoves; len(p.Moves) > max {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "position.moves: more than the allowed moves", MoveIndex: -1})
		return
	}
	variant, verr := p.ChessVariant()
	if verr != nil {
		s.problem(w, r, verr)
		return
	}
	resp := chessValidateResponse{Verdict: chess.Inspect(p.FEN, p.Moves, variant)}
	if notation == "san" {
		resp.MovesSAN = []string{}
		if start, errs := chess.Load(p.FEN, nil, variant); errs == nil {
			for _, m := range p.Moves {
				mv, err := start.CheckMove(m)
				if err != nil {
					break
				}
				resp.MovesSAN = append(resp.MovesSAN, start.SAN(mv))
				start.Play(mv)
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
