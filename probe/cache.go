package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// IdentityOf describes the engine binary at path (looked up in PATH when it
// has no slash) by its resolved path, size and modification time. Its id
// name is learned when the engine starts.
func IdentityOf(path string) (Identity, error) {
	resolved, err := exec.LookPath(path)
	if err != nil {
		return Identity{}, err
	}
	if abs, err := filepath.Abs(resolved); err == nil {
		resolved = abs
	}
	if r, err := filepath.EvalSymlinks(resolved); err == nil {
		resolved = r
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Path: resolved, Size: fi.Size(), ModTime: fi.ModTime().UTC()}, nil
}

// Key names the cache entry of an engine: its binary's identity and what
// else changes how it runs (arguments, working directory, environment, the
// options usid sets at start).
func Key(id Identity, extra ...string) string {
	h := sha256.New()
	fmt.Fprintf(h, "v%d\x00%s\x00%d\x00%d", Version, id.Path, id.Size, id.ModTime.UnixNano())
	for _, e := range extra {
		h.Write([]byte{0})
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Load reads the profile cached under key in dir. It reports false when
// there is none, or it is unreadable or of another version (the caller
// probes again).
func Load(dir, key string) (*Profile, bool) {
	if dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, key+".json"))
	if err != nil {
		return nil, false
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil || p.Version != Version || p.Go == nil {
		return nil, false
	}
	return &p, true
}

// Save writes p under key in dir, atomically (a temporary file renamed), so
// that two processes probing at once leave one whole profile.
func Save(dir, key string, p *Profile) error {
	if dir == "" {
		return errors.New("probe: no cache directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+key+"-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, key+".json")); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Forget removes the profile cached under key (an engine whose id name no
// longer matches it).
func Forget(dir, key string) {
	if dir != "" && !strings.ContainsAny(key, `/\`) {
		os.Remove(filepath.Join(dir, key+".json"))
	}
}

// DefaultDir is where profiles are kept when the configuration names no
// directory: the user's cache directory (XDG_CACHE_HOME, else ~/.cache), or
// the system's temporary directory where there is no home.
func DefaultDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "usid", "profiles")
	}
	return filepath.Join(os.TempDir(), "usid-profiles")
}
