package pgn

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/usid/usid/chess"
)

func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseGames(t *testing.T) {
	games, err := Parse(readFile(t, "games.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	if len(games) != 4 {
		t.Fatalf("%d games, want 4", len(games))
	}
	g := games[0]
	if g.Tag("White") != "Fischer, Robert J." || g.Result != "1/2-1/2" || len(g.Moves) != 85 {
		t.Errorf("game 1: white %q, result %q, %d plies", g.Tag("White"), g.Result, len(g.Moves))
	}
	if m := g.Moves[5]; m.SAN != "a6" || m.Comment != "This opening is called the Ruy Lopez." {
		t.Errorf("game 1 ply 5: %+v", m)
	}
	// Variations, NAGs and suffix annotations.
	g = games[1]
	if len(g.Moves) != 5 || g.Comment != "A game with variations" {
		t.Fatalf("game 2: %d plies, comment %q", len(g.Moves), g.Comment)
	}
	e5 := g.Moves[1]
	if len(e5.Variations) != 2 || e5.Variations[0][0].SAN != "c5" || e5.Variations[1][0].SAN != "e6" ||
		len(e5.Variations[0]) != 3 || !reflect.DeepEqual(e5.NAGs, []int{1}) {
		t.Errorf("game 2, 1...e5: %+v", e5)
	}
	if nf3 := e5.Variations[0][1]; len(nf3.Variations) != 1 || nf3.Variations[0][0].SAN != "Nc3" || nf3.Variations[0][0].Before != "closed" || nf3.Variations[0][0].Comment != "Chigorin" {
		t.Errorf("nested variation: %+v", nf3)
	}
	if !reflect.DeepEqual(g.Moves[2].NAGs, []int{5, 14}) {
		t.Errorf("2. Nf3 NAGs %v, want [5 14]", g.Moves[2].NAGs)
	}
	// A FEN start and Chess960 castling.
	if g = games[2]; g.Moves[0].SAN != "O-O" || g.Result != "*" {
		t.Errorf("game 3: %+v", g.Moves[0])
	}
	if g = games[3]; g.Result != "1-0" || g.Moves[len(g.Moves)-1].SAN != "Qxf7#" {
		t.Errorf("game 4: result %q, last %q", g.Result, g.Moves[len(g.Moves)-1].SAN)
	}
}

// TestRoundTrip: Parse(Write(g)) gives g back, and writing is stable.
func TestRoundTrip(t *testing.T) {
	games, err := Parse(readFile(t, "games.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range games {
		out, err := Write(g)
		if err != nil {
			t.Fatalf("game %d: %v", i, err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("game %d: writing gave\n%s\nwhich does not parse: %v", i, out, err)
		}
		if len(back) != 1 || !reflect.DeepEqual(back[0], g) {
			t.Fatalf("game %d changed on the round trip:\n%s", i, out)
		}
		again, _ := Write(back[0])
		if again != out {
			t.Errorf("game %d: writing is not stable:\n%s\nthen\n%s", i, out, again)
		}
		for _, l := range strings.Split(out, "\n") {
			if len(l) > lineWidth && !strings.HasPrefix(l, "[") && !strings.Contains(l, "{") {
				t.Errorf("game %d: line longer than %d: %q", i, lineWidth, l)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		text string
		code chess.Code
		line int
		move int
	}{
		{"", CodeEmpty, 1, -1},
		{"1. e4 e5 2. Ke3 *", chess.CodeSANIllegal, 1, 2},
		{"1. e4 e5\n2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. Nd4 Nd4 *", chess.CodeSANIllegal, 2, 9},
		{"[FEN \"4k3/8/8/8/8/2N1N3/8/4K3 w - - 0 1\"]\n\nNd5 *", chess.CodeSANAmbiguous, 3, 0},
		{"1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# Ke7 1-0", chess.CodeSANIllegal, 1, 7},
		{"[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n*", chess.CodeNoKing, 1, -1},
		{"[Variant \"Crazyhouse\"]\n*", CodeVariant, 1, -1},
		{"[White \"a\"]\n[White \"b\"]\n*", CodeTag, 2, -1},
		{"[White \"a]\n*", CodeTag, 1, -1},
		{"[White a]\n*", CodeTag, 1, -1},
		{"[1White \"a\"]\n*", CodeTag, 1, -1},
		{"[Result \"1-0\"]\n1. e4 0-1", CodeResult, 2, -1},
		{"[Result \"\"]", CodeTag, 1, -1},
		{"[Site \"a\tb\"]\n*", CodeTag, 1, -1},
		{"[Result \"1-0 \"]\n1. e4 1-0", CodeTag, 1, -1},
		{"1. e4 (e5) *", CodeSyntax, 1, -1}, // not an error? see below
		{"(1. e4) *", CodeSyntax, 1, -1},
		{"1. e4 ( ) *", CodeSyntax, 1, -1},
		{"1. e4 e5 ) *", CodeSyntax, 1, -1},
		{"1. e4 (1. d4 *", CodeSyntax, 1, -1},
		{"1. e4 {never closed", CodeSyntax, 1, -1},
		{"$1 1. e4 *", CodeSyntax, 1, -1},
		{"1. e4 $256 *", CodeSyntax, 1, -1},
		{"1. e4!!! *", CodeSyntax, 1, -1},
		{"1. e4 e5\n[Event \"next\"]\n*", CodeSyntax, 2, -1},
		{"1. e4 (1. d4", CodeSyntax, 1, -1},
		{"1. e4 e5 2. Nf3 Nc6 3. --", chess.CodeSANSyntax, 1, 4},
		{"12345. e4 *", CodeSyntax, 1, -1},
	}
	for _, c := range cases {
		if c.text == "1. e4 (e5) *" {
			// e5 as an alternative to 1. e4 is White's e5: illegal.
			c.code, c.move = chess.CodeSANIllegal, 0
		}
		_, err := Parse(c.text)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.Line != c.line || e.MoveIndex != c.move || e.Message == "" {
			t.Errorf("Parse(%q) = %v, want %s at line %d, move %d", c.text, err, c.code, c.line, c.move)
		}
	}
}

func TestLenient(t *testing.T) {
	for _, text := range []string{
		"1. e4 e5",                  // no termination marker at the end
		"1.e4 e5 2.Nf3 *",           // numbers stuck to moves
		"% an escape line\n1. e4 *", // escape lines
		"1. e4 ; rest of line } with a brace\ne5 *",
		"[FEN \"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1\"]\n1. 0-0 0-0-0 *",
		"[FEN \"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1\"]\n1. b8Q+ *",
	} {
		games, err := Parse(text)
		if err != nil || len(games) != 1 {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if _, err := Write(games[0]); err != nil {
			t.Errorf("Write after Parse(%q): %v", text, err)
		}
	}
}

// TestBounds: nesting deeper than MaxDepth is refused; a long game and a
// long comment are read whole.
func TestBounds(t *testing.T) {
	deep := "1. e4 e5 " + strings.Repeat("(1... d5 ", MaxDepth+1) + strings.Repeat(")", MaxDepth+1) + " *"
	if _, err := Parse(deep); err == nil || err.(*Error).Code != CodeSyntax {
		t.Errorf("variations %d deep: %v, want %s", MaxDepth+1, err, CodeSyntax)
	}
	ok := "1. e4 e5 " + strings.Repeat("(1... d5 ", MaxDepth) + strings.Repeat(")", MaxDepth) + " *"
	if _, err := Parse(ok); err != nil {
		t.Errorf("variations %d deep: %v", MaxDepth, err)
	}
	var b strings.Builder
	for i := 0; i < 500; i++ { // 2000 plies of knights going out and back
		b.WriteString("Nf3 Nf6 Ng1 Ng8 ")
	}
	b.WriteString("{" + strings.Repeat("x", 1<<20) + "} *")
	games, err := Parse(b.String())
	if err != nil || len(games[0].Moves) != 2000 || len(games[0].Moves[1999].Comment) != 1<<20 {
		t.Fatalf("long game: %v", err)
	}
	if _, err := Write(games[0]); err != nil {
		t.Fatal(err)
	}
}
