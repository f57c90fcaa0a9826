package usi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// engineLines are seeds for the parser: what the real engines print, and
// the awkward cases.
var engineLines = []string{
	"Fairy-Stockfish 11.1 LB 64 by Fabian Fichter",
	"id name gpsshogi (smp) vm r3033 wordsize 64 gcc 12.2.0",
	"id author teamgps",
	"option name Debug Log File type string default ",
	"option name UCI_Variant type combo default shogi var 3check var 5check var shogi",
	"option name CSAFile type string default <empty>",
	"option name Contempt type spin default 24 min -100 max 100",
	"option name Clear Hash type button",
	"option name Ponder type check default false",
	"usiok", "readyok\r",
	typicalInfo,
	"info depth 15 seldepth 22 multipv 1 score cp 184 upperbound nodes 525352 nps 349535 hashfull 309 tbhits 0 time 1503 pv 4i5h 5a4b",
	"info depth 3 seldepth 5 time 531 score cp -2843 nodes 334108 nps 628973 pv 2h6h 7g6h B*6f S*7g 6f7g+",
	"info depth 19 currmove G*7g currmovenumber 25",
	"info score mate + lowerbound string mate seen",
	"info refutation 8h2b+ 1c2b currline 2 7g7f 3c3d cpuload 500",
	"info depth 0 score mate 0",
	"bestmove 7g7f ponder 3c3d", "bestmove resign", "bestmove win",
	"checkmate G*8f 9f9g 8f8g 9g9h 8g8h", "checkmate nomate", "checkmate timeout", "checkmate notimplemented",
	"copyprotection ok", "registration error",
	"\x00info\tdepth 1\r\n", "info string \xff\xfe",
}

// FuzzParseMessage checks that the parser never panics, that what fails
// fails with ErrSyntax, and that every message prints back to a line that
// parses to the same message.
func FuzzParseMessage(f *testing.F) {
	for _, l := range engineLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := ParseMessage(line)
		if err != nil {
			if !errors.Is(err, ErrSyntax) || m != nil {
				t.Fatalf("ParseMessage(%q): got %v, %v, want nil and ErrSyntax", line, m, err)
			}
			return
		}
		printed := m.String()
		m2, err := ParseMessage(printed)
		if err != nil {
			t.Fatalf("ParseMessage(%q) = %#v prints %q, which does not parse: %v", line, m, printed, err)
		}
		if diff := cmp.Diff(m, m2); diff != "" {
			t.Fatalf("round trip of %q via %q (-first +second):\n%s", line, printed, diff)
		}
		if again := m2.String(); again != printed {
			t.Fatalf("printing is not stable: got %q, want %q", again, printed)
		}
	})
}

// checkLine fails unless line is one line with no control character.
func checkLine(t *testing.T, c Command, line string) {
	t.Helper()
	for i := 0; i < len(line); i++ {
		if line[i] < 0x20 || line[i] == 0x7f {
			t.Fatalf("%#v.Line() = %q: control character at %d", c, line, i)
		}
	}
}

// FuzzCommand checks that a command built from arbitrary fields either fails
// with ErrBadCommand or is a single clean line that an engine reads back as
// the fields we meant.
func FuzzCommand(f *testing.F) {
	f.Add("USI_Hash", "128", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", "7g7f 3c3d", int64(10))
	f.Add("Debug Log File", "a b", "startpos", "8h2b+ P*5e", int64(0))
	f.Add("a value b", "x\ny", "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1", "7g7f\r\nquit", int64(-1))
	f.Add("Clear Hash", "", "", "", int64(1<<40))
	f.Fuzz(func(t *testing.T, name, value, sfen, moves string, n int64) {
		var mv []string
		if moves != "" {
			mv = strings.Split(moves, " ")
		}
		d := time.Duration(n) * time.Millisecond
		cmds := []Command{
			SetOption{Name: name, Value: value},
			Register{Name: name, Code: value},
			Position{SFEN: sfen, Moves: mv},
			Go{Depth: int(n), Nodes: n, MoveTime: d, SearchMoves: mv},
			Go{Ponder: true, Clock: &Clock{BTime: d, WTime: d, Byoyomi: d}},
			Go{Mate: true, MateTime: d},
			GameOver{Result: GameResult(value)},
		}
		for _, c := range cmds {
			line, err := c.Line()
			if err != nil {
				if !errors.Is(err, ErrBadCommand) {
					t.Fatalf("%#v.Line(): got %v, want ErrBadCommand", c, err)
				}
				continue
			}
			checkLine(t, c, line)
		}

		// An engine reads the name up to "value" and the value after it.
		if line, err := (SetOption{Name: name, Value: value}).Line(); err == nil {
			toks := strings.Fields(strings.TrimPrefix(line, "setoption name "))
			var gotName, gotValue []string
			inValue := false
			for _, tok := range toks {
				switch {
				case !inValue && tok == "value":
					inValue = true
				case inValue:
					gotValue = append(gotValue, tok)
				default:
					gotName = append(gotName, tok)
				}
			}
			if g := strings.Join(gotName, " "); g != name {
				t.Fatalf("%q: engine reads name %q, want %q", line, g, name)
			}
			if g, w := strings.Join(gotValue, " "), strings.Join(strings.Fields(value), " "); g != w {
				t.Fatalf("%q: engine reads value %q, want %q", line, g, w)
			}
		}
		// Every token after "moves" is a move.
		if line, err := (Position{SFEN: sfen, Moves: mv}).Line(); err == nil {
			if _, after, ok := strings.Cut(line, " moves "); ok {
				for _, m := range strings.Split(after, " ") {
					if !IsMove(m) {
						t.Fatalf("%q: %q after moves is not a move", line, m)
					}
				}
			}
		}
	})
}
