// Package rulestest reads the rules packages' test corpora. Test-only.
package rulestest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadTSV returns the tab-separated rows of a file in testdata/ (see
// testdata/README.md for where each file's facts come from), skipping
// comments and blank lines.
func ReadTSV(t testing.TB, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows = append(rows, strings.Split(line, "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", name)
	}
	return rows
}
