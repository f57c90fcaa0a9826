package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOthelloCommands (issue 36): usid perft --game othello counts the
// published move paths from the start (passes as plies, an ended game as
// one path), --divide agrees with perft after each move, and usid validate
// --game othello answers one verdict per line, refusing bad positions and
// moves with codes.
func TestOthelloCommands(t *testing.T) {
	for d, want := range []string{"4", "12", "56", "244", "1396", "8200", "55092"} {
		out, code := runCmd(t, "", "perft", "--game", "othello", "--depth", string(rune('1'+d)))
		if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || lines[len(lines)-1] != want {
			t.Errorf("perft --game othello --depth %d: exit %d, %q; want %s", d+1, code, out, want)
		}
	}
	out, code := runCmd(t, "", "perft", "--game", "othello", "--depth", "3", "--divide")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || lines[4] != "56" {
		t.Fatalf("--divide: exit %d, %q", code, out)
	}
	for _, l := range lines[:4] {
		move, count, _ := strings.Cut(l, ": ")
		if got, _ := runCmd(t, "", "perft", "--game", "othello", "--depth", "2", "startpos", "moves", move); strings.TrimSpace(got) != count {
			t.Errorf("divide says %s: %s, perft after it %s", move, count, got)
		}
	}
	if _, code := runCmd(t, "", "perft", "--game", "go", "--depth", "1"); code != 2 {
		t.Errorf("an unknown game: exit %d, want 2", code)
	}

	in := strings.Join([]string{
		"startpos moves f5 d6",
		"startpos moves f5 f5",
		"sfen ---------------------------OX------XO---------------------------B1 moves c4",
		"sfen ---------------------------OX------XO---------------------------Q1",
		"startpos moves pass",
	}, "\n") + "\n"
	out, code = runCmd(t, in, "validate", "--game", "othello")
	if code != 0 {
		t.Fatalf("validate: exit %d", code)
	}
	type verdict struct {
		Valid      bool     `json:"valid"`
		Othello    string   `json:"othello"`
		LegalMoves []string `json:"legal_moves"`
		Errors     []struct {
			Code      string `json:"code"`
			MoveIndex *int   `json:"move_index"`
		} `json:"errors"`
	}
	var got []verdict
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var one verdict
		if err := json.Unmarshal([]byte(l), &one); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, one)
	}
	if len(got) != 5 {
		t.Fatalf("%d verdicts for 5 lines: %s", len(got), out)
	}
	if !got[0].Valid || got[0].Othello != "---------------------------OX------OXX-----O--------------------B3" || len(got[0].LegalMoves) != 5 {
		t.Errorf("f5 d6: %+v", got[0])
	}
	if got[1].Valid || got[1].Errors[0].Code != "occupied" || got[1].Errors[0].MoveIndex == nil || *got[1].Errors[0].MoveIndex != 1 {
		t.Errorf("f5 f5: %+v", got[1])
	}
	if !got[2].Valid {
		t.Errorf("sfen ... c4: %+v", got[2])
	}
	if got[3].Valid || got[3].Errors[0].Code != "othello_side" {
		t.Errorf("a bad side letter: %+v", got[3])
	}
	if got[4].Valid || got[4].Errors[0].Code != "pass_not_allowed" {
		t.Errorf("a pass with squares to play: %+v", got[4])
	}
}
