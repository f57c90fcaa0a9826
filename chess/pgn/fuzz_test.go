package pgn

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics; an error has a line, a code and a
// message; every parsed game writes (unless a comment holds both } and a
// line break) and parses back to the same game.
func FuzzParse(f *testing.F) {
	f.Add(readFile(f, "games.pgn"))
	for _, s := range []string{"1. e4 e5 *", "1. e4 (1. d4 d5) e5 1-0", "{c} 1. e4 $1 ; x\n*", "[FEN \"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1\"]\n1. b8=Q+ *"} {
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
