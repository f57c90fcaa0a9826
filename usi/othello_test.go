package usi

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/othello"
)

// afterF5 is the position after black's f5 from the start: white to move.
const afterF5 = "---------------------------OX------XXX--------------------------W2"

// afterF5D6 is the position after f5 d6: black to move, and the fake UOI
// engine's answer (the last square that flips something, c7) is not legal
// under the other naming (g3), so it shows which naming is used.
const afterF5D6 = "---------------------------OX------OXX-----O--------------------B3"

func TestParseOthello(t *testing.T) {
	tests := []struct {
		d    *Dialect
		line string
		want Message // nil: ErrSyntax
	}{
		{DialectUSIX, "info score 41.0 pv d3", Info{Fields: InfoScore | InfoPV, Score: Score{Scaled: true, Points: 41, Value: 4100}, PV: []string{"d3"}}},
		{DialectUSIX, "info depth 2 score -3.5 pv c4 pass e6", Info{Fields: InfoDepth | InfoScore | InfoPV, Depth: 2,
			Score: Score{Scaled: true, Points: -3.5, Value: -350}, PV: []string{"c4", "pass", "e6"}}},
		{DialectUSIX, "info score 10000 pv a1", Info{Fields: InfoScore | InfoPV, Score: Score{Scaled: true, Points: 10000, Value: 1000000}, PV: []string{"a1"}}},
		{DialectUSIX, "info score 4.1", Info{Fields: InfoScore, Score: Score{Scaled: true, Points: 4.1, Value: 410}}},
		{DialectUSIX, "info score cp 20 pv d3", Info{Fields: InfoScore | InfoPV, Score: Score{Value: 20}, PV: []string{"d3"}}},
		{DialectUSIX, "info string no_search_score -73.0", Info{Fields: InfoString, Text: "no_search_score -73.0"}},
		{DialectUSIX, "info score inf pv d3", Info{Fields: InfoPV, PV: []string{"d3"}}},
		{DialectUSIX, "info score 1e5 pv D3", Info{Fields: InfoPV}},
		{DialectUSIX, "scoretype stones min -64 max 64", ScoreScale{Type: ScoreStones, Min: -64, Max: 64}},
		{DialectUSIX, "scoretype stone min -64 max 64", ScoreScale{Type: ScoreStones, Min: -64, Max: 64}},
		{DialectUSIX, "scoretype WP min 0 max 100", ScoreScale{Type: ScoreWP, Min: 0, Max: 100}},
		{DialectUSIX, "scoretype other min -100.5 max 100", ScoreScale{Type: ScoreOther, Min: -100.5, Max: 100}},
		{DialectUSIX, "scoretype stone min 5 max 5", nil},
		{DialectUSIX, "scoretype stone min 0", nil},
		{DialectUSIX, "scoretype elo min 0 max 1", nil},
		{DialectUSIX, "bestmove pass", BestMove{Move: MovePass}},
		{DialectUSIX, "bestmove pass ponder b6", BestMove{Move: MovePass, Ponder: "b6"}},
		{DialectUSIX, "bestmove resign", BestMove{Move: MoveResign}},
		{DialectUSIX, "bestmove d3 ponder c3", BestMove{Move: "d3", Ponder: "c3"}},
		{DialectUSIX, "bestmove D3", nil},
		{DialectUSIX, "bestmove win", nil},
		{DialectUSIX, "bestmove 7g7f", nil},
		{DialectUSIX, "id auther Y_Hyodo", ID{Author: "Y_Hyodo"}},
		{DialectUSIX, "id name ", ID{}},
		{DialectUSIX, "id author ", ID{}},
		{DialectUSIX, "usiok", USIOK{}},
		// USI keeps its strictness.
		{DialectUSI, "id auther Y_Hyodo", nil},
		{DialectUSI, "id name ", nil},
		{DialectUSI, "scoretype stone min -64 max 64", nil},
		{DialectUSI, "info score 41.0 pv 7g7f", Info{Fields: InfoPV, PV: []string{"7g7f"}}},
		{DialectUSI, "bestmove pass", nil},
		// UOI: the draft's squares are transposed; comments; untyped options.
		{DialectUOI, "uoiok", USIOK{}},
		{DialectUOI, "usiok", nil},
		{DialectUOI, "info score 10 pv d3 c5", Info{Fields: InfoScore | InfoPV, Score: Score{Scaled: true, Points: 10, Value: 1000}, PV: []string{"c4", "e3"}}},
		{DialectUOI, "info score -1000 pv None", Info{Fields: InfoScore, Score: Score{Scaled: true, Points: -1000, Value: -100000}}},
		{DialectUOI, "bestmove a5", BestMove{Move: "e1"}},
		{DialectUOI, "bestmove resign", BestMove{Move: MoveResign}},
		{DialectUOI, "# bestmove a1 would be a joke", nil},
		{DialectUOI, "  #ZeroDivisionError: division by zero", nil},
		{DialectUOI, "option name use_book default true", Option{Name: "use_book", Type: TypeString, Default: "true"}},
		{DialectUOI, "option name book_file default Rbook1.bin", Option{Name: "book_file", Type: TypeString, Default: "Rbook1.bin"}},
		{DialectUOI, "option name max_depth type spin default 4 min 1 max 60",
			Option{Name: "max_depth", Type: TypeSpin, Default: "4", Min: 1, Max: 60, HasMin: true, HasMax: true}},
		{DialectUOI, "option name default x", nil},
		{DialectUOI, "scoretype WP min 0 max 100", ScoreScale{Type: ScoreWP, Min: 0, Max: 100}},
	}
	for _, tt := range tests {
		got, err := tt.d.ParseMessage(tt.line)
		if tt.want == nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("%s %q: got %#v, %v, want ErrSyntax", tt.d.Name, tt.line, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tt.d.Name, tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.d.Name, tt.line, diff)
		}
	}
}

