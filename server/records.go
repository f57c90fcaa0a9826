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
// its game.Records' Formats), taking what /v1/records/parse answers as it
// is: a shogi game as KIF (kifu.ExportKIF), a chess
// game as PGN, an othello game as a transcript. The pages download analysed
// games with it, so that one writer of each format serves both the API and
// the browser.

// exportRequest is the body of POST /v1/records/export: a game.RecordGame
// (what /v1/records/parse answers, as it is) from a position in its game's
// field ("sfen", "fen", "othello": at most one; none is the default
// game's start) or in parse's "position", and the format ("kif", "pgn",
// "transcript", or any other format of the game, as parse answers it: it
// chooses the game when no field does; the record is written in the
// game's own format, the first of its Formats). What parse answers beside
// the game is checked against it, not written: "position"'s moves must be
// the main line of "plies" (or, with no plies, are the game), "final_*"
// must be the position the main line reaches, a ply's notation (san, kif)
// must name its move (record_mismatch otherwise); a ply's "line" is read
// and dropped.
type exportRequest struct {
	game.RecordGame
	Format string
	// name is the game whose field the request has; also a second one's.
	name, also string
	// position is parse's "position", if the request has one; finalOf is
	// the game of its final_<field>.
	position *exportPosition
	finalOf  string
}

// exportPosition is a position in the API's JSON shape.
type exportPosition struct {
	name, start, variant string
	moves                []string
	hasMoves             bool
}

// readPosition reads {"<field>": text, "moves": [...], "variant": ...}.
func readPosition(raw json.RawMessage) (*exportPosition, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("position: %s", session.JSONError(err))
	}
	p := &exportPosition{}
	for k, v := range m {
		var err error
		switch g := gameOfField(k); {
		case g != nil:
			if p.name != "" {
				return nil, fmt.Errorf("position: the position of one game (%s), not two", k)
			}
			p.name = g.Name()
			err = json.Unmarshal(v, &p.start)
		case strings.EqualFold(k, "moves"):
			p.hasMoves = true
			err = json.Unmarshal(v, &p.moves)
		case strings.EqualFold(k, "variant"):
			err = json.Unmarshal(v, &p.variant)
		default:
			return nil, fmt.Errorf("position: unknown field %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("position.%s: %s", k, session.JSONError(err))
		}
	}
	return p, nil
}

// UnmarshalJSON reads the games' fields as session.Position does (keys
// case-insensitive, an empty text names no game), parse's "position" and
// "final_<field>", and the rest strictly, as the request's other bodies
// are read.
func (q *exportRequest) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*q = exportRequest{}
	rest := make(map[string]json.RawMessage, len(m))
	final := ""
	for k, v := range m {
		if strings.EqualFold(k, "position") {
			p, err := readPosition(v)
			if err != nil {
				return err
			}
			q.position = p
			continue
		}
		if f, ok := cutPrefixFold(k, "final_"); ok {
			if g := gameOfField(f); g != nil {
				if err := json.Unmarshal(v, &final); err != nil {
					return fmt.Errorf("%s: %s", k, session.JSONError(err))
				}
				q.finalOf = g.Name()
				continue
			}
		}
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
	q.Start, q.Final = start, final
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// reconcile takes the game, start and variant of parse's "position" and
// "final_<field>" where the request's fields do not say them, and refuses
// them where they say otherwise.
func (q *exportRequest) reconcile() *session.Error {
	invalid := func(format string, args ...any) *session.Error {
		return &session.Error{Code: session.CodeInvalidField, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	if p := q.position; p != nil {
		switch {
		case p.name == "":
		case q.name == "":
			q.name, q.Start = p.name, p.start
		case q.name != p.name:
			return invalid("position holds a %s position, the request's field a %s one", p.name, q.name)
		case q.Start != p.start:
			return invalid("position.%s and %s differ: give the start once", game.Named(p.name).Field(), game.Named(q.name).Field())
		}
		switch {
		case p.variant == "":
		case q.Variant == "":
			q.Variant = p.variant
		case !strings.EqualFold(q.Variant, p.variant):
			return invalid("variant %q and position.variant %q differ", q.Variant, p.variant)
		}
	}
	if q.finalOf != "" {
		switch {
		case q.name == "":
			q.name = q.finalOf
		case q.name != q.finalOf:
			return invalid("final_%s is a %s position; the game is %s", game.Named(q.finalOf).Field(), q.finalOf, q.name)
		}
	}
	return nil
}

// mainLine makes the plies of "position"'s moves when the request has no
// plies, and refuses moves that are not the plies' main line.
func (q *exportRequest) mainLine() *game.RecordError {
	p := q.position
	if p == nil || !p.hasMoves {
		return nil
	}
	if len(q.Plies) == 0 {
		for _, m := range p.moves {
			q.Plies = append(q.Plies, game.RecordPly{Move: m})
		}
		return nil
	}
	for i, m := range p.moves {
		if i >= len(q.Plies) || q.Plies[i].Move != m {
			return game.Mismatch(min(i, len(q.Plies)), "position.moves[%d]: %s, but the main line of plies has %s", i, m, plyMove(q.Plies, i))
		}
	}
	if len(q.Plies) > len(p.moves) {
		return game.Mismatch(len(p.moves), "position.moves has %d moves, the main line of plies %d", len(p.moves), len(q.Plies))
	}
	return nil
}

func plyMove(plies []game.RecordPly, i int) string {
	if i < len(plies) {
		return plies[i].Move
	}
	return "no move"
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
	if err := q.reconcile(); err != nil {
		return nil, err
	}
	var byFormat game.Game
	if q.Format != "" {
		byFormat, _ = game.RecordsFor(q.Format)
		if byFormat == nil {
			var want []string
			for _, g := range game.All() {
				if rs, ok := g.(game.Records); ok {
					want = append(want, fmt.Sprintf("%s (%s)", strings.Join(rs.Formats(), ", "), g.Name()))
				}
			}
			return invalid("format: one of %s; absent: the game's own", strings.Join(want, "; "))
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
	if rerr := req.mainLine(); rerr != nil {
		s.problem(w, r, recordProblem(rerr))
		return
	}
	resp, rerr := rs.Export(&req.RecordGame, s.cfg.Service.Caps.MaxMoves)
	if rerr != nil {
		s.problemAt(w, r, recordProblem(rerr), rerr.Line)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
