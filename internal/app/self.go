package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/usid/usid/pool"
)

// SelfPath is the engine path that names this usid binary, wherever it is
// (bin/usid under make run, /usr/local/bin/usid in the image, a test's
// build): usid's own engines are subcommands of it (othello-engine), so
// that they are wherever usid is. ParseConfig resolves it.
const SelfPath = "@self"

// executable is the running binary, symlinks resolved (a variable for the
// tests of resolveSelf).
var executable = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// resolveSelf replaces the path "@self" of engines with this binary's.
// The probe keys an engine's cached profile by its binary's identity
// (path, size, modification time), so a rebuilt usid has its own engines
// probed again.
func resolveSelf(engines []pool.EngineConfig) error {
	for i, e := range engines {
		if e.Path != SelfPath {
			continue
		}
		exe, err := executable()
		if err != nil {
			return fmt.Errorf("engine %q: path %s: this binary's path: %w", e.Name, SelfPath, err)
		}
		engines[i].Path = exe
	}
	return nil
}
