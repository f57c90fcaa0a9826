package server

import (
	"encoding/base64"
	"fmt"
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
	if !ok && req.Format != "pgn" {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "format: one of kif, ki2, csa, usi, sfen, pgn (or absent: detected)", MoveIndex: -1})
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
	if req.Format == "pgn" || (req.Format == "" && looksLikePGN(data)) {
		s.parsePGN(w, r, data)
		return
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
		Position:  session.Position{Start: rec.StartSFEN, Moves: rec.USIMoves()},
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

// POST /v1/records/export writes a game as KIF (kifu.ExportKIF): the start,
// the main line with its variations, comments, consumed times and engine
// evaluations (as the "*#評価値=" comment lines ShogiHome reads). The pages
// download analysed games with it, so that one writer of KIF serves both
// the API and the browser.

// exportRequest is the body of POST /v1/records/export. Header and plies
// take what /v1/records/parse answers (minus each ply's kif and line).
type exportRequest struct {
	SFEN string `json:"sfen"`
	// FEN, or Format "pgn", makes it a chess game, written as PGN
	// (exportPGN).
	FEN     string        `json:"fen"`
	Variant string        `json:"variant"` // a chess game's: "chess960" or ""
	Format  string        `json:"format"`
	Header  *exportHeader `json:"header"`
	Comment string        `json:"comment"`
	End     string        `json:"end"`
	Plies   []exportPly   `json:"plies"`
}

type exportHeader struct {
	Black  string       `json:"black"`
	White  string       `json:"white"`
	Event  string       `json:"event"`
	Date   string       `json:"date"`
	Fields []kifu.Field `json:"fields"`
	// Handicap is accepted (parse answers it) but the start position
	// decides the 手合割 line.
	Handicap string `json:"handicap"`
}

type exportPly struct {
	Move       string        `json:"move"`
	Comment    string        `json:"comment"`
	TimeMS     *int64        `json:"time_ms"`
	Eval       *exportEval   `json:"eval"`
	Variations [][]exportPly `json:"variations"`
}

// exportEval is an evaluation of the position after the move, from
// Black's side.
type exportEval struct {
	CP     *int     `json:"cp"`
	Mate   *int     `json:"mate"`
	Depth  int      `json:"depth"`
	PV     []string `json:"pv"`
	Engine string   `json:"engine"`
}

type exportResponse struct {
	KIF string `json:"kif"`
}

var recordEnds = map[string]bool{}

func init() {
	for _, e := range []kifu.End{kifu.EndResign, kifu.EndAbort, kifu.EndRepetition, kifu.EndImpasse, kifu.EndTimeUp,
		kifu.EndIllegalWin, kifu.EndIllegalLoss, kifu.EndMate, kifu.EndNoMate, kifu.EndDeclareWin, kifu.EndDraw} {
		recordEnds[string(e)] = true
	}
}

func (s *Server) exportRecord(w http.ResponseWriter, r *http.Request) {
	var req exportRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	switch {
	case req.Format != "" && req.Format != "kif" && req.Format != "pgn":
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: `format: "kif" (shogi, the default) or "pgn" (chess)`, MoveIndex: -1})
		return
	case req.FEN != "" && req.SFEN != "":
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "give sfen (shogi) or fen (chess), not both", MoveIndex: -1})
		return
	case req.FEN != "" && req.Format == "kif", req.SFEN != "" && req.Format == "pgn":
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "format: KIF is for shogi (sfen), PGN for chess (fen)", MoveIndex: -1})
		return
	case req.Variant != "" && req.FEN == "" && req.Format != "pgn":
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: "variant is for chess games (fen)", MoveIndex: -1})
		return
	case req.FEN != "" || req.Format == "pgn":
		s.exportPGN(w, r, &req)
		return
	}
	rec, err := s.exportRecordOf(&req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	text, kerr := kifu.ExportKIF(rec)
	if kerr != nil {
		// ExportKIF checks every move of every line as it writes it.
		if se, ok := kerr.(*shogi.Error); ok {
			s.problem(w, r, &session.Error{Code: string(se.Code), Message: se.Message, MoveIndex: se.MoveIndex})
			return
		}
		s.problem(w, r, &session.Error{Code: codeInternal, Message: kerr.Error(), MoveIndex: -1})
		return
	}
	writeJSON(w, http.StatusOK, exportResponse{KIF: text})
}

