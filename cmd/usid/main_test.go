package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usid/usid/internal/pooltest"
	"github.com/usid/usid/shogi"
)

// TestMain lets the test binary act as the usid command when re-executed
// with USID_RUN_MAIN=1, so tests drive the real main through real pipes.
func TestMain(m *testing.M) {
	if os.Getenv("USID_RUN_MAIN") == "1" {
		main()
		return
	}
	remove := pooltest.PrivateCache()
	code := m.Run()
	remove()
	os.Exit(code)
}

// runCmd runs the usid command with args and stdin, returning stdout and the exit code.
func runCmd(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "USID_RUN_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("usid %v stderr: %s", args, errb.String())
	}
	return out.String(), code
}

// positionsTSV is the shogi package's table of legal and illegal positions
// (shogi/testdata/README.md says where its facts come from).
func positionsTSV(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "shogi", "testdata", "positions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestValidatePositionsTSV feeds every row of positions.tsv to `usid
// validate` and checks each verdict, in order.
func TestValidatePositionsTSV(t *testing.T) {
	var in strings.Builder
	var want []string
	for _, line := range strings.Split(positionsTSV(t), "\n") {
		r := strings.Split(line, "\t")
		if len(r) != 4 {
			continue
		}
		pos := "sfen " + r[2]
		if r[2] == "startpos" {
			pos = "startpos"
		}
		if r[3] != "" {
			pos += " moves " + r[3]
		}
		in.WriteString(pos + "\n")
		want = append(want, r[0]+" "+r[1])
	}
	out, code := runCmd(t, in.String(), "validate")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(want) {
			t.Fatalf("more verdicts than input lines: %s", sc.Text())
		}
		var v shogi.Verdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, sc.Text())
		}
		legal := strings.HasPrefix(want[i], "legal")
		if v.Valid != legal || (len(v.Errors) == 0) != legal {
			t.Errorf("line %d (%s): got %s", i+1, want[i], sc.Text())
		}
	}
	if i != len(want) {
		t.Errorf("got %d verdicts, want %d", i, len(want))
	}
}

func TestValidateOutputShape(t *testing.T) {
	out, _ := runCmd(t, "startpos moves 7g7f 3c3d 5i5f\n\nsfen 4k4/9/9/9/9/9/9/9/4K4 w - 1\n", "validate")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out)
	}
	var bad map[string]any
	json.Unmarshal([]byte(lines[0]), &bad)
	errs, _ := bad["errors"].([]any)
	if bad["valid"] != false || len(errs) != 1 || errs[0].(map[string]any)["move_index"] != 2.0 ||
		errs[0].(map[string]any)["code"] != string(shogi.CodeUnreachable) {
		t.Errorf("line 1 = %s, want valid false with unreachable at move_index 2", lines[0])
	}
	if !strings.Contains(lines[1], `"code":"position_syntax"`) {
		t.Errorf("blank line = %s, want a position_syntax error", lines[1])
	}
	var good shogi.Verdict
	json.Unmarshal([]byte(lines[2]), &good)
	if !good.Valid || good.SideToMove != "w" || good.SFEN != "4k4/9/9/9/9/9/9/9/4K4 w - 1" || len(good.LegalMoves) != 5 {
		t.Errorf("line 3 = %s, want valid, white to move, 5 legal moves", lines[2])
	}
}

func TestPerftCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string // last line
		code int
	}{
		{[]string{"perft", "--depth", "3"}, "25470", 0},
		{[]string{"perft", "--depth", "2", "--divide", "sfen", "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3", "b", "RBGSNLP3g3n17p", "1"}, "105677", 0},
		{[]string{"perft", "--depth", "0"}, "", 2},
		{[]string{"perft", "--depth", "2", "sfen", "bad"}, "", 1},
	}
	for _, tt := range tests {
		out, code := runCmd(t, "", tt.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != tt.code || (tt.want != "" && lines[len(lines)-1] != tt.want) {
			t.Errorf("usid %v: exit %d, last line %q; want exit %d, %q", tt.args, code, lines[len(lines)-1], tt.code, tt.want)
		}
	}
}

// TestPerftDivide checks --divide against perft of the position after each move.
func TestPerftDivide(t *testing.T) {
	out, code := runCmd(t, "", "perft", "--depth", "3", "--divide")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 31 || lines[30] != "25470" {
		t.Fatalf("perft --depth 3 --divide: exit %d, %d lines, last %q; want 31 lines ending 25470", code, len(lines), lines[len(lines)-1])
	}
	for _, l := range lines[:3] {
		move, count, _ := strings.Cut(l, ": ")
		got, _ := runCmd(t, "", "perft", "--depth", "2", "startpos", "moves", move)
		if strings.TrimSpace(got) != count {
			t.Errorf("divide says %s: %s, perft after %s says %s", move, count, move, got)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	if _, code := runCmd(t, "", "frobnicate"); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
}
