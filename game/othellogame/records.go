package othellogame

import (
	"fmt"
	"strconv"

	"github.com/usid/usid/game"
	"github.com/usid/usid/othello"
)

// Formats: the move transcript ("f5d6c3d3c4...": the squares played from
// the start, passes left out), the record every othello program reads
// and writes.
func (othelloGame) Formats() []string { return []string{"transcript"} }

// transcriptAnswer is a transcript read by /v1/records/parse, shaped as
// the other games' records: the game from the start with the passes put
// back, the final position, its score when the game is over.
type transcriptAnswer struct {
	Format       string              `json:"format"` // "transcript"
	Position     game.RecordPosition `json:"position"`
	FinalOthello string              `json:"final_othello"`
	// End is the final score, Black's first ("36-28"), when neither side
	// can move after the last square.
	End string `json:"end,omitempty"`
	// Header is empty: a transcript has none.
	Header game.RecordHeader `json:"header"`
	Plies  []transcriptPly   `json:"plies"`
}

// transcriptPly is a move of the game: a square with the line of the text
// it was read from, or a pass put back (no line).
type transcriptPly struct {
	Move string `json:"move"`
	Line int    `json:"line,omitempty"`
}

// Parse reads a transcript (othello.ParseTranscript). A refused square's
// MoveIndex counts the squares of the transcript (passes are not written),
// and Line is its line.
func (othelloGame) Parse(data []byte, _ string, maxMoves int) (any, *game.RecordError) {
	text := string(data)
	lines := squareLines(text)
	if len(lines) == 0 {
		return nil, &game.RecordError{Code: "record_format", Message: "the transcript is empty: want the squares played, as f5d6c3", MoveIndex: -1}
	}
	ms, err := othello.ParseTranscript(nil, text)
	if err != nil {
		e, ok := err.(*othello.Error)
		if !ok {
			return nil, &game.RecordError{Code: "move_syntax", Message: err.Error(), MoveIndex: -1}
		}
		re := &game.RecordError{Code: string(e.Code), Message: e.Message, MoveIndex: e.MoveIndex}
		if e.MoveIndex >= 0 && e.MoveIndex < len(lines) {
			re.Line = lines[e.MoveIndex]
		}
		return nil, re
	}
	if maxMoves > 0 && len(ms) > maxMoves {
		return nil, &game.RecordError{Code: "record_too_long", Message: "the game has " + strconv.Itoa(len(ms)) + " moves; at most " + strconv.Itoa(maxMoves), MoveIndex: -1}
	}
	resp := transcriptAnswer{Format: "transcript", Position: game.RecordPosition{Field: "othello", Start: "startpos", Moves: make([]string, 0, len(ms))},
		Header: game.RecordHeader{Fields: []game.RecordField{}}, Plies: make([]transcriptPly, 0, len(ms))}
	pos := othello.Startpos()
	k := 0 // the next square of the text
	for _, m := range ms {
		ply := transcriptPly{Move: m.String()}
		if m != othello.Pass {
			ply.Line = lines[k]
			k++
		}
		resp.Position.Moves = append(resp.Position.Moves, ply.Move)
		resp.Plies = append(resp.Plies, ply)
		pos.Play(m)
	}
	resp.FinalOthello = pos.Token()
	if r, over := pos.Outcome(); over {
		resp.End = score(r)
	}
	return resp, nil
}

// squareLines is the 1-based line of each square of a transcript, as
// othello.ParseTranscript splits it: white space skipped, two characters a
// square (up to the first that is none: ParseTranscript stops there).
func squareLines(s string) []int {
	var lines []int
	line := 1
	for i := 0; i < len(s); {
		switch s[i] {
		case '\n':
			line++
			i++
		case ' ', '\t', '\r':
			i++
		default:
			lines = append(lines, line)
			i += 2
		}
	}
	return lines
}

// score is an ended game's final score as records write it, Black's first.
func score(r othello.Result) string {
	return strconv.Itoa(r.Black) + "-" + strconv.Itoa(r.White)
}

// transcriptExport is /v1/records/export's answer for othello: the
// transcript and, when the game ended, its result.
type transcriptExport struct {
	Transcript string `json:"transcript"`
	End        string `json:"end,omitempty"`
}

// exportEnds are the ends of a game that did not end on the board (see
// match.RecordEnd): won by Black or White (a resignation, the time), a
// draw, unfinished.
var exportEnds = map[string]bool{"B+": true, "W+": true, "draw": true, "*": true}

