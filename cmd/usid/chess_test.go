package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/chess"
)

// TestValidateChessFENs feeds every row of the chess package's fens.tsv
// (chess/testdata/README.md says where its facts come from) to `usid
// validate`, the standard rows with --chess and the Chess960 ones with
// --chess960, and wants each row's codes.
func TestValidateChessFENs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "chess", "testdata", "fens.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"standard", "chess960"} {
		var in strings.Builder
		var want []string
		for _, line := range strings.Split(string(b), "\n") {
			r := strings.Split(line, "\t")
			if len(r) != 4 || strings.HasPrefix(line, "#") || r[1] != variant {
				continue
			}
			in.WriteString(r[2] + "\n")
			want = append(want, r[0])
		}
		flag := "--chess"
		if variant == "chess960" {
			flag = "--chess960"
		}
		out, code := runCmd(t, in.String(), "validate", flag)
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(want) {
			t.Fatalf("%s: %d verdicts for %d lines", variant, len(lines), len(want))
		}
		for i, l := range lines {
			var v chess.Verdict
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("line %d: %v: %s", i+1, err, l)
			}
			got := []string{"legal"}
			if !v.Valid {
				got = got[:0]
				for _, e := range v.Errors {
					got = append(got, string(e.Code))
				}
			}
			if !slices.Equal(got, strings.Split(want[i], ",")) {
				t.Errorf("%s row %d: got %v, want %s (%s)", variant, i+1, got, want[i], l)
			}
		}
	}
}

// TestValidateTellsGames: the first word decides the game of each line.
func TestValidateTellsGames(t *testing.T) {
	in := "startpos moves 7g7f\nfen " + chess.StartFEN + " moves e2e4\nposition fen 4k3/8/8/8/8/8/8/4K3 w - -\nsfen 4k4/9/9/9/9/9/9/9/4K4 w - 1\n"
	out, code := runCmd(t, in, "validate")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	for i, key := range []string{`"sfen"`, `"fen"`, `"fen"`, `"sfen"`} {
		if !strings.Contains(lines[i], key+":") || !strings.Contains(lines[i], `"valid":true`) {
			t.Errorf("line %d = %s, want a valid verdict with %s", i+1, lines[i], key)
		}
	}
	out, _ = runCmd(t, "startpos moves e2e4\n", "validate", "--chess")
	if !strings.Contains(out, `"valid":true`) || !strings.Contains(out, `"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"`) {
		t.Errorf("--chess startpos: %s", out)
	}
}

func TestPerftChess(t *testing.T) {
	tests := []struct {
		args []string
		want string // last line
		code int
	}{
		{[]string{"perft", "--depth", "3", "--chess"}, "8902", 0},
		{[]string{"perft", "--depth", "3", "fen", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8", "w", "-", "-", "0", "1"}, "2812", 0},
		{[]string{"perft", "--depth", "2", "--divide", "fen", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R", "w", "KQkq", "-"}, "2039", 0},
		{[]string{"perft", "--depth", "2", "--chess960", "fen", "1r2k1r1/8/8/8/8/8/8/1R2K1R1", "w", "BGbg", "-", "0", "1", "moves", "e1b1"}, "", 0},
		{[]string{"perft", "--depth", "2", "fen", "8/8/8/8/8/8/8/8", "w", "-", "-", "0", "1"}, "", 1},
		{[]string{"perft", "--depth", "2", "--chess", "startpos", "moves", "e2e5"}, "", 1},
	}
	for _, tt := range tests {
		out, code := runCmd(t, "", tt.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != tt.code || (tt.want != "" && lines[len(lines)-1] != tt.want) {
			t.Errorf("usid %v: exit %d, last line %q; want exit %d, %q", tt.args, code, lines[len(lines)-1], tt.code, tt.want)
		}
	}
	// Castling is written king-takes-rook in Chess960 mode.
	out, code := runCmd(t, "", "perft", "--depth", "1", "--divide", "--chess960", "fen", "4k3/8/8/8/8/8/8/4K2R", "w", "K", "-")
	if code != 0 || !strings.Contains(out, "e1h1: 1\n") || strings.Contains(out, "e1g1") {
		t.Errorf("Chess960 divide: exit %d:\n%s", code, out)
	}
	out, _ = runCmd(t, "", "perft", "--depth", "1", "--divide", "fen", "4k3/8/8/8/8/8/8/4K2R", "w", "K", "-")
	if !strings.Contains(out, "e1g1: 1\n") {
		t.Errorf("standard divide:\n%s", out)
	}
}
