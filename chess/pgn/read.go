package pgn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/usid/usid/chess"
)

// Parse reads every game of text, each of at most DefaultMaxPlies moves. It
// fails on the first error, which names its line and game.
func Parse(text string) ([]*Game, error) { return ParseMax(text, 0) }

// ParseMax is Parse with each game bounded to maxPlies moves, all its lines
// together (0: DefaultMaxPlies); a longer game is refused with
// CodeTooLong.
func ParseMax(text string, maxPlies int) ([]*Game, error) {
	if maxPlies <= 0 {
		maxPlies = DefaultMaxPlies
	}
	r := &reader{text: text, line: 1, lineStart: true, maxPlies: maxPlies}
	var games []*Game
	for {
		r.skipSpace()
		if r.i >= len(r.text) {
			break
		}
		g, err := r.game(len(games))
		if err != nil {
			return nil, err
		}
		games = append(games, g)
	}
	if len(games) == 0 {
		return nil, &Error{Line: r.line, Code: CodeEmpty, Message: "no game in the text", MoveIndex: -1}
	}
	return games, nil
}

// reader walks the text once; every method advances i, so parsing is
// linear in the text.
type reader struct {
	text      string
	i         int
	line      int
	lineStart bool // i is at the start of a line (for % escape lines)
	gameIndex int
	maxPlies  int // moves a game may have, all lines together
	plies     int // moves of the game so far
}

func (r *reader) errorf(code chess.Code, line int, format string, args ...any) *Error {
	e := &Error{Line: line, Game: r.gameIndex, Code: code, MoveIndex: -1}
	e.Message = fmt.Sprintf(format, args...)
	return e
}

func (r *reader) advance() {
	if r.text[r.i] == '\n' {
		r.line++
		r.lineStart = true
	} else {
		r.lineStart = false
	}
	r.i++
}

// skipSpace skips white space and escape lines ("%" in the first column).
func (r *reader) skipSpace() {
	for r.i < len(r.text) {
		c := r.text[r.i]
		switch {
		case c == '%' && r.lineStart:
			for r.i < len(r.text) && r.text[r.i] != '\n' {
				r.advance()
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			r.advance()
		default:
			return
		}
	}
}

// symbol reads a run of characters that are not white space or PGN
// punctuation.
func (r *reader) symbol() string {
	start := r.i
	for r.i < len(r.text) && !strings.ContainsRune(" \t\n\r\v\f{}()[];$\"", rune(r.text[r.i])) {
		r.advance()
	}
	return r.text[start:r.i]
}

func isResult(s string) bool { return s == "1-0" || s == "0-1" || s == "1/2-1/2" || s == "*" }

// game reads one game: tag pairs, then movetext up to its result.
func (r *reader) game(index int) (*Game, error) {
	r.gameIndex, r.plies = index, 0
	g := &Game{}
	fenLine := r.line
	seen := map[string]bool{} // the names so far: a set, not a search of g.Tags per tag, which is quadratic
	for r.skipSpace(); r.i < len(r.text) && r.text[r.i] == '['; r.skipSpace() {
		line := r.line
		t, err := r.tag()
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, r.errorf(CodeTag, line, "tag %s appears twice", clipped(t.Name))
		}
		seen[t.Name] = true
		if t.Name == "FEN" {
			fenLine = line
		}
		if t.Name == "Result" && !isResult(t.Value) {
			return nil, r.errorf(CodeTag, line, "the Result tag %q is not 1-0, 0-1, 1/2-1/2 or *", clipped(t.Value))
		}
		g.Tags = append(g.Tags, t)
	}
	start, errs := g.Start()
	if errs != nil {
		e := errs[0]
		return nil, r.errorf(e.Code, fenLine, "start position: %s", e.Message)
	}
	return g, r.movetext(g, start)
}

func hasTag(g *Game, name string) bool {
	for _, t := range g.Tags {
		if t.Name == name {
			return true
		}
	}
	return false
}