func TestScoreScaleClamp(t *testing.T) {
	s := ScoreScale{Type: ScoreOther, Min: -100, Max: 100}
	for _, tt := range []struct{ in, want Score }{
		{Score{Scaled: true, Points: 10000, Value: 1000000}, Score{Scaled: true, Points: 100, Value: 10000, Bound: LowerBound}},
		{Score{Scaled: true, Points: -250.5, Value: -25050}, Score{Scaled: true, Points: -100, Value: -10000, Bound: UpperBound}},
		{Score{Scaled: true, Points: 41, Value: 4100}, Score{Scaled: true, Points: 41, Value: 4100}},
		{Score{Scaled: true, Points: 101, Value: 10100, Bound: UpperBound}, Score{Scaled: true, Points: 100, Value: 10000, Bound: UpperBound}},
		{Score{Value: 50000}, Score{Value: 50000}}, // centipawns: not in the scale
	} {
		if got := s.Clamp(tt.in); got != tt.want {
			t.Errorf("Clamp(%+v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestOthelloPositionLine(t *testing.T) {
	tok := afterF5
	tests := []struct {
		d    *Dialect
		p    Position
		want string // "": ErrBadCommand
	}{
		{DialectUSIX, Position{}, "position startpos moves"},
		{DialectUSIX, Position{Moves: []string{"f5", "d6", "pass"}}, "position startpos moves f5 d6 pass"},
		{DialectUSIX, Position{SFEN: tok}, "position sfen " + tok + " moves"},
		{DialectUSIX, Position{SFEN: StartOthello[:65]}, "position sfen " + StartOthello[:65] + " moves"},
		{DialectUSIX, Position{SFEN: tok, Moves: []string{"f6"}}, "position sfen " + tok + " moves f6"},
		{DialectUSIX, Position{SFEN: tok[:64] + " W 2"}, ""},
		{DialectUSIX, Position{SFEN: tok[:64] + "W 2"}, ""},
		{DialectUSIX, Position{SFEN: tok[:64] + "W12345"}, ""},
		{DialectUSIX, Position{SFEN: StartSFEN}, ""},
		{DialectUSIX, Position{FEN: "8/8/8/8/8/8/8/8 w - - 0 1"}, ""},
		{DialectUSIX, Position{Moves: []string{"D3"}}, ""},
		{DialectUSIX, Position{Moves: []string{"7g7f"}}, ""},
		{DialectUSIX, Position{Moves: []string{"d3 quit"}}, ""},
		{DialectUOI, Position{}, "position ---------------------------0X------X0---------------------------B"},
		{DialectUOI, Position{SFEN: tok}, "position " + strings.ReplaceAll(tok[:65], "O", "0")},
		{DialectUOI, Position{Moves: []string{"f5"}}, ""},
		{DialectUOI, Position{SFEN: tok[:64] + "X"}, ""},
	}
	for _, tt := range tests {
		got, err := tt.d.PositionLine(tt.p)
		if tt.want == "" {
			if !errors.Is(err, ErrBadCommand) {
				t.Errorf("%s %+v: got %q, %v, want ErrBadCommand", tt.d.Name, tt.p, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %+v: got %q, %v, want %q", tt.d.Name, tt.p, got, err, tt.want)
		}
	}
	if got, err := DialectUOI.PassLine(Position{SFEN: tok}); err != nil || got != "pass "+OFEN(tok) {
		t.Errorf("PassLine: %q, %v", got, err)
	}
	if _, err := DialectUSIX.PassLine(Position{}); !errors.Is(err, ErrBadCommand) {
		t.Errorf("USI-X PassLine: %v, want ErrBadCommand", err)
	}
}

func TestOthelloGoLine(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		d    *Dialect
		g    Go
		want string
	}{
		{DialectUSIX, Go{Clock: &Clock{BTime: ms(1000), WTime: ms(1000), Byoyomi: ms(3000)}}, "go btime 1000 wtime 1000 byoyomi 3000"},
		{DialectUSIX, Go{Clock: &Clock{BInc: ms(10), WInc: ms(10)}}, "go btime 0 wtime 0 binc 10 winc 10"},
		{DialectUSIX, Go{Nodes: 5000}, "go nodes 5000"},
		{DialectUSIX, Go{Infinite: true}, "go infinite"},
		{DialectUSIX, Go{Ponder: true, Clock: &Clock{Byoyomi: ms(1)}}, "go ponder btime 0 wtime 0 byoyomi 1"},
		// Beyond the spec's words, tried by the probe (TriedGo).
		{DialectUSIX, Go{MoveTime: ms(100)}, "go movetime 100"},
		{DialectUSIX, Go{Depth: 3}, "go depth 3"},
		{DialectUSIX, Go{Mate: true}, ""},
		{DialectUSIX, Go{MovesToGo: 3}, ""},
		{DialectUSIX, Go{SearchMoves: []string{"d3"}}, ""},
		{DialectUOI, Go{Clock: &Clock{BTime: ms(5000), WTime: ms(50000)}}, "go btime 5000 wtime 50000"},
		{DialectUOI, Go{Clock: &Clock{BTime: ms(60000), WTime: ms(60000), BInc: ms(1000), WInc: ms(3000)}}, "go btime 60000 wtime 60000 binc 1000 winc 3000"},
		{DialectUOI, Go{Infinite: true}, "go infinite"},
		{DialectUOI, Go{Clock: &Clock{Byoyomi: ms(1000)}}, ""},
		{DialectUOI, Go{Nodes: 10}, ""},
		{DialectUOI, Go{Ponder: true, Infinite: true}, ""},
	}
	for _, tt := range tests {
		got, err := tt.d.GoLine(tt.g)
		if tt.want == "" {
			if !errors.Is(err, ErrBadCommand) {
				t.Errorf("%s %+v: got %q, %v, want ErrBadCommand", tt.d.Name, tt.g, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %+v: got %q, %v, want %q", tt.d.Name, tt.g, got, err, tt.want)
		}
	}
	for _, p := range []string{"movetime", "depth", "mate", "byoyomi"} {
		if DialectUOI.HasGo(p) {
			t.Errorf("UOI has go %s", p)
		}
	}
	if !DialectUSIX.HasGo("byoyomi") || DialectUSIX.HasGo("movetime") || !DialectUSI.HasGo("movetime") || DialectUCI.HasGo("byoyomi") {
		t.Error("HasGo: wrong answers")
	}
}

func TestOFENRoundTrip(t *testing.T) {
	for _, tok := range []string{StartOthello, afterF5, strings.Repeat("X", 63) + "OW", strings.Repeat("-", 64) + "B"} {
		if err := CheckOthelloPosition(tok); err != nil {
			t.Fatalf("%q: %v", tok, err)
		}
		o := OFEN(tok)
		if len(o) != 65 || strings.Contains(o, "O") {
			t.Errorf("OFEN(%q) = %q: want 65 characters, white as 0", tok, o)
		}
		back, err := FromOFEN(o)
		if err != nil || back != tok[:65] {
			t.Errorf("FromOFEN(OFEN(%q)) = %q, %v", tok, back, err)
		}
	}
	for _, bad := range []string{"", StartOthello, strings.Repeat("-", 64) + "X", strings.Repeat("O", 64) + "B"} {
		if _, err := FromOFEN(bad); !errors.Is(err, ErrBadCommand) {
			t.Errorf("FromOFEN(%q): %v, want ErrBadCommand", bad, err)
		}
	}
}

func TestTransposeSquare(t *testing.T) {
	if TransposeSquare("c4") != "d3" || TransposeSquare("d3") != "c4" || TransposeSquare("a8") != "h1" ||
		TransposeSquare("pass") != "pass" || TransposeSquare("resign") != "resign" {
		t.Error("TransposeSquare: wrong names")
	}
	for f := 'a'; f <= 'h'; f++ {
		for r := '1'; r <= '8'; r++ {
			s := string([]rune{f, r})
			if got := TransposeSquare(TransposeSquare(s)); got != s {
				t.Errorf("TransposeSquare twice of %s = %s", s, got)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { TransposeSquare("e6") }); n != 0 {
		t.Errorf("TransposeSquare allocates %v times", n)
	}
}

func TestGameOverStonesLine(t *testing.T) {
	g := GameOverStones{Result: WhiteWin, Reason: ByResign, Black: 10, White: 30}
	if got, err := g.Line(); err != nil || got != "gameover white_win by resign bstone 10 wstone 30" {
		t.Errorf("Line: %q, %v", got, err)
	}
	for _, bad := range []GameOverStones{
		{Result: "win", Reason: ByResign}, {Result: StoneDraw, Reason: "time"},
		{Result: BlackWin, Reason: ByDoublePass, Black: 60, White: 10}, {Result: BlackWin, Reason: ByAbnormal, Black: -1},
	} {
		if _, err := bad.Line(); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%+v: %v, want ErrBadCommand", bad, err)
		}
	}
}

// othelloLines are seeds for the othello parsers.
var othelloLines = []string{
	"info score 41.0 pv d3", "info depth 2 score -3.5 lowerbound pv c4 pass e6", "info score 10000 pv a1",
	"info string no_search_score -73.0", "info score 10 pv None", "scoretype stones min -64 max 64",
	"scoretype WP min 0 max 100", "bestmove pass ponder b6", "bestmove resign", "id auther Y_Hyodo", "id name ",
	"option name use_book default true", "# comment", "uoiok", "usiok", "info score +.5 currmove h8",
}

// FuzzParseOthello: the othello dialects' parsers never panic, fail only
// with ErrSyntax, and what they read prints back to a line that USI-X reads
// the same (a UOI line prints in usid's notation, which is USI-X's).
func FuzzParseOthello(f *testing.F) {
	for _, l := range append(othelloLines, engineLines...) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, d := range []*Dialect{DialectUSIX, DialectUOI} {
			m, err := d.ParseMessage(line)
			if err != nil {
				if !errors.Is(err, ErrSyntax) || m != nil {
					t.Fatalf("%s ParseMessage(%q): got %v, %v, want nil and ErrSyntax", d.Name, line, m, err)
				}
				continue
			}
			printed := m.String()
			m2, err := DialectUSIX.ParseMessage(printed)
			if err != nil {
				t.Fatalf("%s ParseMessage(%q) = %#v prints %q, which does not parse: %v", d.Name, line, m, printed, err)
			}
			if diff := cmp.Diff(m, m2); diff != "" {
				t.Fatalf("%s round trip of %q via %q (-first +second):\n%s", d.Name, line, printed, diff)
			}
		}
	})
}

// FuzzOthelloGo: an othello dialect's go line holds only the parameters the
// dialect has, each with a number where it takes one, or is refused.
func FuzzOthelloGo(f *testing.F) {
	f.Add(int64(1000), int64(0), int64(3000), 0, true, false, false)
	f.Add(int64(-1), int64(5), int64(0), 3, false, true, true)
	f.Fuzz(func(t *testing.T, clock, inc, byo int64, depth int, infinite, ponder, mate bool) {
		ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
		gs := []Go{
			{Clock: &Clock{BTime: ms(clock), WTime: ms(clock), BInc: ms(inc), WInc: ms(inc), Byoyomi: ms(byo)}, Ponder: ponder},
			{Nodes: clock, Depth: depth, Infinite: infinite, Mate: mate},
			{MoveTime: ms(byo), Infinite: infinite, Ponder: ponder},
		}
		for _, d := range []*Dialect{DialectUSIX, DialectUOI} {
			for _, g := range gs {
				line, err := d.GoLine(g)
				if err != nil {
					if !errors.Is(err, ErrBadCommand) {
						t.Fatalf("%s %+v: %v, want ErrBadCommand", d.Name, g, err)
					}
					continue
				}
				f := strings.Fields(line)
				for i := 1; i < len(f); i++ {
					if !d.HasGo(f[i]) && !slices.Contains(d.TriedGo, f[i]) {
						t.Fatalf("%s %q: %q is not a go parameter of the dialect", d.Name, line, f[i])
					}
					if f[i] != "infinite" && f[i] != "ponder" {
						if i++; i >= len(f) || !isNumber(f[i]) {
							t.Fatalf("%s %q: no number after %q", d.Name, line, f[i-1])
						}
					}
				}
			}
		}
	})
}

// FuzzOthelloPosition: an othello position or move list is sent as one clean
// line whose position is a single token, or refused; the ofen reads back.
func FuzzOthelloPosition(f *testing.F) {
	f.Add(StartOthello, "f5 d6 pass")
	f.Add(afterF5, "")
	f.Add(afterF5[:64]+" W 2", "D3")
	f.Add(StartSFEN, "7g7f")
	f.Fuzz(func(t *testing.T, pos, moves string) {
		var mv []string
		if moves != "" {
			mv = strings.Split(moves, " ")
		}
		for _, d := range []*Dialect{DialectUSIX, DialectUOI} {
			line, err := d.PositionLine(Position{SFEN: pos, Moves: mv})
			if err != nil {
				if !errors.Is(err, ErrBadCommand) {
					t.Fatalf("%s: %v, want ErrBadCommand", d.Name, err)
				}
				continue
			}
			checkLine(t, Position{SFEN: pos}, line)
			f := strings.Fields(line)
			if d == DialectUSIX {
				if f[1] == "sfen" && (CheckOthelloPosition(f[2]) != nil || f[3] != "moves") {
					t.Fatalf("USI-X %q: the position is not one token followed by moves", line)
				}
				for _, m := range f[slices.Index(f, "moves")+1:] {
					if !IsOthelloMove(m) {
						t.Fatalf("USI-X %q: %q is not a move", line, m)
					}
				}
			} else if len(f) != 2 || len(f[1]) != 65 {
				t.Fatalf("UOI %q: want position <ofen>", line)
			} else if back, err := FromOFEN(f[1]); err != nil || (pos != "" && back != pos[:65]) {
				t.Fatalf("UOI %q: ofen reads back %q, %v", line, back, err)
			}
		}
	})
}

// TestOthelloAgreesWithRules: usi's ofen and square renaming, and the fake
// engines' board, agree with package othello (the rules usid checks
// positions with) on the positions of random games.
func TestOthelloAgreesWithRules(t *testing.T) {
	for _, s := range []string{"a1", "h1", "c4", "d3", "f5", "a8", "pass"} {
		if want, _ := othello.USIXToUOI(s); TransposeSquare(s) != want && s != MovePass {
			t.Errorf("TransposeSquare(%s) = %s, othello says %s", s, TransposeSquare(s), want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for game := range 20 {
		p := othello.Startpos()
		for ply := 0; !p.IsOver(); ply++ {
			tok := p.Token()
			if err := CheckOthelloPosition(tok); err != nil {
				t.Fatalf("game %d ply %d: %v", game, ply, err)
			}
			if want, _ := othello.TokenToOFEN(tok); OFEN(tok) != want || OFEN(tok) != p.OFEN() {
				t.Fatalf("OFEN(%s) = %s, othello says %s", tok, OFEN(tok), want)
			}
			legal := p.LegalMoveStrings()
			fake, _ := fakeengine.OthelloMoves(tok)
			if !slices.Equal(fake, legal) {
				t.Fatalf("%s: the fake engine's moves %v, othello's %v", tok, fake, legal)
			}
			m, err := p.CheckMove(legal[rng.IntN(len(legal))])
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Play(m); err != nil {
				t.Fatal(err)
			}
		}
	}
}
