package shogi

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedTestdata returns the path of a file in ../shared/testdata, the
// project's shared test corpus (USID_SHARED overrides where ../shared is).
func sharedTestdata(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("USID_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	path := filepath.Join(dir, "testdata", name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("shared test data missing: %v (the repository expects ../shared beside it, or set USID_SHARED)", err)
	}
	return path
}

// readTSV returns the tab-separated rows of a shared test file, skipping
// comments and blank lines.
func readTSV(t testing.TB, name string) [][]string {
	t.Helper()
	f, err := os.Open(sharedTestdata(t, name))
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
