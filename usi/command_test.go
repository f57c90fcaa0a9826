package usi

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCommandLines(t *testing.T) {
	const sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
	tests := []struct {
		cmd  Command
		want string
	}{
		{USI{}, "usi"},
		{Debug{On: true}, "debug on"},
		{Debug{}, "debug off"},
		{IsReady{}, "isready"},
		{SetOption{Name: "USI_Hash", Value: "128"}, "setoption name USI_Hash value 128"},
		{SetOption{Name: "Clear Hash"}, "setoption name Clear Hash"},
		{SetOption{Name: "BookFile", Value: "<empty>"}, "setoption name BookFile value <empty>"},
		{SetOption{Name: "Book", Value: "/a b/c.bin"}, "setoption name Book value /a b/c.bin"},
		{Register{Later: true}, "register later"},
		{Register{Name: "Stefan MK", Code: "4359874324"}, "register name Stefan MK code 4359874324"},
		{USINewGame{}, "usinewgame"},
		{Position{}, "position startpos"},
		{Position{SFEN: "startpos", Moves: []string{"7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"}},
			"position startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e"},
		{Position{SFEN: sfen}, "position sfen " + sfen},
		{Position{SFEN: "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124", Moves: []string{"P*5e"}},
			"position sfen 8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124 moves P*5e"},
		{Position{SFEN: "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p"}, "position sfen 9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p"},
		{Go{}, "go"},
		{Go{Infinite: true}, "go infinite"},
		{Go{Clock: &Clock{}}, "go btime 0 wtime 0 byoyomi 0"},
		{Go{Clock: &Clock{BTime: 60 * time.Second, WTime: 50 * time.Second, Byoyomi: 10 * time.Second}},
			"go btime 60000 wtime 50000 byoyomi 10000"},
		{Go{Clock: &Clock{BTime: 40 * time.Second, WTime: 50 * time.Second, BInc: 10 * time.Second, WInc: 10 * time.Second}},
			"go btime 40000 wtime 50000 binc 10000 winc 10000"},
		{Go{Ponder: true, Clock: &Clock{BTime: time.Second, WTime: 2 * time.Second, Byoyomi: 1500 * time.Millisecond}},
			"go ponder btime 1000 wtime 2000 byoyomi 1500"},
		{Go{MovesToGo: 20, Depth: 12, Nodes: 1000000, MoveTime: 2500 * time.Millisecond},
			"go movestogo 20 depth 12 nodes 1000000 movetime 2500"},
		{Go{Infinite: true, SearchMoves: []string{"7g7f", "2g2f"}}, "go infinite searchmoves 7g7f 2g2f"},
		{Go{Mate: true, MateTime: 10 * time.Second}, "go mate 10000"},
		{Go{Mate: true}, "go mate infinite"},
		{Stop{}, "stop"},
		{PonderHit{}, "ponderhit"},
		{GameOver{Result: Win}, "gameover win"},
		{GameOver{Result: Lose}, "gameover lose"},
		{GameOver{Result: Draw}, "gameover draw"},
		{Quit{}, "quit"},
	}
	for _, tt := range tests {
		got, err := tt.cmd.Line()
		if err != nil || got != tt.want {
			t.Errorf("%#v.Line(): got %q, %v, want %q", tt.cmd, got, err, tt.want)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []Command{
		SetOption{},
		SetOption{Name: "a\nb"},
		SetOption{Name: "Hash", Value: "1\nisready"},
		SetOption{Name: "Hash", Value: "1\r"},
		SetOption{Name: "Hash", Value: "\x7f"},
		SetOption{Name: "Hash", Value: "tab\there"},
		SetOption{Name: "my value thing", Value: "1"},
		SetOption{Name: "two  spaces", Value: "1"},
		SetOption{Name: " Hash", Value: "1"},
		SetOption{Name: "Hash", Value: "1 "},
		SetOption{Name: "Hash", Value: "\xff"},
		Register{},
		Register{Later: true, Name: "x"},
		Register{Name: "a code b", Code: "1"},
		Register{Name: "x", Code: "1\n"},
		Position{Moves: []string{"7g7f", "7g7"}},
		Position{Moves: []string{"7g7f\nquit"}},
		Position{Moves: []string{"0a1b"}},
		Position{Moves: []string{"7j7f"}},
		Position{Moves: []string{"K*5e"}},
		Position{Moves: []string{"p*5e"}},
		Position{Moves: []string{"7g7f="}},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b -\n1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1 b - 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 0P 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 123P 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b K 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - -1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL  b - 1"},
		Position{SFEN: "lnsg+kgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"},
		Position{SFEN: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves"},
		Position{SFEN: "startpos moves 7g7f"},
		Go{Depth: -1},
		Go{Nodes: -5},
		Go{MoveTime: -time.Millisecond},
		Go{Clock: &Clock{BTime: -1}},
		Go{Clock: &Clock{Byoyomi: time.Second, BInc: time.Second}},
		Go{Mate: true, Depth: 3},
		Go{Mate: true, MateTime: -1},
		Go{MateTime: time.Second},
		Go{SearchMoves: []string{"7g7f", "bad"}},
		GameOver{},
		GameOver{Result: "win\n"},
	}
	for _, cmd := range tests {
		got, err := cmd.Line()
		if !errors.Is(err, ErrBadCommand) {
			t.Errorf("%#v.Line(): got %q, %v, want ErrBadCommand", cmd, got, err)
		}
	}
}

func TestIsMove(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"7g7f", true}, {"8h2b+", true}, {"P*5e", true}, {"R*1a", true}, {"9i1a", true},
		{"", false}, {"7g7", false}, {"7g7f+ ", false}, {"7g7f-", false}, {"K*5e", false},
		{"P*5e+", false}, {"0a1b", false}, {"7z7f", false}, {"7G7F", false}, {"resign", false},
		{"P+5e", false}, {"*P5e", false},
	}
	for _, tt := range tests {
		if got := IsMove(tt.s); got != tt.want {
			t.Errorf("IsMove(%q): got %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestCommandErrorsClip(t *testing.T) {
	// A huge client value must not end up whole in an error (and the log).
	_, err := Position{Moves: []string{strings.Repeat("x", 100000)}}.Line()
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("error for a 100 kB move: got %d bytes, want a short message", len(err.Error()))
	}
}
