package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/usid/usid/othello"
)

// FuzzServeUSIX feeds arbitrary positions and go parameters to the
// protocol: the engine must never crash, answer exactly one bestmove,
// never an illegal move, never pass while a square is legal, and resign
// (after an error line) only when the position was refused.
func FuzzServeUSIX(f *testing.F) {
	for _, pos := range []string{
		"startpos", "startpos moves", "startpos moves f5 d6 c3 d3 c4",
		"sfen ---------------------------OX------XO---------------------------B1 moves",
		"sfen XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXW moves",
		"sfen " + mustPassToken(f) + " moves pass",
		"startpos moves pass", "startpos moves D3", "sfen x", "fen 8/8/8/8/8/8/8/8 w - - 0 1", "",
	} {
		for _, g := range []string{"depth 2", "nodes 500", "infinite", "ponder", "movetime 10", "btime 10 wtime 10 byoyomi 5", "depth -1", ""} {
			f.Add(pos, g)
		}
	}
	f.Fuzz(func(t *testing.T, pos, goArgs string) {
		flat := strings.NewReplacer("\n", " ", "\r", " ")
		pos, goArgs = flat.Replace(pos), flat.Replace(goArgs)
		in := "position " + pos + "\ngo " + goArgs + "\nstop\nquit\n"
		var out bytes.Buffer
		if err := Serve(strings.NewReader(in), &out, Config{HashMB: 1, Seed: 1}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		var moves []string
		for _, l := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "bestmove" {
				moves = append(moves, f[1])
			}
		}
		if len(moves) != 1 {
			t.Fatalf("%q: %d bestmoves in %q", in, len(moves), out.String())
		}
		p, err := loadPositionCommand("position " + pos)
		if err != nil {
			if moves[0] != "resign" || !strings.Contains(out.String(), "info string error position refused") {
				t.Fatalf("%q (refused: %v): answered %q", in, err, out.String())
			}
			return
		}
		checkLegal(t, p, moves[0])
	})
}

// loadPositionCommand is what the engine accepts: package othello's
// reading of a position command.
func loadPositionCommand(line string) (*othello.Position, error) {
	token, moves, err := othello.ParsePositionCommand(line)
	if err != nil {
		return nil, err
	}
	p, errs := othello.Load(token, moves)
	if errs != nil {
		return nil, othello.Errors(errs)
	}
	return p, nil
}
