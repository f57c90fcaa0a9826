package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../../testdata from the reference")

// TestCorpusCurrent: the corpus in othello/testdata is what the reference
// writes (with -update, it is rewritten).
func TestCorpusCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata")
	for name, want := range generate() {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the reference writes; regenerate: go test ./othello/internal/gen -update", name)
		}
	}
}
