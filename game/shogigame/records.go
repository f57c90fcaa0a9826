package shogigame

import (
	"fmt"

	"github.com/usid/usid/game"
	"github.com/usid/usid/kifu"
	"github.com/usid/usid/shogi"
)

// Records: every text no other game claims is read as a shogi record
// (KIF, KI2, CSA, USI, SFEN: package kifu tells them apart).
func (shogiGame) Claims(string) bool { return true }

func (shogiGame) ReadMain(text string, maxMoves int) (string, string, []string, *game.RecordError) {
	rec, err := kifu.Parse([]byte(text), kifu.Options{MaxMoves: maxMoves})
	if err != nil {
		return "", "", nil, recordError(err)
	}
	return rec.StartSFEN, "", rec.USIMoves(), nil
}

func recordError(err error) *game.RecordError {
	ke, ok := err.(*kifu.Error)
	if !ok {
		return &game.RecordError{Code: "invalid_field", Message: err.Error(), MoveIndex: -1}
	}
	return &game.RecordError{Code: string(ke.Code), Message: ke.Message, Line: ke.Line, MoveIndex: ke.MoveIndex}
}

// Formats: KIF (written by Export), KI2, CSA, USI ("position startpos
// moves ..."), SFEN.
func (shogiGame) Formats() []string { return []string{"kif", "ki2", "csa", "usi", "sfen"} }

