package usi

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const stockfishPath = "/usr/games/stockfish"

func TestUCILines(t *testing.T) {
	d := DialectUCI
	for _, tt := range []struct {
		cmd  func() (string, error)
		want string
	}{
		{func() (string, error) { return d.PositionLine(Position{Moves: []string{"e2e4", "e7e5"}}) }, "position startpos moves e2e4 e7e5"},
		{func() (string, error) {
			return d.PositionLine(Position{FEN: "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Moves: []string{"e1g1", "e8c8", "a1a8"}})
		}, "position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1g1 e8c8 a1a8"},
		{func() (string, error) { return d.PositionLine(Position{FEN: "4k3/8/8/8/8/8/8/4K2R w H - 0 1"}) }, "position fen 4k3/8/8/8/8/8/8/4K2R w H - 0 1"},
		{func() (string, error) { return d.GoLine(Go{Mate: true, MateMoves: 3}) }, "go mate 3"},
		{func() (string, error) {
			return d.GoLine(Go{Clock: &Clock{BTime: time.Second, WTime: 2 * time.Second, BInc: 100 * time.Millisecond, WInc: 100 * time.Millisecond}, MovesToGo: 20})
		}, "go btime 1000 wtime 2000 binc 100 winc 100 movestogo 20"},
		{func() (string, error) { return d.GoLine(Go{Clock: &Clock{BTime: time.Second, WTime: time.Second}}) }, "go btime 1000 wtime 1000"},
		{func() (string, error) { return d.GoLine(Go{Ponder: true, Nodes: 20000}) }, "go ponder nodes 20000"},
	} {
		got, err := tt.cmd()
		if err != nil || got != tt.want {
			t.Errorf("got %q, %v, want %q", got, err, tt.want)
		}
	}
	for name, cmd := range map[string]func() (string, error){
		"sfen in uci":     func() (string, error) { return d.PositionLine(Position{SFEN: StartSFEN}) },
		"fen in usi":      func() (string, error) { return DialectUSI.PositionLine(Position{FEN: "8/8/8/8/8/8/8/8 w - - 0 1"}) },
		"bad fen":         func() (string, error) { return d.PositionLine(Position{FEN: "8/8/8 w - - 0 1"}) },
		"newline in fen":  func() (string, error) { return d.PositionLine(Position{FEN: "8/8/8/8/8/8/8/8 w - -\nquit"}) },
		"usi move in uci": func() (string, error) { return d.PositionLine(Position{Moves: []string{"7g7f"}}) },
		"byoyomi in uci":  func() (string, error) { return d.GoLine(Go{Clock: &Clock{Byoyomi: time.Second}}) },
		"mate time":       func() (string, error) { return d.GoLine(Go{Mate: true, MateTime: time.Second}) },
		"mate moves usi":  func() (string, error) { return DialectUSI.GoLine(Go{Mate: true, MateMoves: 1}) },
	} {
		if l, err := cmd(); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: got %q, %v, want ErrBadCommand", name, l, err)
		}
	}
}

func TestUCIMessages(t *testing.T) {
	d := DialectUCI
	for _, tt := range []struct{ line, want string }{
		{"uciok", "usiok"},
		{"bestmove (none)", "bestmove (none)"},
		{"bestmove 0000", "bestmove (none)"},
		{"bestmove e7e8q ponder a2a1n", "bestmove e7e8q ponder a2a1n"},
		{"info depth 20 seldepth 28 multipv 1 score cp 31 wdl 95 895 10 nodes 20000 nps 600000 hashfull 3 tbhits 0 time 33 pv e2e4 e7e5 g1f3",
			"info depth 20 seldepth 28 multipv 1 score cp 31 nodes 20000 nps 600000 hashfull 3 time 33 wdl 95 895 10 pv e2e4 e7e5 g1f3"},
		{"info depth 5 score mate -2 upperbound pv h7h8", "info depth 5 score mate -2 upperbound pv h7h8"},
		{"info depth 3 score cp 12 lowerbound nodes 9", "info depth 3 score cp 12 lowerbound nodes 9"},
	} {
		m, err := d.ParseMessage(tt.line)
		if err != nil || m.String() != tt.want {
			t.Errorf("%q: got %v, %v, want %q", tt.line, m, err, tt.want)
		}
	}
	for _, line := range []string{"checkmate e2e4", "bestmove 7g7f", "bestmove resign", "usiok"} {
		if m, err := d.ParseMessage(line); err == nil {
			t.Errorf("%q: got %v, want a syntax error in UCI", line, m)
		}
	}
	if m, err := DialectUSI.ParseMessage("bestmove (none)"); err == nil {
		t.Errorf("USI bestmove (none): got %v", m)
	}
}

// TestStockfish drives Debian's stockfish through Engine: handshake,
// ucinewgame, a search, a mate search answered by bestmove, and a position
// with no legal move answered by bestmove (none).
func TestStockfish(t *testing.T) {
	needBinary(t, stockfishPath)
	e := startEngine(t, Config{Path: stockfishPath, Dialect: DialectUCI})
	if hash, ok := e.OptionValue("Hash"); e.ID().Name == "" || !ok || hash == "" {
		t.Errorf("id %+v, Hash %q", e.ID(), hash)
	}
	if err := e.IsReady(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := e.NewGame(); err != nil {
		t.Fatal(err)
	}
	if err := e.GameOver(Draw); err != nil { // nothing to send in UCI
		t.Fatal(err)
	}
	search := func(pos Position, g Go) (Result, []Info) {
		s, err := e.Go(ctxTimeout(t, 30*time.Second), pos, g)
		if err != nil {
			t.Fatal(err)
		}
		var infos []Info
		for {
			in, ok := s.Next(t.Context())
			if !ok {
				break
			}
			infos = append(infos, in)
		}
		res, err := s.Wait(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return res, infos
	}
	res, infos := search(Position{Moves: []string{"e2e4"}}, Go{Nodes: 20000})
	if res.BestMove == nil || !IsUCIMove(res.BestMove.Move) || len(infos) == 0 || !infos[len(infos)-1].Has(InfoScore) {
		t.Errorf("nodes search: %+v, %d infos", res.BestMove, len(infos))
	}
	res, infos = search(Position{FEN: "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"}, Go{Mate: true, MateMoves: 1})
	if res.BestMove == nil || res.BestMove.Move != "d1d8" || !infos[len(infos)-1].Score.Mate || infos[len(infos)-1].Score.Value != 1 {
		t.Errorf("go mate 1: %+v, last info %+v", res.BestMove, infos[len(infos)-1])
	}
	res, _ = search(Position{FEN: "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"}, Go{Depth: 5})
	if res.BestMove == nil || res.BestMove.Move != MoveNone {
		t.Errorf("mated: %+v, want bestmove (none)", res.BestMove)
	}
}

// FuzzParseUCIMessage: every line either fails with ErrSyntax or parses to a
// message that prints back to a line parsing to the same message, in UCI.
func FuzzParseUCIMessage(f *testing.F) {
	for _, l := range []string{"uciok", "bestmove (none)", "bestmove e7e8q ponder a2a1n", "bestmove 0000",
		"info depth 20 seldepth 28 multipv 1 score cp 31 wdl 95 895 10 nodes 20000 nps 600000 hashfull 3 tbhits 0 time 33 pv e2e4 e7e5",
		"info depth 5 score mate -2 upperbound pv h7h8", "info wdl 1 2", "option name UCI_Chess960 type check default false",
		"id name Stockfish 15.1", "info string NNUE evaluation using nn-ad9b42354671.nnue enabled"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := DialectUCI.ParseMessage(line)
		if err != nil {
			if !errors.Is(err, ErrSyntax) || m != nil {
				t.Fatalf("ParseMessage(%q): got %v, %v, want nil and ErrSyntax", line, m, err)
			}
			return
		}
		printed := m.String()
		if _, ok := m.(USIOK); ok {
			printed = DialectUCI.HelloOK
		}
		m2, err := DialectUCI.ParseMessage(printed)
		if err != nil {
			t.Fatalf("ParseMessage(%q) = %#v prints %q, which does not parse: %v", line, m, printed, err)
		}
		if again := m2.String(); again != m.String() {
			t.Fatalf("round trip of %q: %q, then %q", line, m.String(), again)
		}
	})
}

// FuzzUCIPosition: a UCI position command from any FEN and moves either
// fails with ErrBadCommand or is one clean line of UCI moves.
func FuzzUCIPosition(f *testing.F) {
	f.Add("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e2e4 e7e5")
	f.Add("4k3/8/8/8/8/8/8/4K2R w H - 0 1", "e1g1")
	f.Add("8/8/8/8/8/8/8/8 w - -\nquit", "a7a8q\r\nquit")
	f.Fuzz(func(t *testing.T, fen, moves string) {
		var mv []string
		if moves != "" {
			mv = strings.Split(moves, " ")
		}
		line, err := DialectUCI.PositionLine(Position{FEN: fen, Moves: mv})
		if err != nil {
			if !errors.Is(err, ErrBadCommand) {
				t.Fatalf("got %v, want ErrBadCommand", err)
			}
			return
		}
		checkLine(t, Position{FEN: fen, Moves: mv}, line)
		if _, after, ok := strings.Cut(line, " moves "); ok {
			for _, m := range strings.Split(after, " ") {
				if !IsUCIMove(m) {
					t.Fatalf("%q: %q after moves is not a UCI move", line, m)
				}
			}
		}
	})
}
