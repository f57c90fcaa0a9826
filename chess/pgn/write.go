package pgn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/usid/usid/chess"
)

// lineWidth is where Write wraps movetext (the PGN export format keeps
// lines under 80 columns).
const lineWidth = 80

// Write returns g in PGN: the tags in their order, a blank line, the
// movetext wrapped at 80 columns, ending with the result. Every move is
// replayed from the start position and written in canonical SAN (Ply.SAN is
// not trusted); an illegal move, a comment holding "}", a bad tag name or
// result is an error.
func Write(g *Game) (string, error) {
	var b strings.Builder
	for _, t := range g.Tags {
		if !validTagName(t.Name) || strings.ContainsFunc(t.Value, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return "", fmt.Errorf("pgn: tag %q cannot be written", clipped(t.Name))
		}
		v := strings.ReplaceAll(strings.ReplaceAll(t.Value, `\`, `\\`), `"`, `\"`)
		fmt.Fprintf(&b, "[%s \"%s\"]\n", t.Name, v)
	}
	if len(g.Tags) > 0 {
		b.WriteByte('\n')
	}
	if !isResult(g.Result) {
		return "", fmt.Errorf("pgn: result %q is not 1-0, 0-1, 1/2-1/2 or *", clipped(g.Result))
	}
	start, errs := g.Start()
	if errs != nil {
		return "", fmt.Errorf("pgn: start position: %w", chess.Errors(errs))
	}
	w := &writer{}
	if g.Comment != "" {
		if err := w.comment(g.Comment); err != nil {
			return "", err
		}
	}
	if err := w.line(g.Moves, *start, true); err != nil {
		return "", err
	}
	w.add(g.Result)
	b.WriteString(w.wrap())
	return b.String(), nil
}

type writer struct {
	toks []string
}

func (w *writer) add(s string) { w.toks = append(w.toks, s) }

// comment writes c in braces, or, when it holds "}", as a rest-of-line
// comment; one holding both "}" and a line break cannot be written (the
// reader makes one only by joining a ";" comment to a multi-line one).
func (w *writer) comment(c string) error {
	switch {
	case !strings.Contains(c, "}"):
		w.add("{ " + c + " }")
	case !strings.ContainsAny(c, "\n\r"):
		w.add(";" + c)
	default:
		return ErrComment
	}
	return nil
}

// ErrComment is Write's error for a comment holding both "}" and a line
// break, which PGN cannot write.
var ErrComment = errors.New("pgn: a comment holds both } and a line break, which PGN cannot write")

// line writes plies from pos; number says the next move needs its number
// even if Black plays it (at the start of a line, after a comment or a
// variation).
func (w *writer) line(plies []Ply, pos chess.Position, number bool) error {
	for i, ply := range plies {
		if i == 0 && ply.Before != "" {
			if err := w.comment(ply.Before); err != nil {
				return err
			}
		}
		if pos.Turn() == chess.White {
			w.add(strconv.Itoa(pos.Fullmove()) + ".")
		} else if number {
			w.add(strconv.Itoa(pos.Fullmove()) + "...")
		}
		number = false
		if err := checkLegal(&pos, ply.Move); err != nil {
			return err
		}
		san := pos.SAN(ply.Move)
		nags := ply.NAGs
		// The first NAG, when it is a move's (1-6), as its suffix (e4!?),
		// as lichess writes it; the others as $n.
		if len(nags) > 0 && nags[0] >= 1 && nags[0] <= 6 {
			san += suffixOf[nags[0]]
			nags = nags[1:]
		}
		w.add(san)
		for _, n := range nags {
			if n < 0 || n > 255 {
				return fmt.Errorf("pgn: NAG %d is not 0..255", n)
			}
			w.add("$" + strconv.Itoa(n))
		}
		if cmds := commands(&ply); len(cmds) > 0 {
			// Commands in a comment of their own before the text: a
			// text holding "}" goes on a ";" line of its own.
			w.add("{ " + strings.Join(cmds, " ") + " }")
			number = true
		}
		if ply.Comment != "" {
			if err := w.comment(ply.Comment); err != nil {
				return err
			}
			number = true
		}
		for _, v := range ply.Variations {
			if len(v) == 0 {
				return fmt.Errorf("pgn: an empty variation")
			}
			w.add("(")
			if err := w.line(v, pos, true); err != nil {
				return err
			}
			w.add(")")
			number = true
		}
		pos.Play(ply.Move)
	}
	return nil
}

// suffixOf is the suffix of each move NAG (PGN standard 10), as suffixNAG
// reads them.
var suffixOf = [7]string{1: "!", 2: "?", 3: "!!", 4: "??", 5: "!?", 6: "?!"}

// checkLegal reports whether m is a legal move of pos.
func checkLegal(pos *chess.Position, m chess.Move) error {
	for _, l := range pos.LegalMoves() {
		if l == m {
			return nil
		}
	}
	return fmt.Errorf("pgn: %s is not a legal move in %s", m, pos.FEN())
}

// wrap joins the tokens with spaces, in lines of at most lineWidth columns
// (a longer token stands alone), "(" and ")" hugging what they enclose.
func (w *writer) wrap() string {
	var b strings.Builder
	col := 0
	for i, t := range w.toks {
		sep := i > 0 && w.toks[i-1] != "(" && t != ")"
		switch {
		case i > 0 && w.toks[i-1][0] == ';': // a rest-of-line comment ends its line
			b.WriteByte('\n')
			col = 0
		case sep && col+1+len(t) > lineWidth:
			b.WriteByte('\n')
			col = 0
		case sep:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(t)
		col += len(t)
		if j := strings.LastIndexByte(t, '\n'); j >= 0 {
			col = len(t) - j - 1
		}
	}
	b.WriteByte('\n')
	return b.String()
}