// recordAnswer is a parsed record: /v1/records/parse's answer.
type recordAnswer struct {
	Format string `json:"format"`
	// Position is the start and the main line, ready for /v1/analyze.
	Position  game.RecordPosition `json:"position"`
	FinalSFEN string              `json:"final_sfen"`
	End       string              `json:"end,omitempty"`
	Header    game.RecordHeader   `json:"header"`
	Comment   string              `json:"comment,omitempty"`
	Plies     []plyJSON           `json:"plies"`
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

// Parse reads a record with package kifu; format "" is detected.
func (shogiGame) Parse(data []byte, format string, maxMoves int) (any, *game.RecordError) {
	rec, err := kifu.Parse(data, kifu.Options{Format: kifu.Format(format), MaxMoves: maxMoves})
	if err != nil {
		return nil, recordError(err)
	}
	final, ferr := rec.Final()
	if ferr != nil {
		// Parse checked every move: this cannot happen.
		return nil, &game.RecordError{Code: "internal", Message: ferr.Error(), MoveIndex: -1}
	}
	start, _ := shogi.ParseSFEN(rec.StartSFEN)
	resp := recordAnswer{
		Format:    string(rec.Format),
		Position:  game.RecordPosition{Field: "sfen", Start: rec.StartSFEN, Moves: rec.USIMoves()},
		FinalSFEN: final.SFEN(),
		End:       string(rec.End),
		Header:    game.RecordHeader{Black: rec.Black, White: rec.White, Event: rec.Event, Date: rec.Date, Handicap: rec.Handicap, Fields: []game.RecordField{}},
		Comment:   rec.Comment,
		Plies:     pliesOf(*start, shogi.NoSquare, rec.Moves),
	}
	for _, f := range rec.Header {
		resp.Header.Fields = append(resp.Header.Fields, game.RecordField(f))
	}
	return resp, nil
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

// exportAnswer is /v1/records/export's answer for a shogi game.
type exportAnswer struct {
	KIF string `json:"kif"`
}

var recordEnds = map[string]bool{}

func init() {
	for _, e := range []kifu.End{kifu.EndResign, kifu.EndAbort, kifu.EndRepetition, kifu.EndImpasse, kifu.EndTimeUp,
		kifu.EndIllegalWin, kifu.EndIllegalLoss, kifu.EndMate, kifu.EndNoMate, kifu.EndDeclareWin, kifu.EndDraw} {
		recordEnds[string(e)] = true
	}
}

// Export writes g as KIF (kifu.ExportKIF): the start, the main line with
// its variations, comments, consumed times and engine evaluations (as the
// "*#評価値=" comment lines ShogiHome reads).
func (shogiGame) Export(g *game.RecordGame, maxMoves int) (any, *game.RecordError) {
	rec, err := exportRecordOf(g, maxMoves)
	if err != nil {
		return nil, err
	}
	text, kerr := kifu.ExportKIF(rec)
	if kerr != nil {
		// ExportKIF checks every move of every line as it writes it.
		if se, ok := kerr.(*shogi.Error); ok {
			return nil, &game.RecordError{Code: string(se.Code), Message: se.Message, MoveIndex: se.MoveIndex}
		}
		return nil, &game.RecordError{Code: "internal", Message: kerr.Error(), MoveIndex: -1}
	}
	return exportAnswer{KIF: text}, nil
}

// exportRecordOf checks what ExportKIF does not (the start position, the
// fields, the size) and builds the record.
func exportRecordOf(g *game.RecordGame, maxMoves int) (*kifu.Record, *game.RecordError) {
	invalid := func(format string, args ...any) *game.RecordError {
		return &game.RecordError{Code: "invalid_field", Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	sfen := g.Start
	if sfen == "" {
		sfen = "startpos"
	}
	start, errs := shogi.Load(sfen, nil)
	if errs != nil {
		return nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
	}
	if g.End != "" && !recordEnds[g.End] {
		return nil, invalid("end: %q is not one of resign, abort, repetition, impasse, time_up, illegal_win, illegal_loss, mate, no_mate, declare_win, draw", g.End)
	}
	rec := &kifu.Record{Format: kifu.FormatKIF, StartSFEN: start.SFEN(), Comment: g.Comment, End: kifu.End(g.End)}
	if h := g.Header; h != nil {
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
		for _, f := range h.Fields {
			rec.Header = append(rec.Header, kifu.Field(f))
		}
	}
	count := 0
	if maxMoves <= 0 {
		maxMoves = kifu.DefaultMaxMoves
	}
	// line replays the plies from pos (last: the square of the move before,
	// for KIF's 同): a ply's kif, when given, must be the move's.
	// ExportKIF checks the moves again as it writes them, with its codes.
	var line func(plies []game.RecordPly, pos shogi.Position, last shogi.Square, where string) ([]kifu.Move, *game.RecordError)
	line = func(plies []game.RecordPly, pos shogi.Position, last shogi.Square, where string) ([]kifu.Move, *game.RecordError) {
		out := make([]kifu.Move, 0, len(plies))
		for i, p := range plies {
			if count++; count > maxMoves {
				return nil, &game.RecordError{Code: string(kifu.CodeRecordTooLong), Message: fmt.Sprintf("more than %d moves (all lines together)", maxMoves), MoveIndex: -1}
			}
			switch {
			case p.SAN != "":
				return nil, invalid("%s[%d].san: a chess notation; a shogi ply has kif", where, i)
			case len(p.NAGs) > 0, p.ClockMS != nil, p.CommentBefore != "":
				return nil, invalid("%s[%d]: nags, clock_ms and comment_before are PGN's; a KIF has none", where, i)
			}
			mv, merr := pos.CheckMove(p.Move)
			if merr == nil {
				if p.KIF != "" && p.KIF != pos.KIF(mv, last) {
					return nil, game.Mismatch(i, "%s[%d].kif: %q is not the move %s (%s)", where, i, p.KIF, p.Move, pos.KIF(mv, last))
				}
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
				alt, err := line(v, pos, last, fmt.Sprintf("%s[%d].variations[%d]", where, i, k))
				if err != nil {
					return nil, err
				}
				m.Variations = append(m.Variations, alt)
			}
			out = append(out, m)
			if merr != nil {
				break // ExportKIF refuses the move with its code
			}
			pos.Play(mv)
			last = mv.To
		}
		return out, nil
	}
	moves, err := line(g.Plies, *start, shogi.NoSquare, "plies")
	if err != nil {
		return nil, err
	}
	if g.Final != "" {
		pos, legal := *start, true
		for _, m := range moves {
			mv, err := pos.CheckMove(m.USI)
			if legal = err == nil; !legal {
				break // ExportKIF refuses it
			}
			pos.Play(mv)
		}
		if legal && pos.SFEN() != g.Final {
			return nil, game.Mismatch(-1, "final_sfen: %q, but the moves reach %s", g.Final, pos.SFEN())
		}
	}
	rec.Moves = moves
	return rec, nil
}
