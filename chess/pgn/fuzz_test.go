package pgn

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics (variations nested, comment commands and
// NAGs written as suffixes included); an error has a line, a code and a
// message; every parsed game writes (unless a comment holds both } and a
// line break) and parses back to the same game.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"games.pgn", "opera.pgn", "lichess.pgn"} {
		f.Add(readFile(f, name))
	}
	for _, s := range []string{"1. e4 e5 *", "1. e4 (1. d4 d5) e5 1-0", "{c} 1. e4 $1 ; x\n*", "[FEN \"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1\"]\n1. b8=Q+ *",
		"1. e4 e5 (1... c5 2. Nf3 (2. c3 d5 (2... Nf6)) 2... d6) (1... e6!? $14) 2. Nf3?! *",
		"1. e4 { [%eval 0.36] [%clk 0:03:00] } 1... e5 { x [%emt 0:00:02.5] [%eval #-3,20] [%cal Ge2e4] } *",
		"1. d4 {[%clk 0:00:01]} ; text } with a brace\n(1. e4 {[%eval -0.05]}) *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		games, err := Parse(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Code == "" || e.Message == "" {
				t.Fatalf("Parse(%q): bad error %#v", text, err)
			}
			return
		}
		for _, g := range games {
			out, err := Write(g)
			if errors.Is(err, ErrComment) {
				continue
			}
			if err != nil {
				t.Fatalf("Write after Parse(%q): %v", text, err)
			}
			back, err := Parse(out)
			if err != nil || len(back) != 1 {
				t.Fatalf("Parse(%q) then Write gave %q, which does not parse: %v", text, out, err)
			}
			if !reflect.DeepEqual(back[0], g) {
				t.Fatalf("Parse(%q) then Write gave %q, which parses to another game", text, out)
			}
		}
	})
}
