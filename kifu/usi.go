package kifu

import (
	"strings"

	"github.com/usid/usid/shogi"
)

// parseUSI reads "position startpos moves ...", "startpos moves ...",
// "sfen <sfen> moves ..." or a bare SFEN; the text may wrap over lines.
func parseUSI(lines []string, max int) (*Record, *Error) {
	type token struct {
		s    string
		line int
	}
	var toks []token
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			toks = append(toks, token{f, i + 1})
		}
	}
	if len(toks) == 0 {
		return nil, errorf(0, CodeRecordFormat, "an empty record")
	}
	r := &Record{Format: FormatUSI}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.s
	}
	text := strings.Join(words, " ")
	if strings.Count(words[0], "/") == 8 {
		r.Format = FormatSFEN
		text = "sfen " + text
	}
	sfen, moves, err := shogi.ParsePositionCommand(text)
	if err != nil {
		e := err.(*shogi.Error)
		return nil, errorf(toks[0].line, e.Code, "%s", e.Message)
	}
	// The moves are the last len(moves) tokens.
	first := len(toks) - len(moves)
	p, perr := startPosition(sfen, toks[0].line)
	if perr != nil {
		return nil, perr
	}
	b := newBuilder(p, p.MoveNumber(), max)
	for i, m := range moves {
		if err := b.play(m, toks[first+i].line); err != nil {
			return nil, err
		}
	}
	b.finish(r, &commentText{})
	return r, nil
}
