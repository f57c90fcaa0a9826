package chessgame

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/chess/pgn"
	"github.com/usid/usid/game"
)

// Claims: a PGN text starts with a tag pair or a move number, which none
// of the shogi formats does (as POST /v1/records/parse tells them).
func (chessGame) Claims(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n\ufeff")
	return strings.HasPrefix(t, "[") || strings.HasPrefix(t, "1.")
}

// ReadMain reads a PGN text's first game: its start (the FEN tag's, with
// the Variant tag's Chess960) and main line.
func (chessGame) ReadMain(text string, maxMoves int) (string, string, []string, *game.RecordError) {
	gs, err := pgn.Parse(text)
	if err != nil {
		if pe, ok := err.(*pgn.Error); ok {
			return "", "", nil, &game.RecordError{Code: string(pe.Code), Message: pe.Message, Line: pe.Line, MoveIndex: pe.MoveIndex}
		}
		return "", "", nil, &game.RecordError{Code: string(pgn.CodeSyntax), Message: err.Error(), MoveIndex: -1}
	}
	g := gs[0]
	if len(g.Moves) > maxMoves {
		return "", "", nil, &game.RecordError{Code: "record_too_long", Message: fmt.Sprintf("the game has %d moves; at most %d", len(g.Moves), maxMoves), MoveIndex: -1}
	}
	start, errs := g.Start()
	if errs != nil {
		return "", "", nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	variant := ""
	if start.Variant() == chess.Chess960 {
		variant = Variant960 // the Variant tag: an engine with UCI_Chess960 analyses it
	}
	moves := make([]string, len(g.Moves))
	for i, m := range g.Moves {
		moves[i] = m.Move.String()
	}
	return start.FEN(), variant, moves, nil
}

// Formats: PGN.
func (chessGame) Formats() []string { return []string{"pgn"} }

// pgnAnswer is a chess game read from PGN: its first game's start and
// main line (a chess position for /v1/analyze), the tags, and the plies in
// SAN. The shape is the shogi record's, with fen fields where shogi has
// sfen.
type pgnAnswer struct {
	Format   string              `json:"format"` // "pgn"
	Position game.RecordPosition `json:"position"`
	FinalFEN string              `json:"final_fen"`
	End      string              `json:"end,omitempty"` // the result: 1-0, 0-1, 1/2-1/2
	Header   game.RecordHeader   `json:"header"`
	Comment  string              `json:"comment,omitempty"`
	Plies    []pgnPly            `json:"plies"`
}

type pgnPly struct {
	Move    string `json:"move"`
	SAN     string `json:"san"`
	Comment string `json:"comment,omitempty"`
}

// Parse reads a PGN text's first game (package chess/pgn: every move
// checked by the rules of chess).
func (chessGame) Parse(data []byte, _ string, maxMoves int) (any, *game.RecordError) {
	games, err := pgn.Parse(string(data))
	if err != nil {
		if pe, ok := err.(*pgn.Error); ok {
			return nil, &game.RecordError{Code: string(pe.Code), Message: pe.Message, Line: pe.Line, MoveIndex: pe.MoveIndex}
		}
		return nil, &game.RecordError{Code: string(pgn.CodeSyntax), Message: err.Error(), MoveIndex: -1}
	}
	g := games[0]
	if len(g.Moves) > maxMoves {
		return nil, &game.RecordError{Code: "record_too_long", Message: "the game has more moves than caps.max_moves", MoveIndex: -1}
	}
	start, errs := g.Start()
	if errs != nil {
		return nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	resp := pgnAnswer{Format: "pgn", Position: game.RecordPosition{Field: "fen", Start: start.FEN(), Moves: []string{}}, Comment: g.Comment, Plies: []pgnPly{},
		Header: game.RecordHeader{White: g.Tag("White"), Black: g.Tag("Black"), Event: g.Tag("Event"), Date: g.Tag("Date"), Fields: []game.RecordField{}}}
	if g.Result != "*" {
		resp.End = g.Result
	}
	for _, tg := range g.Tags {
		resp.Header.Fields = append(resp.Header.Fields, game.RecordField{Key: tg.Name, Value: tg.Value})
	}
	if start.Variant() == chess.Chess960 {
		resp.Position.Variant = Variant960 // the Variant tag
	}
	pos := *start
	for _, p := range g.Moves {
		resp.Position.Moves = append(resp.Position.Moves, p.Move.String())
		resp.Plies = append(resp.Plies, pgnPly{Move: p.Move.String(), SAN: p.SAN, Comment: p.Comment})
		pos.Play(p.Move)
	}
	resp.FinalFEN = pos.FEN()
	return resp, nil
}

type exportAnswer struct {
	PGN string `json:"pgn"`
}

// Export writes a chess game as PGN by chess/pgn's writer, every move of
// every line checked. A ply's eval (White's side, as game analysis gives
// it) goes into its comment as "[%eval 0.54,12]" or "[%eval #-3]", and its
// time as "[%emt 0:00:12]": the commands lichess and python-chess read.
func (chessGame) Export(rg *game.RecordGame, maxMoves int) (any, *game.RecordError) {
	g, err := pgnGameOf(rg, maxMoves)
	if err != nil {
		return nil, err
	}
	text, werr := pgn.Write(g)
	if werr != nil {
		return nil, &game.RecordError{Code: "invalid_field", Message: werr.Error(), MoveIndex: -1}
	}
	return exportAnswer{PGN: text}, nil
}

// pgnResults are the ends a PGN game takes: its game termination markers.
var pgnResults = map[string]bool{"1-0": true, "0-1": true, "1/2-1/2": true, "*": true}

// defaultMaxMoves bounds the moves to write when the caller gives no bound
// (kifu's default).
const defaultMaxMoves = 10000

// pgnGameOf checks the game and builds the PGN game: the Seven Tag Roster
// (from header, "?" where absent), SetUp and FEN for a start other than
// the standard one, header fields as further tags.
func pgnGameOf(rg *game.RecordGame, maxMoves int) (*pgn.Game, *game.RecordError) {
	invalid := func(format string, args ...any) *game.RecordError {
		return &game.RecordError{Code: "invalid_field", Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	fen := rg.Start
	if fen == "" || fen == "startpos" {
		fen = chess.StartFEN
	}
	variant := variantOf(rg.Variant)
	start, errs := chess.Load(fen, nil, variant)
	if errs != nil {
		return nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	result := rg.End
	if result == "" {
		result = "*"
	}
	if !pgnResults[result] {
		return nil, invalid("end: %q: a chess game ends 1-0, 0-1, 1/2-1/2 or * (unfinished)", result)
	}
	g := &pgn.Game{Comment: rg.Comment, Result: result}
	var h game.RecordHeader
	if rg.Header != nil {
		h = *rg.Header
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
	count := 0
	if maxMoves <= 0 {
		maxMoves = defaultMaxMoves
	}
	var line func(plies []game.RecordPly, pos chess.Position, where string) ([]pgn.Ply, *game.RecordError)
	line = func(plies []game.RecordPly, pos chess.Position, where string) ([]pgn.Ply, *game.RecordError) {
		out := make([]pgn.Ply, 0, len(plies))
		for i, p := range plies {
			if count++; count > maxMoves {
				return nil, &game.RecordError{Code: "record_too_long", Message: fmt.Sprintf("more than %d moves (all lines together)", maxMoves), MoveIndex: -1}
			}
			m, err := pos.CheckMove(p.Move)
			if err != nil {
				ce := err.(*chess.Error)
				return nil, &game.RecordError{Code: string(ce.Code), Message: fmt.Sprintf("%s[%d]: %s", where, i, ce.Message), MoveIndex: i}
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
				if *p.TimeMS < 0 || *p.TimeMS > game.MaxTimeMS {
					return nil, invalid("%s[%d].time_ms: want 0..%d", where, i, int64(game.MaxTimeMS))
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
	moves, err := line(rg.Plies, *start, "plies")
	if err != nil {
		return nil, err
	}
	g.Moves = moves
	return g, nil
}
