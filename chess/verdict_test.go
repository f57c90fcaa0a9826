package chess

import (
	"encoding/json"
	"testing"
)

func TestInspect(t *testing.T) {
	v := Inspect("startpos", []string{"f2f3", "e7e5", "g2g4", "d8h4"}, Standard)
	if !v.Valid || !v.InCheck || !v.Checkmate || v.Stalemate || len(v.LegalMoves) != 0 || v.SideToMove != "w" {
		t.Errorf("fool's mate: %+v", v)
	}
	v = Inspect("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", nil, Standard)
	if !v.Valid || v.InCheck || !v.Stalemate {
		t.Errorf("stalemate: %+v", v)
	}
	v = Inspect("startpos", []string{"e2e4", "e7e5", "e1e3"}, Standard)
	if v.Valid || len(v.Errors) != 1 || v.Errors[0].Code != CodeUnreachable || v.Errors[0].MoveIndex != 2 ||
		v.FEN != "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2" {
		t.Errorf("bad third move: %+v", v)
	}
	b, err := json.Marshal(v.Errors[0])
	if err != nil || string(b) != `{"code":"unreachable","message":"the king on e1 cannot move to e3","move_index":2}` {
		t.Errorf("error JSON = %s, %v", b, err)
	}
	v = Inspect("4k3/8/8/8/8/8/8/4K3 w - e9 0 1", nil, Standard)
	if v.Valid || v.FEN != "" || v.Errors[0].Code != CodeFENEnPassant {
		t.Errorf("bad FEN: %+v", v)
	}
}

func TestFindMate(t *testing.T) {
	for _, tt := range []struct {
		fen   string
		plies int
		want  int // plies of the line found, 0: none
	}{
		{"6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, 1},
		{"3r2k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1", 1, 0},
		{"3r2k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1", 3, 3},
		{StartFEN, 3, 0},
	} {
		p, err := ParseFEN(tt.fen, Standard)
		if err != nil {
			t.Fatal(err)
		}
		line, ok := p.FindMate(tt.plies, 1_000_000)
		if ok != (tt.want > 0) || len(line) != tt.want {
			t.Errorf("%s in %d: got %v %v, want %d plies", tt.fen, tt.plies, line, ok, tt.want)
			continue
		}
		q := *p
		for _, m := range line {
			q.Play(m)
		}
		if ok && !q.IsCheckmate() {
			t.Errorf("%s: line %v does not mate", tt.fen, line)
		}
	}
}