// tag reads [Name "value"].
func (r *reader) tag() (Tag, error) {
	line := r.line
	r.advance() // [
	r.skipSpace()
	name := r.symbol()
	if !validTagName(name) {
		return Tag{}, r.errorf(CodeTag, line, "tag name %q is not a letter followed by letters, digits or _", clipped(name))
	}
	r.skipSpace()
	if r.i >= len(r.text) || r.text[r.i] != '"' {
		return Tag{}, r.errorf(CodeTag, line, "tag %s has no quoted value", name)
	}
	r.advance()
	var b strings.Builder
	for {
		if r.i >= len(r.text) || r.text[r.i] == '\n' {
			return Tag{}, r.errorf(CodeTag, line, "the value of tag %s is not closed on its line", name)
		}
		c := r.text[r.i]
		r.advance()
		if c == '"' {
			break
		}
		if c < ' ' || c == 0x7f {
			return Tag{}, r.errorf(CodeTag, line, "the value of tag %s holds a control character", name)
		}
		if c == '\\' {
			if r.i >= len(r.text) || (r.text[r.i] != '\\' && r.text[r.i] != '"') {
				return Tag{}, r.errorf(CodeTag, line, "the value of tag %s has a \\ that escapes neither \\ nor \"", name)
			}
			c = r.text[r.i]
			r.advance()
		}
		b.WriteByte(c)
	}
	r.skipSpace()
	if r.i >= len(r.text) || r.text[r.i] != ']' {
		return Tag{}, r.errorf(CodeTag, line, "tag %s is not closed by ]", name)
	}
	r.advance()
	return Tag{Name: name, Value: b.String()}, nil
}