// defaultMaxMoves bounds the moves to write when the caller gives no bound.
const defaultMaxMoves = 10000

// Export writes the main line as a transcript from the start position,
// passes left out (a square where the side to move must pass puts the
// pass back, as a reader does). Every move of every line is checked, and
// the plies' times and evaluations as for the other games, though a
// transcript holds only the squares: header, comments, times, evaluations
// and variations are not written. The end is the final score when
// neither side can move after the main line (a different end is refused),
// else the given B+, W+, draw or *.
func (othelloGame) Export(g *game.RecordGame, maxMoves int) (any, *game.RecordError) {
	invalid := func(format string, args ...any) *game.RecordError {
		return &game.RecordError{Code: "invalid_field", Message: fmt.Sprintf(format, args...), MoveIndex: -1}
	}
	start := othello.Startpos()
	if g.Start != "" && g.Start != "startpos" {
		sp, err := othello.ParseAny(g.Start)
		if err != nil {
			e := err.(*othello.Error)
			return nil, &game.RecordError{Code: string(e.Code), Message: e.Message, MoveIndex: -1}
		}
		if errs := sp.Validate(); errs != nil {
			return nil, &game.RecordError{Code: string(errs[0].Code), Message: errs[0].Message, MoveIndex: -1}
		}
		if sp.Key() != start.Key() {
			return nil, invalid("othello: a transcript is a game from the start position; this one starts elsewhere")
		}
	}
	count := 0
	if maxMoves <= 0 {
		maxMoves = defaultMaxMoves
	}
	var line func(plies []game.RecordPly, pos othello.Position, where string) ([]othello.Move, othello.Position, *game.RecordError)
	line = func(plies []game.RecordPly, pos othello.Position, where string) ([]othello.Move, othello.Position, *game.RecordError) {
		out := make([]othello.Move, 0, len(plies))
		for i, p := range plies {
			if count++; count > maxMoves {
				return nil, pos, &game.RecordError{Code: "record_too_long", Message: fmt.Sprintf("more than %d moves (all lines together)", maxMoves), MoveIndex: -1}
			}
			if p.SAN != "" || p.KIF != "" {
				return nil, pos, invalid("%s[%d]: san and kif are chess's and shogi's notations; an othello ply is its square", where, i)
			}
			if p.Move != "pass" && pos.MustPass() {
				out = append(out, othello.Pass)
				pos.Play(othello.Pass)
			}
			m, err := pos.CheckMove(p.Move)
			if err != nil {
				e := err.(*othello.Error)
				return nil, pos, &game.RecordError{Code: string(e.Code), Message: fmt.Sprintf("%s[%d]: %s", where, i, e.Message), MoveIndex: i}
			}
			if e := p.Eval; e != nil {
				if (e.CP == nil) == (e.Mate == nil) {
					return nil, pos, invalid("%s[%d].eval: give cp or mate, one of them", where, i)
				}
				if e.Depth < 0 {
					return nil, pos, invalid("%s[%d].eval.depth: negative", where, i)
				}
			}
			if p.TimeMS != nil && (*p.TimeMS < 0 || *p.TimeMS > game.MaxTimeMS) {
				return nil, pos, invalid("%s[%d].time_ms: want 0..%d", where, i, int64(game.MaxTimeMS))
			}
			for k, v := range p.Variations {
				if len(v) == 0 {
					return nil, pos, invalid("%s[%d].variations[%d]: empty", where, i, k)
				}
				if _, _, err := line(v, pos, fmt.Sprintf("%s[%d].variations[%d]", where, i, k)); err != nil {
					return nil, pos, err
				}
			}
			out = append(out, m)
			pos.Play(m)
		}
		return out, pos, nil
	}
	moves, final, err := line(g.Plies, *start, "plies")
	if err != nil {
		return nil, err
	}
	if g.Final != "" && g.Final != final.Token() {
		return nil, game.Mismatch(-1, "final_othello: %q, but the moves reach %s", g.Final, final.Token())
	}
	resp := transcriptExport{Transcript: othello.Transcript(moves), End: g.End}
	if r, over := final.Outcome(); over {
		if resp.End = score(r); g.End != "" && g.End != resp.End {
			return nil, invalid("end: %q, but the game ended on the board %s", g.End, resp.End)
		}
	} else if g.End != "" && !exportEnds[g.End] {
		return nil, invalid("end: %q: an othello game not over on the board ends B+, W+, draw or * (unfinished)", g.End)
	}
	return resp, nil
}
