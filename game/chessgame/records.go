package chessgame

import (
	"fmt"
	"strings"
	"time"

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
	gs, err := pgn.ParseMax(text, maxMoves)
	if err != nil {
		return "", "", nil, recordError(err)
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

// pgnPly is a move of a line with what the text says of it, in the shape
// of shogi's plies (comment, time_ms, variations) with what PGN adds: the
// comment before a variation's first move, NAGs, the clock and the
// evaluation of its comment commands.
type pgnPly struct {
	Move          string     `json:"move"`
	SAN           string     `json:"san"`
	CommentBefore string     `json:"comment_before,omitempty"`
	Comment       string     `json:"comment,omitempty"`
	NAGs          []int      `json:"nags,omitempty"`
	ClockMS       *int64     `json:"clock_ms,omitempty"` // [%clk]
	TimeMS        *int64     `json:"time_ms,omitempty"`  // [%emt]
	Eval          *pgnEval   `json:"eval,omitempty"`     // [%eval], White's side
	Variations    [][]pgnPly `json:"variations,omitempty"`
}

// pgnEval is a [%eval]: centipawns or a mate, from White's side.
type pgnEval struct {
	CP    *int `json:"cp,omitempty"`
	Mate  *int `json:"mate,omitempty"`
	Depth int  `json:"depth,omitempty"`
}

func recordError(err error) *game.RecordError {
	if pe, ok := err.(*pgn.Error); ok {
		return &game.RecordError{Code: string(pe.Code), Message: pe.Message, Line: pe.Line, MoveIndex: pe.MoveIndex}
	}
	return &game.RecordError{Code: string(pgn.CodeSyntax), Message: err.Error(), MoveIndex: -1}
}

// Parse reads a PGN text's first game (package chess/pgn: every move of
// every line checked by the rules of chess; maxMoves bounds them all).
func (chessGame) Parse(data []byte, _ string, maxMoves int) (any, *game.RecordError) {
	games, err := pgn.ParseMax(string(data), maxMoves)
	if err != nil {
		return nil, recordError(err)
	}
	g := games[0]
	start, errs := g.Start()
	if errs != nil {
		return nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	resp := pgnAnswer{Format: "pgn", Position: game.RecordPosition{Field: "fen", Start: start.FEN(), Moves: []string{}}, Comment: g.Comment,
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
		pos.Play(p.Move)
	}
	resp.Plies = pliesOf(g.Moves)
	resp.FinalFEN = pos.FEN()
	return resp, nil
}

// pliesOf is a line of the game as parse answers it.
func pliesOf(line []pgn.Ply) []pgnPly {
	out := make([]pgnPly, 0, len(line))
	for _, p := range line {
		j := pgnPly{Move: p.Move.String(), SAN: p.SAN, CommentBefore: p.Before, Comment: p.Comment, NAGs: p.NAGs}
		if p.Clock != nil {
			ms := p.Clock.Milliseconds()
			j.ClockMS = &ms
		}
		if p.Elapsed != nil {
			ms := p.Elapsed.Milliseconds()
			j.TimeMS = &ms
		}
		if e := p.Eval; e != nil {
			j.Eval = &pgnEval{CP: e.CP, Mate: e.Mate, Depth: e.Depth}
		}
		for _, v := range p.Variations {
			j.Variations = append(j.Variations, pliesOf(v))
		}
		out = append(out, j)
	}
	return out
}

type exportAnswer struct {
	PGN string `json:"pgn"`
}

// Export writes a chess game as PGN by chess/pgn's writer, every move of
// every line checked. A ply's eval (White's side, as game analysis gives
// it) is written as "[%eval 0.54,12]" or "[%eval #-3]", its time as
// "[%emt 0:00:12]" and its clock as "[%clk 0:03:00]": the commands lichess
// and python-chess read.
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
	// own are the tags the game says itself, whatever the fields say.
	own := map[string]string{"Result": result}
	if variant == chess.Chess960 {
		own["Variant"] = "Chess960"
	}
	if start.FEN() != chess.StartFEN || variant == chess.Chess960 {
		own["SetUp"], own["FEN"] = "1", start.FEN()
	}
	add := func(name, value string) { g.Tags = append(g.Tags, pgn.Tag{Name: name, Value: value}) }
	// The Seven Tag Roster and the game's own tags first, where the fields
	// lack them; then the fields in their order (a record read and
	// written keeps its tags' order), the game's own with its values.
	for _, t := range []pgn.Tag{{Name: "Event", Value: or(h.Event, "?")}, {Name: "Site", Value: "?"}, {Name: "Date", Value: or(h.Date, "????.??.??")},
		{Name: "Round", Value: "?"}, {Name: "White", Value: or(h.White, "?")}, {Name: "Black", Value: or(h.Black, "?")}, {Name: "Result", Value: result}} {
		if !has[t.Name] {
			add(t.Name, t.Value)
		}
	}
	for _, name := range []string{"Variant", "SetUp", "FEN"} {
		if own[name] != "" && !has[name] {
			add(name, own[name])
		}
	}
	for _, f := range h.Fields {
		switch f.Key {
		case "Variant":
			// A Variant tag naming the game's variant in its own words
			// ("Standard", "chess 960") stays; another is the game's.
			if v, err := (&pgn.Game{Tags: []pgn.Tag{{Name: "Variant", Value: f.Value}}}).Variant(); err == nil && v == variant {
				add(f.Key, f.Value)
			} else if own[f.Key] != "" {
				add(f.Key, own[f.Key])
			}
		case "Result", "SetUp", "FEN":
			if own[f.Key] != "" {
				add(f.Key, own[f.Key])
			}
		default:
			add(f.Key, f.Value)
		}
	}
	count := 0
	if maxMoves <= 0 {
		maxMoves = defaultMaxMoves
	}
	var line func(plies []game.RecordPly, pos chess.Position, where string, depth int) ([]pgn.Ply, *game.RecordError)
	line = func(plies []game.RecordPly, pos chess.Position, where string, depth int) ([]pgn.Ply, *game.RecordError) {
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
			// The move is what is written; its SAN, when given, must name it
			// (any SAN that does: "Nbd7" where "Nd7" is enough, "e8Q").
			if p.SAN != "" {
				if sm, err := pos.ParseSAN(p.SAN); err != nil || sm != m {
					return nil, game.Mismatch(i, "%s[%d].san: %q is not the move %s (%s)", where, i, p.SAN, p.Move, pos.SAN(m))
				}
			}
			if p.KIF != "" {
				return nil, invalid("%s[%d].kif: a shogi notation; a chess ply has san", where, i)
			}
			ply := pgn.Ply{Move: m, Comment: p.Comment, Before: p.CommentBefore, NAGs: p.NAGs}
			if p.CommentBefore != "" && (i > 0 || depth == 0) {
				return nil, invalid("%s[%d].comment_before: only a variation's first move has a comment before it", where, i)
			}
			for _, n := range p.NAGs {
				if n < 0 || n > 255 {
					return nil, invalid("%s[%d].nags: %d is not 0..255", where, i, n)
				}
			}
			if e := p.Eval; e != nil {
				if (e.CP == nil) == (e.Mate == nil) {
					return nil, invalid("%s[%d].eval: give cp or mate, one of them", where, i)
				}
				if e.Depth < 0 {
					return nil, invalid("%s[%d].eval.depth: negative", where, i)
				}
				ply.Eval = &pgn.Eval{CP: e.CP, Mate: e.Mate, Depth: e.Depth}
			}
			for _, t := range []struct {
				name string
				ms   *int64
				to   **time.Duration
			}{{"time_ms", p.TimeMS, &ply.Elapsed}, {"clock_ms", p.ClockMS, &ply.Clock}} {
				if t.ms == nil {
					continue
				}
				if *t.ms < 0 || *t.ms > game.MaxTimeMS {
					return nil, invalid("%s[%d].%s: want 0..%d", where, i, t.name, int64(game.MaxTimeMS))
				}
				d := time.Duration(*t.ms) * time.Millisecond
				*t.to = &d
			}
			if len(p.Variations) > 0 && depth >= pgn.MaxDepth {
				return nil, invalid("%s[%d].variations: nested deeper than %d", where, i, pgn.MaxDepth)
			}
			for k, v := range p.Variations {
				if len(v) == 0 {
					return nil, invalid("%s[%d].variations[%d]: empty", where, i, k)
				}
				alt, err := line(v, pos, fmt.Sprintf("%s[%d].variations[%d]", where, i, k), depth+1)
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
	moves, err := line(rg.Plies, *start, "plies", 0)
	if err != nil {
		return nil, err
	}
	if rg.Final != "" {
		pos := *start
		for _, p := range moves {
			pos.Play(p.Move)
		}
		if rg.Final != pos.FEN() {
			return nil, game.Mismatch(-1, "final_fen: %q, but the moves reach %s", rg.Final, pos.FEN())
		}
	}
	g.Moves = moves
	return g, nil
}
