package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/usid/usid/game"
	"github.com/usid/usid/session"
)

// POST /v1/records/parse reads a game record, and POST /v1/records/export
// writes one, through the game's game.Records: shogi's KIF, KI2, CSA, USI
// and SFEN, chess's PGN, othello's transcript.
//
// /v1/records/parse is a route of its own rather than a field of
// /v1/validate: validate answers an illegal position with 200 and
// valid:false, while a record that cannot be read is an error whose line
// matters (problem+json with line), and a record's answer (format, header,
// comments, times, variations) has nothing in common with a verdict's.

// flood takes one request from the client's rate (access: rate, burst),
// as a search does: reading and writing records costs CPU without an
// engine, so a flood of them is refused with 429 before its body is read.
func (s *Server) flood(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !clientOf(r).limiter.Allow() {
			s.problem(w, r, &session.Error{Code: session.CodeTooManyRequests, Message: "requests arrive faster than this client's rate allows", MoveIndex: -1})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// recordRequest is the body of POST /v1/records/parse: the record's text,
// or its bytes in base64 (a Shift_JIS file as read from disk).
type recordRequest struct {
	Record       *string `json:"record"`
	RecordBase64 *string `json:"record_base64"`
	Format       string  `json:"format"`
}

// parseRecord reads the record with the game whose format it names, or
// the game that claims its text (game.RecordsOf: a PGN text is chess's, a
// transcript othello's, anything else shogi's).
func (s *Server) parseRecord(w http.ResponseWriter, r *http.Request) {
	var req recordRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	var records game.Records
	if req.Format != "" {
		if _, records = game.RecordsFor(req.Format); records == nil {
			s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "format: one of " + strings.Join(recordFormats(), ", ") + " (or absent: detected)", MoveIndex: -1})
			return
		}
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
	if records == nil {
		if _, records = game.RecordsOf(string(data)); records == nil {
			s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "no game reads records", MoveIndex: -1})
			return
		}
	}
	resp, err := records.Parse(data, req.Format, s.cfg.Service.Caps.MaxMoves)
	if err != nil {
		s.problemAt(w, r, recordProblem(err), err.Line)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func recordProblem(e *game.RecordError) *session.Error {
	return &session.Error{Code: e.Code, Message: e.Message, MoveIndex: e.MoveIndex}
}

// recordFormats are the formats the games read.
func recordFormats() []string {
	var out []string
	for _, g := range game.All() {
		if rs, ok := g.(game.Records); ok {
			out = append(out, rs.Formats()...)
		}
	}
	return out
}

// POST /v1/records/export writes a game as its game's record (the first of
// its game.Records' Formats): a shogi game as KIF (kifu.ExportKIF), a chess
// game as PGN, an othello game as a transcript. The pages download analysed
// games with it, so that one writer of each format serves both the API and
// the browser.

// exportRequest is the body of POST /v1/records/export: a game.RecordGame
// (header and plies take what /v1/records/parse answers, minus each ply's
// kif and line) from a position in its game's field ("sfen", "fen",
// "othello": at most one; none is the default game's start), and the
// format to write ("kif", "pgn", "transcript": the game's own; it chooses
// the game when no field does).
type exportRequest struct {
	game.RecordGame
	Format string
	// name is the game whose field the request has; also a second one's.
	name, also string
}

// UnmarshalJSON reads the games' fields as session.Position does (keys
// case-insensitive, an empty text names no game) and the rest strictly,
// as the request's other bodies are read.
func (q *exportRequest) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*q = exportRequest{}
	rest := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		g := gameOfField(k)
		if g == nil {
			rest[k] = v
			continue
		}
		var text string
		if err := json.Unmarshal(v, &text); err != nil {
			return fmt.Errorf("%s: %s", k, session.JSONError(err))
		}
		switch {
		case text == "":
		case q.name != "":
			q.also = g.Name()
		default:
			q.name, q.Start = g.Name(), text
		}
	}
	var body struct {
		game.RecordGame
		Format string `json:"format"`
	}
	raw, _ := json.Marshal(rest)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return err
	}
	start := q.Start
	q.RecordGame, q.Format = body.RecordGame, body.Format
	q.Start = start
	return nil
}

func gameOfField(k string) game.Game {
	for _, g := range game.All() {
		if strings.EqualFold(g.Field(), k) {
			return g
		}
	}
	return nil
}

// fieldName names a game by its field for a message: "fen (chess)".
func fieldName(g game.Game) string { return g.Field() + " (" + g.Name() + ")" }

// records is the Records of the request's game (the game of its field,
// else of its format, else the default game), its variant normalized.
func (q *exportRequest) records() (game.Records, *session.Error) {
	invalid := func(format string, args ...any) (game.Records, *session.Error) {
		return nil, &session.Error{Code: session.CodeInvalidField, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	var byFormat game.Game
	if q.Format != "" {
		for _, g := range game.All() {
			if rs, ok := g.(game.Records); ok && rs.Formats()[0] == q.Format {
				byFormat = g
			}
		}
		if byFormat == nil {
			var want []string
			for _, g := range game.All() {
				if rs, ok := g.(game.Records); ok {
					want = append(want, fmt.Sprintf("%q (%s)", rs.Formats()[0], g.Name()))
				}
			}
			return invalid("format: one of %s; absent: the game's own", strings.Join(want, ", "))
		}
	}
	g := game.Default()
	switch {
	case q.also != "":
		return invalid("give the position of one game (%s or %s), not both", fieldName(game.Named(q.name)), fieldName(game.Named(q.also)))
	case q.name != "":
		g = game.Named(q.name)
		if byFormat != nil && byFormat != g {
			return invalid("format: %s is for %s games, not for a %s game (%s)", q.Format, byFormat.Name(), g.Name(), g.Field())
		}
	case byFormat != nil:
		g = byFormat
	}
	rs, ok := g.(game.Records)
	if !ok {
		return invalid("%s games have no record format", g.Name())
	}
	v, verr := g.Variant(q.Variant)
	if verr != nil {
		return nil, &session.Error{Code: string(verr.Code), Message: verr.Message, MoveIndex: -1}
	}
	q.Variant = v
	return rs, nil
}

func (s *Server) exportRecord(w http.ResponseWriter, r *http.Request) {
	var req exportRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	rs, err := req.records()
	if err != nil {
		s.problem(w, r, err)
		return
	}
	resp, rerr := rs.Export(&req.RecordGame, s.cfg.Service.Caps.MaxMoves)
	if rerr != nil {
		s.problemAt(w, r, recordProblem(rerr), rerr.Line)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
