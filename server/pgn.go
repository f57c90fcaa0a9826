package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

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
	start, errs := g.Start()
	if errs != nil {
		s.problem(w, r, &session.Error{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1})
		return
	}
	resp := pgnResponse{Format: "pgn", Position: session.Position{Game: "chess", Start: start.FEN(), Moves: []string{}}, Comment: g.Comment, Plies: []pgnPly{},
		Header: recordHeader{White: g.Tag("White"), Black: g.Tag("Black"), Event: g.Tag("Event"), Date: g.Tag("Date"), Fields: []kifu.Field{}}}
	if g.Result != "*" {
		resp.End = g.Result
	}
	for _, tg := range g.Tags {
		resp.Header.Fields = append(resp.Header.Fields, kifu.Field{Key: tg.Name, Value: tg.Value})
	}
	if start.Variant() == chess.Chess960 {
		resp.Position.Variant = "chess960" // the Variant tag
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

// exportPGN answers /v1/records/export for a chess game (fen, or format
// pgn): the game written by chess/pgn's writer, every move of every line
// checked. A ply's eval (White's side, as game analysis gives it) goes
// into its comment as "[%eval 0.54,12]" or "[%eval #-3]", and its time as
// "[%emt 0:00:12]": the commands lichess and python-chess read.
func (s *Server) exportPGN(w http.ResponseWriter, r *http.Request, req *exportRequest) {
	g, err := s.pgnGameOf(req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	text, werr := pgn.Write(g)
	if werr != nil {
		s.problem(w, r, &session.Error{Code: session.CodeInvalidField, Message: werr.Error(), MoveIndex: -1})
		return
	}
	writeJSON(w, http.StatusOK, exportPGNResponse{PGN: text})
}

type exportPGNResponse struct {
	PGN string `json:"pgn"`
}

// pgnResults are the ends a PGN game takes: its game termination markers.
var pgnResults = map[string]bool{"1-0": true, "0-1": true, "1/2-1/2": true, "*": true}

// pgnGameOf checks the request and builds the game: the Seven Tag Roster
// (from header, "?" where absent), SetUp and FEN for a start other than
// the standard one, header fields as further tags.
func (s *Server) pgnGameOf(req *exportRequest) (*pgn.Game, *session.Error) {
	invalid := func(format string, args ...any) *session.Error {
		return &session.Error{Code: session.CodeInvalidField, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	fen := req.FEN
	if fen == "" || fen == "startpos" {
		fen = chess.StartFEN
	}
	_, v, verr := (&session.Position{Game: "chess", Start: fen, Variant: req.Variant}).CheckGame()
	if verr != nil {
		return nil, verr
	}
	variant := chess.Standard
	if v == "chess960" {
		variant = chess.Chess960
	}
	start, errs := chess.Load(fen, nil, variant)
	if errs != nil {
		return nil, &session.Error{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	result := req.End
	if result == "" {
		result = "*"
	}
	if !pgnResults[result] {
		return nil, invalid("end: %q: a chess game ends 1-0, 0-1, 1/2-1/2 or * (unfinished)", result)
	}
	g := &pgn.Game{Comment: req.Comment, Result: result}
	var h exportHeader
	if req.Header != nil {
		h = *req.Header
	}
	or := func(v, dflt string) string {
		if v == "" {
			return dflt
		}
		return v
	}
	has := map[string]bool{}
	for _, f := range h.Fields {
		has[f.Key] = true
	}
	for _, t := range []pgn.Tag{{Name: "Event", Value: or(h.Event, "?")}, {Name: "Site", Value: "?"}, {Name: "Date", Value: or(h.Date, "????.??.??")},
		{Name: "Round", Value: "?"}, {Name: "White", Value: or(h.White, "?")}, {Name: "Black", Value: or(h.Black, "?")}, {Name: "Result", Value: result}} {
		if !has[t.Name] || t.Name == "Result" {
			g.Tags = append(g.Tags, t)
		}
	}
	if variant == chess.Chess960 {
		g.Tags = append(g.Tags, pgn.Tag{Name: "Variant", Value: "Chess960"})
	}
	if start.FEN() != chess.StartFEN || variant == chess.Chess960 {
		g.Tags = append(g.Tags, pgn.Tag{Name: "SetUp", Value: "1"}, pgn.Tag{Name: "FEN", Value: start.FEN()})
	}
	for _, f := range h.Fields {
		switch f.Key {
		case "Result", "SetUp", "FEN", "Variant":
			continue // the game's own
		}
		g.Tags = append(g.Tags, pgn.Tag{Name: f.Key, Value: f.Value})
	}
	count, maxMoves := 0, s.cfg.Service.Caps.MaxMoves
	if maxMoves <= 0 {
		maxMoves = kifu.DefaultMaxMoves
	}
	var line func(plies []exportPly, pos chess.Position, where string) ([]pgn.Ply, *session.Error)
	line = func(plies []exportPly, pos chess.Position, where string) ([]pgn.Ply, *session.Error) {
		out := make([]pgn.Ply, 0, len(plies))
		for i, p := range plies {
			if count++; count > maxMoves {
				return nil, &session.Error{Code: string(kifu.CodeRecordTooLong), Message: fmt.Sprintf("more than %d moves (all lines together)", maxMoves), MoveIndex: -1}
			}
			m, err := pos.CheckMove(p.Move)
			if err != nil {
				ce := err.(*chess.Error)
				return nil, &session.Error{Code: string(ce.Code), Message: fmt.Sprintf("%s[%d]: %s", where, i, ce.Message), MoveIndex: i}
			}
			ply := pgn.Ply{Move: m}
			var cmds []string
			if e := p.Eval; e != nil {
				if (e.CP == nil) == (e.Mate == nil) {
					return nil, invalid("%s[%d].eval: give cp or mate, one of them", where, i)
				}
				if e.Depth < 0 {
					return nil, invalid("%s[%d].eval.depth: negative", where, i)
				}
				v := ""
				if e.Mate != nil {
					v = "#" + strconv.Itoa(*e.Mate)
				} else {
					v = strconv.FormatFloat(float64(*e.CP)/100, 'f', 2, 64)
				}
				if e.Depth > 0 {
					v += "," + strconv.Itoa(e.Depth)
				}
				cmds = append(cmds, "[%eval "+v+"]")
			}
			if p.TimeMS != nil {
				if *p.TimeMS < 0 || *p.TimeMS > kifu.MaxTimeMS {
					return nil, invalid("%s[%d].time_ms: want 0..%d", where, i, int64(kifu.MaxTimeMS))
				}
				sec := *p.TimeMS / 1000
				cmds = append(cmds, fmt.Sprintf("[%%emt %d:%02d:%02d]", sec/3600, sec/60%60, sec%60))
			}
			ply.Comment = strings.TrimSpace(strings.Join(cmds, " ") + " " + p.Comment)
			for k, v := range p.Variations {
				if len(v) == 0 {
					return nil, invalid("%s[%d].variations[%d]: empty", where, i, k)
				}
				alt, err := line(v, pos, fmt.Sprintf("%s[%d].variations[%d]", where, i, k))
				if err != nil {
					return nil, err
				}
				ply.Variations = append(ply.Variations, alt)
			}
			out = append(out, ply)
			pos.Play(m)
		}
		return out, nil
	}
	moves, err := line(req.Plies, *start, "plies")
	if err != nil {
		return nil, err
	}
	g.Moves = moves
	return g, nil
}
