package server

import (
	"encoding/base64"
	"net/http"

	"github.com/usid/usid/kifu"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

// POST /v1/records/parse reads a game record (KIF, KI2, CSA, USI, SFEN).
// It is a route of its own rather than a field of /v1/validate: validate
// answers an illegal position with 200 and valid:false, while a record that
// cannot be read is an error whose line matters (problem+json with line),
// and a record's answer (format, header, comments, times, variations) has
// nothing in common with a verdict's.

// recordRequest is the body of POST /v1/records/parse: the record's text,
// or its bytes in base64 (a Shift_JIS file as read from disk).
type recordRequest struct {
	Record       *string `json:"record"`
	RecordBase64 *string `json:"record_base64"`
	Format       string  `json:"format"`
}

// recordResponse is a parsed record.
type recordResponse struct {
	Format string `json:"format"`
	// Position is the start and the main line, ready for /v1/analyze.
	Position  session.Position `json:"position"`
	FinalSFEN string           `json:"final_sfen"`
	End       string           `json:"end,omitempty"`
	Header    recordHeader     `json:"header"`
	Comment   string           `json:"comment,omitempty"`
	Plies     []plyJSON        `json:"plies"`
}

type recordHeader struct {
	Black    string       `json:"black,omitempty"`
	White    string       `json:"white,omitempty"`
	Event    string       `json:"event,omitempty"`
	Date     string       `json:"date,omitempty"`
	Handicap string       `json:"handicap,omitempty"`
	Fields   []kifu.Field `json:"fields"`
}

// plyJSON is one move of a line with what the record says of it.
type plyJSON struct {
	Move       string      `json:"move"`
	KIF        string      `json:"kif"`
	Line       int         `json:"line"`
	Comment    string      `json:"comment,omitempty"`
	TimeMS     *int64      `json:"time_ms,omitempty"`
	Variations [][]plyJSON `json:"variations,omitempty"`
}

var recordFormats = map[string]kifu.Format{"": "", "kif": kifu.FormatKIF, "ki2": kifu.FormatKI2, "csa": kifu.FormatCSA, "usi": kifu.FormatUSI, "sfen": kifu.FormatSFEN}

func (s *Server) parseRecord(w http.ResponseWriter, r *http.Request) {
	var req recordRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	format, ok := recordFormats[req.Format]
	if !ok {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "format: one of kif, ki2, csa, usi, sfen (or absent: detected)", MoveIndex: -1})
		return
	}
	var data []byte
	switch {
	case (req.Record == nil) == (req.RecordBase64 == nil):
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "give the record as record (text) or record_base64 (bytes), one of them", MoveIndex: -1})
		return
	case req.Record != nil:
		data = []byte(*req.Record)
	default:
		b, err := base64.StdEncoding.DecodeString(*req.RecordBase64)
		if err != nil {
			s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "record_base64: not base64: " + err.Error(), MoveIndex: -1})
			return
		}
		data = b
	}
	rec, err := kifu.Parse(data, kifu.Options{Format: format, MaxMoves: s.cfg.Service.Caps.MaxMoves})
	if err != nil {
		ke := err.(*kifu.Error)
		s.problemAt(w, r, &session.Error{Code: string(ke.Code), Message: ke.Message, MoveIndex: ke.MoveIndex}, ke.Line)
		return
	}
	final, ferr := rec.Final()
	if ferr != nil {
		// Parse checked every move: this cannot happen.
		s.problem(w, r, &session.Error{Code: codeInternal, Message: ferr.Error(), MoveIndex: -1})
		return
	}
	start, _ := shogi.ParseSFEN(rec.StartSFEN)
	resp := recordResponse{
		Format:    string(rec.Format),
		Position:  session.Position{SFEN: rec.StartSFEN, Moves: rec.USIMoves()},
		FinalSFEN: final.SFEN(),
		End:       string(rec.End),
		Header:    recordHeader{Black: rec.Black, White: rec.White, Event: rec.Event, Date: rec.Date, Handicap: rec.Handicap, Fields: rec.Header},
		Comment:   rec.Comment,
		Plies:     pliesOf(*start, shogi.NoSquare, rec.Moves),
	}
	if resp.Header.Fields == nil {
		resp.Header.Fields = []kifu.Field{}
	}
	writeJSON(w, http.StatusOK, resp)
}

// pliesOf describes a line played from p (whose moves Parse checked).
func pliesOf(p shogi.Position, last shogi.Square, line []kifu.Move) []plyJSON {
	out := make([]plyJSON, 0, len(line))
	for _, m := range line {
		mv, err := p.CheckMove(m.USI)
		if err != nil {
			break
		}
		j := plyJSON{Move: m.USI, KIF: p.KIF(mv, last), Line: m.Line, Comment: m.Comment}
		if m.TimeMS >= 0 {
			t := m.TimeMS
			j.TimeMS = &t
		}
		for _, v := range m.Variations {
			j.Variations = append(j.Variations, pliesOf(p, last, v))
		}
		out = append(out, j)
		p.Play(mv)
		last = mv.To
	}
	return out
}
