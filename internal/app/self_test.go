package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid"
	"github.com/usid/usid/probe"
)

// TestSelfPath: an engine path "@self" is the binary that loaded the
// configuration, in the built-in configuration and in an operator's file
// alike; a binary whose path cannot be known is a configuration error; and
// a rebuilt binary (same path, another size or time) has its profile
// probed again, under another cache key.
func TestSelfPath(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "usid")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	was := executable
	t.Cleanup(func() { executable = was })
	executable = func() (string, error) { return bin, nil }

	c, err := ParseConfig(usid.DefaultConfig, []byte("engines:\n  - {name: mine, path: \"@self\", args: [othello-engine], protocol: usix}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var self []string
	for _, e := range c.Engines {
		if e.Path == bin {
			self = append(self, e.Name)
		}
		if e.Path == SelfPath {
			t.Errorf("engine %s kept the path %s", e.Name, SelfPath)
		}
	}
	if strings.Join(self, " ") != "othello mine" {
		t.Errorf("engines run from this binary: %v, want othello mine", self)
	}

	executable = func() (string, error) { return "", errors.New("no /proc") }
	if _, err := ParseConfig(usid.DefaultConfig); err == nil || !strings.Contains(err.Error(), `engine "othello"`) {
		t.Errorf("an unknown binary path: %v, want an error naming the engine", err)
	}

	id, err := probe.IdentityOf(bin)
	if err != nil {
		t.Fatal(err)
	}
	key := probe.Key(id, "othello-engine")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n# rebuilt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(bin, later, later)
	id2, err := probe.IdentityOf(bin)
	if err != nil {
		t.Fatal(err)
	}
	if probe.Key(id2, "othello-engine") == key {
		t.Error("a rebuilt usid keeps its engines' cached profile key")
	}
}