// exportRecordOf checks what ExportKIF does not (the start position, the
// fields, the size) and builds the record.
func (s *Server) exportRecordOf(req *exportRequest) (*kifu.Record, *session.Error) {
	invalid := func(format string, args ...any) *session.Error {
		return &session.Error{Code: session.CodeInvalidField, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	sfen := req.SFEN
	if sfen == "" {
		sfen = "startpos"
	}
	start, errs := shogi.Load(sfen, nil)
	if errs != nil {
		return nil, &session.Error{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	if req.End != "" && !recordEnds[req.End] {
		return nil, invalid("end: %q is not one of resign, abort, repetition, impasse, time_up, illegal_win, illegal_loss, mate, no_mate, declare_win, draw", req.End)
	}
	rec := &kifu.Record{Format: kifu.FormatKIF, StartSFEN: start.SFEN(), Comment: req.Comment, End: kifu.End(req.End)}
	if h := req.Header; h != nil {
		has := map[string]bool{}
		for _, f := range h.Fields {
			has[f.Key] = true
		}
		black, white := kifu.PlayerKeys(rec.StartSFEN)
		for _, f := range []kifu.Field{{Key: "棋戦", Value: h.Event}, {Key: "開始日時", Value: h.Date}, {Key: black, Value: h.Black}, {Key: white, Value: h.White}} {
			if f.Value != "" && !has[f.Key] {
				rec.Header = append(rec.Header, f)
			}
		}
		rec.Header = append(rec.Header, h.Fields...)
	}
	count, maxMoves := 0, s.cfg.Service.Caps.MaxMoves
	if maxMoves <= 0 {
		maxMoves = kifu.DefaultMaxMoves
	}
	var line func(plies []exportPly, where string) ([]kifu.Move, *session.Error)
	line = func(plies []exportPly, where string) ([]kifu.Move, *session.Error) {
		out := make([]kifu.Move, 0, len(plies))
		for i, p := range plies {
			if count++; count > maxMoves {
				return nil, &session.Error{Code: string(kifu.CodeRecordTooLong), Message: fmt.Sprintf("more than %d moves (all lines together)", maxMoves), MoveIndex: -1}
			}
			m := kifu.Move{USI: p.Move, Comment: p.Comment, TimeMS: -1}
			if p.TimeMS != nil {
				if *p.TimeMS < 0 || *p.TimeMS > kifu.MaxTimeMS {
					return nil, invalid("%s[%d].time_ms: want 0..%d", where, i, int64(kifu.MaxTimeMS))
				}
				m.TimeMS = *p.TimeMS
			}
			if e := p.Eval; e != nil {
				if (e.CP == nil) == (e.Mate == nil) {
					return nil, invalid("%s[%d].eval: give cp or mate, one of them", where, i)
				}
				if e.Depth < 0 {
					return nil, invalid("%s[%d].eval.depth: negative", where, i)
				}
				m.Eval = &kifu.Eval{CP: e.CP, Mate: e.Mate, Depth: e.Depth, PV: e.PV, Engine: e.Engine}
			}
			for k, v := range p.Variations {
				if len(v) == 0 {
					return nil, invalid("%s[%d].variations[%d]: empty", where, i, k)
				}
				alt, err := line(v, fmt.Sprintf("%s[%d].variations[%d]", where, i, k))
				if err != nil {
					return nil, err
				}
				m.Variations = append(m.Variations, alt)
			}
			out = append(out, m)
		}
		return out, nil
	}
	moves, err := line(req.Plies, "plies")
	if err != nil {
		return nil, err
	}
	rec.Moves = moves
	return rec, nil
}
