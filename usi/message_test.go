package usi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		line string
		want Message
	}{
		{"id name Fairy-Stockfish 11.1 LB 64", ID{Name: "Fairy-Stockfish 11.1 LB 64"}},
		{"id author Fabian Fichter\r", ID{Author: "Fabian Fichter"}},
		{"usiok", USIOK{}},
		{"readyok\r", ReadyOK{}},
		{"  \treadyok  ", ReadyOK{}},
		{"joho readyok", ReadyOK{}}, // unknown leading words are skipped
		{"option name USI_Hash type spin default 16 min 8 max 1024",
			Option{Name: "USI_Hash", Type: TypeSpin, Default: "16", Min: 8, Max: 1024, HasMin: true, HasMax: true}},
		{"option name Contempt type spin default 24 min -100 max 100",
			Option{Name: "Contempt", Type: TypeSpin, Default: "24", Min: -100, Max: 100, HasMin: true, HasMax: true}},
		{"option name Nullmove type check default true", Option{Name: "Nullmove", Type: TypeCheck, Default: "true"}},
		{"option name Style type combo default Normal var Solid var Normal var Risky",
			Option{Name: "Style", Type: TypeCombo, Default: "Normal", Vars: []string{"Solid", "Normal", "Risky"}}},
		{"option name ResetLearning type button", Option{Name: "ResetLearning", Type: TypeButton}},
		{"option name Clear Hash type button", Option{Name: "Clear Hash", Type: TypeButton}},
		{"option name LearningFile type filename default <empty>", Option{Name: "LearningFile", Type: TypeFilename}},
		{"option name BookFile type string default public.bin", Option{Name: "BookFile", Type: TypeString, Default: "public.bin"}},
		{"option name BookFile type string default my  book.bin", Option{Name: "BookFile", Type: TypeString, Default: "my  book.bin"}},
		// fairy-stockfish: spaces in names, an empty default with a trailing space.
		{"option name Debug Log File type string default ", Option{Name: "Debug Log File", Type: TypeString}},
		{"option name Skill Level type spin default 20 min -20 max 20",
			Option{Name: "Skill Level", Type: TypeSpin, Default: "20", Min: -20, Max: 20, HasMin: true, HasMax: true}},
		{"option name a type b type check default false", Option{Name: "a type b", Type: TypeCheck, Default: "false"}},
		{"option\tname  Hash\ttype spin default 16 min 1  max 64\r\n",
			Option{Name: "Hash", Type: TypeSpin, Default: "16", Min: 1, Max: 64, HasMin: true, HasMax: true}},
		{"bestmove 7g7f", BestMove{Move: "7g7f"}},
		{"bestmove 8h2b+ ponder 3a2b", BestMove{Move: "8h2b+", Ponder: "3a2b"}},
		{"bestmove P*5e ponder", BestMove{Move: "P*5e"}},
		{"bestmove resign", BestMove{Move: MoveResign}},
		{"bestmove win", BestMove{Move: MoveWin}},
		{"checkmate G*8f 9f9g 8f8g 9g9h 8g8h", Checkmate{Result: MateFound, Moves: []string{"G*8f", "9f9g", "8f8g", "9g9h", "8g8h"}}},
		{"checkmate nomate", Checkmate{Result: NoMate}},
		{"checkmate timeout", Checkmate{Result: MateTimeout}},
		{"checkmate notimplemented", Checkmate{Result: MateNotImplemented}},
		{"copyprotection checking", CopyProtection{Status: "checking"}},
		{"copyprotection error", CopyProtection{Status: "error"}},
		{"registration ok", Registration{Status: "ok"}},
		{"info depth 1 seldepth 1 multipv 1 score cp 239 nodes 30 nps 15000 tbhits 0 time 2 pv 7g7f",
			Info{Fields: InfoDepth | InfoSelDepth | InfoMultiPV | InfoScore | InfoNodes | InfoNPS | InfoTime | InfoPV,
				Depth: 1, SelDepth: 1, MultiPV: 1, Score: Score{Value: 239}, Nodes: 30, NPS: 15000, Time: 2, PV: []string{"7g7f"}}},
		// time is time, not seldepth (a bug seen in an existing Go client).
		{"info depth 3 seldepth 5 time 531 score cp -2843 nodes 334108 nps 628973 pv 2h6h 7g6h B*6f S*7g 6f7g+",
			Info{Fields: InfoDepth | InfoSelDepth | InfoTime | InfoScore | InfoNodes | InfoNPS | InfoPV,
				Depth: 3, SelDepth: 5, Time: 531, Score: Score{Value: -2843}, Nodes: 334108, NPS: 628973,
				PV: []string{"2h6h", "7g6h", "B*6f", "S*7g", "6f7g+"}}},
		{"info depth 15 seldepth 22 multipv 1 score cp 184 upperbound nodes 525352 nps 349535 hashfull 309 tbhits 0 time 1503 pv 4i5h 5a4b",
			Info{Fields: InfoDepth | InfoSelDepth | InfoMultiPV | InfoScore | InfoNodes | InfoNPS | InfoHashfull | InfoTime | InfoPV,
				Depth: 15, SelDepth: 22, MultiPV: 1, Score: Score{Value: 184, Bound: UpperBound}, Nodes: 525352,
				NPS: 349535, Hashfull: 309, Time: 1503, PV: []string{"4i5h", "5a4b"}}},
		{"info score cp 5 lowerbound", Info{Fields: InfoScore, Score: Score{Value: 5, Bound: LowerBound}}},
		{"info depth 2 score mate 5 pv G*8f 9f9g 8f8g 9g9h 8g8h",
			Info{Fields: InfoDepth | InfoScore | InfoPV, Depth: 2, Score: Score{Mate: true, Value: 5},
				PV: []string{"G*8f", "9f9g", "8f8g", "9g9h", "8g8h"}}},
		{"info score mate -6", Info{Fields: InfoScore, Score: Score{Mate: true, Value: -6}}},
		{"info score mate +", Info{Fields: InfoScore, Score: Score{Mate: true, MateSign: '+'}}},
		{"info score mate - pv 7g7f", Info{Fields: InfoScore | InfoPV, Score: Score{Mate: true, MateSign: '-'}, PV: []string{"7g7f"}}},
		{"info depth 0 score mate 0", Info{Fields: InfoDepth | InfoScore, Score: Score{Mate: true}}},
		{"info depth 19 currmove G*7g currmovenumber 25",
			Info{Fields: InfoDepth | InfoCurrMove | InfoCurrMoveNumber, Depth: 19, CurrMove: "G*7g", CurrMoveNumber: 25}},
		{"info nodes 120000 nps 116391 hashfull 104 cpuload 950",
			Info{Fields: InfoNodes | InfoNPS | InfoHashfull | InfoCPULoad, Nodes: 120000, NPS: 116391, Hashfull: 104, CPULoad: 950}},
		{"info string 7g7f (70%)", Info{Fields: InfoString, Text: "7g7f (70%)"}},
		{"info depth 4 string  hello   world \r", Info{Fields: InfoDepth | InfoString, Depth: 4, Text: "hello   world"}},
		{"info refutation 8h2b+ 1c2b", Info{Fields: InfoRefutation, Refutation: []string{"8h2b+", "1c2b"}}},
		{"info currline 1 7g7f 3c3d", Info{Fields: InfoCurrLine, CurrLineCPU: 1, CurrLine: []string{"7g7f", "3c3d"}}},
		{"info currline 7g7f", Info{Fields: InfoCurrLine, CurrLine: []string{"7g7f"}}},
		// YaneuraOu ends a pv with a marker; a keyword after a pv is still read.
		{"info depth 9 pv 7g7f 3c3d rep_draw", Info{Fields: InfoDepth | InfoPV, Depth: 9, PV: []string{"7g7f", "3c3d"}}},
		{"info pv 7g7f depth 3", Info{Fields: InfoDepth | InfoPV, Depth: 3, PV: []string{"7g7f"}}},
		// Malformed values leave the field unset without eating the next one.
		{"info depth x nodes 5", Info{Fields: InfoNodes, Nodes: 5}},
		{"info depth nodes 5", Info{Fields: InfoNodes, Nodes: 5}},
		{"info depth -3 nodes 5", Info{Fields: InfoNodes, Nodes: 5}},
		{"info score cp pv 7g7f", Info{Fields: InfoPV, PV: []string{"7g7f"}}},
		{"info currmove bogus depth 2", Info{Fields: InfoDepth, Depth: 2}},
		{"info", Info{}},
		{"info\ttbhits 0  depth 7\r", Info{Fields: InfoDepth, Depth: 7}},
	}
	for _, tt := range tests {
		got, err := ParseMessage(tt.line)
		if err != nil {
			t.Errorf("ParseMessage(%q): got error %v, want %v", tt.line, err, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseMessage(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestParseMessageErrors(t *testing.T) {
	for _, line := range []string{
		"", "   ", "\r", "Fairy-Stockfish 11.1 LB 64 by Fabian Fichter", "warning stop ignored",
		"bestmove", "bestmove (none)", "bestmove 7g7", "checkmate", "checkmate foo", "checkmate G*8f resign", "checkmate 7g7f x",
		"id", "id name", "id version 3", "option", "option name", "option name X", "option name type spin",
		"option name X type integer", "copyprotection maybe", "registration",
	} {
		if got, err := ParseMessage(line); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMessage(%q): got %#v, %v, want ErrSyntax", line, got, err)
		}
	}
}

func TestMessageString(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{"info depth 1 seldepth 1 multipv 1 score cp 239 nodes 30 nps 15000 tbhits 0 time 2 pv 7g7f",
			"info depth 1 seldepth 1 multipv 1 score cp 239 nodes 30 nps 15000 time 2 pv 7g7f"},
		{"info string a  b", "info string a  b"},
		{"info score mate + lowerbound", "info score mate + lowerbound"},
		{"option name Debug Log File type string default ", "option name Debug Log File type string default <empty>"},
		{"option name Style type combo default Normal var Solid var Normal", "option name Style type combo default Normal var Solid var Normal"},
		{"bestmove 7g7f ponder 3c3d", "bestmove 7g7f ponder 3c3d"},
		{"checkmate nomate", "checkmate nomate"},
		{"checkmate G*8f 9f9g", "checkmate G*8f 9f9g"},
		{"id name X Y", "id name X Y"},
	}
	for _, tt := range tests {
		m, err := ParseMessage(tt.line)
		if err != nil {
			t.Fatalf("ParseMessage(%q): %v", tt.line, err)
		}
		if got := m.String(); got != tt.want {
			t.Errorf("ParseMessage(%q).String(): got %q, want %q", tt.line, got, tt.want)
		}
	}
}

// typicalInfo is the line the parser's speed target is stated for.
const typicalInfo = "info depth 20 seldepth 25 multipv 1 score cp 35 nodes 1234567 nps 987654 hashfull 300 time 1250 pv 7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b"

func BenchmarkParseInfo(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalInfo)))
	for b.Loop() {
		m, err := ParseMessage(typicalInfo)
		if err != nil || len(m.(Info).PV) != 8 {
			b.Fatalf("got %v, %v", m, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkParseBestMove(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMessage("bestmove 7g7f ponder 3c3d"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCommandPosition(b *testing.B) {
	moves := strings.Fields("7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d P*2c 2d2f 3a4b")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Position{Moves: moves}).Line(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchHandoff: an info line from the engine's stdout reader to
// the search's reader, one line at a time as they come in a live analysis
// (each line arrives at an idle reader). next: queued, the reader's
// goroutine woken in Next (and, to pace the lines, the pusher woken back
// once it has the line); deliver: Deliver's function called on the
// pusher's goroutine.
//
//	go test -run '^$' -bench SearchHandoff ./usi/
func BenchmarkSearchHandoff(b *testing.B) {
	m, err := ParseMessage(typicalInfo)
	if err != nil {
		b.Fatal(err)
	}
	in := m.(Info)
	e := &Engine{cfg: Config{InfoBuffer: 128}}
	b.Run("next", func(b *testing.B) {
		s := newSearch(e, false)
		got := make(chan struct{})
		go func() {
			for _, ok := s.Next(context.Background()); ok; _, ok = s.Next(context.Background()) {
				got <- struct{}{}
			}
		}()
		for b.Loop() {
			s.push(in, false)
			<-got
		}
		s.finish(Result{}, nil)
	})
	b.Run("deliver", func(b *testing.B) {
		s := newSearch(e, false)
		n := 0
		s.Deliver(func(*Info, bool) { n++ })
		for b.Loop() {
			s.push(in, false)
		}
		s.finish(Result{}, nil)
		if n == 0 {
			b.Fatal("nothing delivered")
		}
	})
}
