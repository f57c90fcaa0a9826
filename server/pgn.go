package server

import (
	"bytes"
	"net/http"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/chess/pgn"
	"github.com/usid/usid/kifu"
	"github.com/usid/usid/session"
)

// pgnResponse is a chess game read from PGN: its first game's start and
// main line (a chess position for /v1/analyze), the tags, and the plies in
// SAN. The shape is the record's, with fen fields where shogi has sfen.
type pgnResponse struct {
	Format   string           `json:"format"` // "pgn"
	Position session.Position `json:"position"`
	FinalFEN string           `json:"final_fen"`
	End      string           `json:"end,omitempty"` // the result: 1-0, 0-1, 1/2-1/2
	Header   recordHeader     `json:"header"`
	Comment  string           `json:"comment,omitempty"`
	Plies    []pgnPly         `json:"plies"`
}

type pgnPly struct {
	Move    string `json:"move"`
	SAN     string `json:"san"`
	Comment string `json:"comment,omitempty"`
}

// looksLikePGN: a PGN text starts with a tag pair or a move number, which
// none of the shogi formats does.
func looksLikePGN(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	return bytes.HasPrefix(b, []byte("[")) || bytes.HasPrefix(b, []byte("1."))
}

// parsePGN answers /v1/records/parse for a PGN text (package chess/pgn:
// every move checked by the rules of chess).
func (s *Server) parsePGN(w http.ResponseWriter, r *http.Request, data []byte) {
	games, err := pgn.Parse(string(data))
	if err != nil {
		if pe, ok := err.(*pgn.Error); ok {
			s.problemAt(w, r, &session.Error{Code: string(pe.Code), Message: pe.Message, MoveIndex: pe.MoveIndex}, pe.Line)
			return
		}
		s.problem(w, r, &session.Error{Code: string(pgn.CodeSyntax), Message: err.Error(), MoveIndex: -1})
		return
	}
	g := games[0]
	if max := s.cfg.Service.Caps.MaxMoves; len(g.Moves) > max {
		s.problem(w, r, &session.Error{Code: "record_too_long", Message: "the game has more moves than caps.max_moves", MoveIndex: -1})
		return
	}
	if v, _ := g.Variant(); v != chess.Standard {
		s.problem(w, r, &session.Error{Code: session.CodeUnsupported, Message: "Chess960 games are not served yet", MoveIndex: -1})
		return
	}
	start, errs := g.Start()
	if errs != nil {
		s.problem(w, r, &session.Error{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1})
		return
	}
	resp := pgnResponse{Format: "pgn", Position: session.Position{FEN: start.FEN(), Moves: []string{}}, Comment: g.Comment, Plies: []pgnPly{},
		Header: recordHeader{White: g.Tag("White"), Black: g.Tag("Black"), Event: g.Tag("Event"), Date: g.Tag("Date"), Fields: []kifu.Field{}}}
	if g.Result != "*" {
		resp.End = g.Result
	}
	for _, tg := range g.Tags {
		resp.Header.Fields = append(resp.Header.Fields, kifu.Field{Key: tg.Name, Value: tg.Value})
	}
	pos := *start
	for _, p := range g.Moves {
		resp.Position.Moves = append(resp.Position.Moves, p.Move.String())
		resp.Plies = append(resp.Plies, pgnPly{Move: p.Move.String(), SAN: p.SAN, Comment: p.Comment})
		pos.Play(p.Move)
	}
	resp.FinalFEN = pos.FEN()
	writeJSON(w, http.StatusOK, resp)
}
