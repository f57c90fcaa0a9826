package pgn

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// roundTrip checks that g writes and reads back to itself, and that
// writing it again gives the same text.
func roundTrip(t *testing.T, g *Game) string {
	t.Helper()
	out, err := Write(g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil || len(back) != 1 {
		t.Fatalf("written game does not read back: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back[0], g) {
		t.Fatalf("written game reads back to another game:\n%s", out)
	}
	if again, _ := Write(back[0]); again != out {
		t.Fatalf("writing is not stable:\n%s\n%s", out, again)
	}
	return out
}

// TestOperaGame: the Opera game with its usual annotations: variations
// nested two deep, comments before and after moves, suffix and $ NAGs.
func TestOperaGame(t *testing.T) {
	games, err := Parse(readFile(t, "opera.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	g := games[0]
	if len(g.Moves) != 33 || g.Result != "1-0" || !strings.HasPrefix(g.Comment, "The Opera Game") {
		t.Fatalf("%d moves, result %s, comment %q", len(g.Moves), g.Result, g.Comment)
	}
	bg4 := g.Moves[5]
	if bg4.SAN != "Bg4" || !reflect.DeepEqual(bg4.NAGs, []int{6}) || bg4.Comment != "This pin\ngives up the centre." ||
		len(bg4.Variations) != 1 || bg4.Variations[0][0].SAN != "exd4" || bg4.Variations[0][0].Comment != "is the main line." {
		t.Errorf("3... Bg4: %+v", bg4)
	}
	bxf3 := g.Moves[7]
	if len(bxf3.Variations) != 1 {
		t.Fatalf("4... Bxf3 has %d variations", len(bxf3.Variations))
	}
	alt := bxf3.Variations[0] // 4... dxe5 5. Qxd8+ Kxd8 6. Nxe5 (6. Bc4 f6 7. Be3) 6... Be6
	if len(alt) != 5 || alt[0].SAN != "dxe5" || alt[1].SAN != "Qxd8+" || alt[3].Comment != "and White has won a pawn." ||
		len(alt[3].Variations) != 1 || len(alt[3].Variations[0]) != 3 || alt[3].Variations[0][2].SAN != "Be3" {
		t.Errorf("4... dxe5 line: %+v", alt)
	}
	for i, want := range map[int][]int{17: {2}, 18: {1}, 22: {18}, 24: {1}, 30: {3}} {
		if !reflect.DeepEqual(g.Moves[i].NAGs, want) {
			t.Errorf("move %d %s: NAGs %v, want %v", i, g.Moves[i].SAN, g.Moves[i].NAGs, want)
		}
	}
	out := roundTrip(t, g)
	for _, want := range []string{"3. d4 Bg4?! { This pin", "(4... dxe5 5. Qxd8+ Kxd8 6. Nxe5 { and White has won a pawn. } (6. Bc4 f6 7. Be3) 6... Be6)", "12. O-O-O $18", "16. Qb8+!!"} {
		if !strings.Contains(strings.ReplaceAll(out, "\n", " "), want) {
			t.Errorf("written without %q:\n%s", want, out)
		}
	}
}

// TestLichessExport: a game as lichess exports it: each move's comment
// holds [%eval] and [%clk], read into the ply's fields; lichess's text
// comments beside them stay text.
func TestLichessExport(t *testing.T) {
	games, err := Parse(readFile(t, "lichess.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	g := games[0]
	if len(g.Moves) != 12 || g.Result != "0-1" {
		t.Fatalf("%d moves, result %s", len(g.Moves), g.Result)
	}
	e4 := g.Moves[0]
	if e4.Comment != "" || e4.Clock == nil || *e4.Clock != 3*time.Minute || e4.Eval == nil || e4.Eval.CP == nil || *e4.Eval.CP != 36 {
		t.Errorf("1. e4: %+v", e4)
	}
	qh5 := g.Moves[2]
	if qh5.Comment != "(0.28 → -0.26) Inaccuracy. Nf3 was best." || *qh5.Eval.CP != -26 || *qh5.Clock != 2*time.Minute+58*time.Second ||
		!reflect.DeepEqual(qh5.NAGs, []int{6}) || len(qh5.Variations) != 1 || len(qh5.Variations[0]) != 3 {
		t.Errorf("2. Qh5: %+v", qh5)
	}
	if last := g.Moves[11]; last.Comment != "White resigns." || *last.Eval.CP != -600 {
		t.Errorf("6... Nxe4: %+v", last)
	}
	out := roundTrip(t, g)
	if !strings.Contains(out, "1. e4 { [%eval 0.36] [%clk 0:03:00] } 1... e5 { [%eval 0.28] [%clk 0:03:00] }") {
		t.Errorf("not written as lichess writes it:\n%s", out)
	}
}

// TestCommands: what is read as a command, and what stays text.
func TestCommands(t *testing.T) {
	ms := func(d time.Duration) *time.Duration { return &d }
	n := func(i int) *int { return &i }
	for _, c := range []struct {
		comment, text string
		clock, emt    *time.Duration
		eval          *Eval
	}{
		{"[%clk 1:05:02.5]", "", ms(time.Hour + 5*time.Minute + 2500*time.Millisecond), nil, nil},
		{"a [%emt 0:00:12] b", "a b", nil, ms(12 * time.Second), nil},
		{"[%eval #-3]", "", nil, nil, &Eval{Mate: n(-3)}},
		{"[%eval -0.05,22]", "", nil, nil, &Eval{CP: n(-5), Depth: 22}},
		{"[%eval 0.175]", "[%eval 0.175]", nil, nil, nil}, // finer than a centipawn
		{"[%clk 0:3:00]", "[%clk 0:3:00]", nil, nil, nil},
		{"[%cal Ge2e4] x", "[%cal Ge2e4] x", nil, nil, nil}, // lichess's arrows stay text
		{"[%clk 0:00:0 ]", "[%clk 0:00:0 ]", nil, nil, nil},
		{"[%[%clk 0:00:01]clk 0:00:02]", "[% clk 0:00:02]", ms(time.Second), nil, nil},
		{"[%eval #0]", "", nil, nil, &Eval{Mate: n(0)}},
		{"[%eval #-0]", "[%eval #-0]", nil, nil, nil},
		{"[%eval #03]", "[%eval #03]", nil, nil, nil},
	} {
		games, err := Parse("1. e4 {" + c.comment + "} *")
		if err != nil {
			t.Fatalf("%q: %v", c.comment, err)
		}
		p := games[0].Moves[0]
		if p.Comment != c.text || !reflect.DeepEqual(p.Clock, c.clock) || !reflect.DeepEqual(p.Elapsed, c.emt) || !reflect.DeepEqual(p.Eval, c.eval) {
			t.Errorf("%q: text %q clock %v emt %v eval %+v", c.comment, p.Comment, p.Clock, p.Elapsed, p.Eval)
		}
		roundTrip(t, games[0])
	}
}

// TestMaxPlies: a game longer than its bound, all lines together, is
// refused with its code; the moves of other games do not count.
func TestMaxPlies(t *testing.T) {
	text := "1. e4 (1. d4 d5) (1. c4) e5 *" // 5 moves
	if _, err := ParseMax(text, 5); err != nil {
		t.Errorf("5 moves within 5: %v", err)
	}
	_, err := ParseMax(text, 4)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLong || e.MoveIndex != 1 {
		t.Errorf("5 moves within 4: %v", err)
	}
	if _, err := ParseMax(text+"\n"+text, 5); err != nil {
		t.Errorf("two games of 5 moves within 5: %v", err)
	}
}