func validTagName(s string) bool {
	if s == "" || len(s) > 255 || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// frame is a line being read: the main line or a variation.
type frame struct {
	plies     []Ply
	pos, prev chess.Position // after the last move, and before it
	before    string         // comment before the line's first move
	// comments are the comments read since the line's last move (or its
	// start), still to be joined: joined once, when the line moves on or
	// ends, so that reading n comments costs n, not n² (a join per
	// comment copies the comments so far).
	comments []string
	target   *string // where they go: the last ply's Comment, before, or the game's Comment
	ply      *Ply    // the ply whose comment target is (its commands are read), or nil
}

// comment keeps a comment for the line's last move (or its start).
func (f *frame) comment(text string) {
	if text != "" {
		f.comments = append(f.comments, text)
	}
}

// flush joins the comments kept into their target; called before the line
// takes a move and when it ends.
func (f *frame) flush() {
	if len(f.comments) > 0 {
		text := strings.Join(f.comments, " ")
		if f.ply != nil {
			text = takeCommands(text, f.ply)
		}
		*f.target = text
		f.comments = f.comments[:0]
	}
}

// movetext reads moves, comments, NAGs and variations up to the result.
func (r *reader) movetext(g *Game, start *chess.Position) error {
	stack := []*frame{{pos: *start, target: &g.Comment}}
	// end ends the main line: its comments, its moves and the result.
	end := func(result string) {
		stack[0].flush()
		g.Moves, g.Result = stack[0].plies, result
	}
	for {
		r.skipSpace()
		line := r.line
		if r.i >= len(r.text) || r.text[r.i] == '[' {
			// No termination marker: accepted at the end of the text only.
			if r.i < len(r.text) {
				return r.errorf(CodeSyntax, line, "a tag pair inside the movetext: the game before it has no result (1-0, 0-1, 1/2-1/2 or *)")
			}
			if len(stack) > 1 {
				return r.errorf(CodeSyntax, line, "the text ends inside a variation")
			}
			result := "*"
			if hasTag(g, "Result") {
				result = g.Tag("Result")
			}
			end(result)
			return nil
		}
		top := stack[len(stack)-1]
		switch c := r.text[r.i]; c {
		case '{':
			r.advance()
			end := strings.IndexByte(r.text[r.i:], '}')
			if end < 0 {
				return r.errorf(CodeSyntax, line, "a comment { is never closed")
			}
			text := r.text[r.i : r.i+end]
			for r.i < len(r.text) && r.text[r.i] != '}' {
				r.advance()
			}
			r.advance()
			top.comment(strings.TrimSpace(text))
		case ';':
			r.advance()
			start := r.i
			for r.i < len(r.text) && r.text[r.i] != '\n' {
				r.advance()
			}
			top.comment(strings.TrimSpace(strings.TrimSuffix(r.text[start:r.i], "\r")))
		case '(':
			r.advance()
			if len(top.plies) == 0 {
				return r.errorf(CodeSyntax, line, "a variation before any move of its line")
			}
			if len(stack) > MaxDepth {
				return r.errorf(CodeSyntax, line, "variations nest deeper than %d", MaxDepth)
			}
			v := &frame{pos: top.prev}
			v.target = &v.before
			stack = append(stack, v)
		case ')':
			r.advance()
			if len(stack) == 1 {
				return r.errorf(CodeSyntax, line, "a ) without its (")
			}
			if len(top.plies) == 0 {
				return r.errorf(CodeSyntax, line, "an empty variation")
			}
			top.flush()
			top.plies[0].Before = top.before
			stack = stack[:len(stack)-1]
			parent := stack[len(stack)-1]
			last := &parent.plies[len(parent.plies)-1]
			last.Variations = append(last.Variations, top.plies)
		case '$':
			r.advance()
			digits := r.symbol()
			n, err := strconv.Atoi(digits)
			if err != nil || n < 0 || n > 255 || digits == "" || digits[0] == '+' || digits[0] == '-' || len(digits) > 3 {
				return r.errorf(CodeSyntax, line, "NAG $%s is not $0..$255", clipped(digits))
			}
			if err := r.nag(top, n, line); err != nil {
				return err
			}
		case '[', ']', '}', '"':
			return r.errorf(CodeSyntax, line, "unexpected %q in the movetext", string(c))
		default:
			tok := r.symbol()
			if isResult(tok) {
				if len(stack) > 1 {
					return r.errorf(CodeSyntax, line, "result %s inside a variation", tok)
				}
				if res := g.Tag("Result"); hasTag(g, "Result") && res != tok {
					return r.errorf(CodeResult, line, "the game ends %s, but its Result tag says %q", tok, clipped(res))
				}
				end(tok)
				return nil
			}
			if err := r.token(top, tok, line); err != nil {
				return err
			}
		}
	}
}

// token reads a move number, a SAN move (with suffix annotations) or both
// run together ("1.e4").
func (r *reader) token(top *frame, tok string, line int) error {
	if tok[0] >= '1' && tok[0] <= '9' && !strings.HasPrefix(tok, "0-0") {
		j := 0
		for j < len(tok) && tok[j] >= '0' && tok[j] <= '9' {
			j++
		}
		k := j
		for k < len(tok) && tok[k] == '.' {
			k++
		}
		if k == j || j > 4 {
			return r.errorf(CodeSyntax, line, "%q is not a move number (12. or 12...) or a move", clipped(tok))
		}
		if tok = tok[k:]; tok == "" {
			return nil
		}
	}
	san := strings.TrimRight(tok, "!?")
	suffix := tok[len(san):]
	m, err := top.pos.ParseSAN(san)
	if err != nil {
		e := err.(*chess.Error)
		pe := r.errorf(e.Code, line, "%s", e.Message)
		pe.MoveIndex = len(top.plies)
		return pe
	}
	if r.plies++; r.plies > r.maxPlies {
		pe := r.errorf(CodeTooLong, line, "the game has more than %d moves, all lines together", r.maxPlies)
		pe.MoveIndex = len(top.plies)
		return pe
	}
	ply := Ply{Move: m, SAN: top.pos.SAN(m)}
	top.prev = top.pos
	top.pos.Play(m)
	top.flush()
	top.plies = append(top.plies, ply)
	top.ply = &top.plies[len(top.plies)-1]
	top.target = &top.ply.Comment
	if suffix != "" {
		n, ok := suffixNAG[suffix]
		if !ok {
			return r.errorf(CodeSyntax, line, "annotation %q is not ! ? !! ?? !? or ?!", clipped(suffix))
		}
		return r.nag(top, n, line)
	}
	return nil
}

// suffixNAG maps move suffix annotations to their NAGs (PGN standard 10).
var suffixNAG = map[string]int{"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}

func (r *reader) nag(top *frame, n, line int) error {
	if len(top.plies) == 0 {
		return r.errorf(CodeSyntax, line, "a NAG before any move of its line")
	}
	p := &top.plies[len(top.plies)-1]
	p.NAGs = append(p.NAGs, n)
	return nil
}

// clipped shortens text quoted in a message.
func clipped(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
