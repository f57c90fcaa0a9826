// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTree runs check-tree.sh in a scratch repository and adds, one at
// a time, each kind of file it must refuse.
func TestCheckTree(t *testing.T) {
	script, err := filepath.Abs("check-tree.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name string, data []byte, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		git("add", name)
	}
	check := func() (bool, string) {
		cmd := exec.Command("bash", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return err == nil, string(out)
	}
	git("init", "-q")
	write("main.go", []byte("package main\n"), 0o644)
	write("run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	if ok, out := check(); !ok {
		t.Fatalf("a tree of source is refused:\n%s", out)
	}

	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("0123456789abcdef\n", 70000)) // 1.19 MB of text
	cases := []struct {
		name, path string
		data       []byte
		mode       os.FileMode
		want       string
	}{
		{"ELF binary", "usid-bench", elf, 0o755, "executable binary"},
		{"ELF without exec bit", "lib/blob", elf, 0o644, "executable binary"},
		{"exec bit, no #!", "tool", []byte("echo hi\n"), 0o755, "not a script"},
		{"over 1 MB", "testdata/big.txt", big, 0o644, "over 1 MB"},
	}
	for _, c := range cases {
		write(c.path, c.data, c.mode)
		ok, out := check()
		if ok || !strings.Contains(out, c.want) {
			t.Errorf("%s (%s): check passed=%v, want a failure saying %q; output:\n%s", c.name, c.path, ok, c.want, out)
		}
		git("rm", "-q", "--cached", c.path)
		if err := os.Remove(filepath.Join(dir, c.path)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, out := check(); !ok {
		t.Fatalf("the tree is refused after the files were removed:\n%s", out)
	}

	// Listed test data may be large.
	write("testdata/big.txt", big, 0o644)
	write("scripts/large-files.txt", []byte("# test data\ntestdata/big.txt\n"), 0o644)
	if ok, out := check(); !ok {
		t.Fatalf("a listed large test file is refused:\n%s", out)
	}
}
