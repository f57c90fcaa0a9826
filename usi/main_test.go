package usi

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/usid/usid/internal/fakeengine"
)

// TestMain runs the fake engine when the test binary is re-executed as one
// (as os/exec's tests do), and otherwise the tests, checking that none of
// them leaks a goroutine.
func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	goleak.VerifyTestMain(m)
}

const (
	fairyPath = "/usr/games/fairy-stockfish"
	gpsPath   = "/usr/games/gpsusi"
)

// needBinary fails (never skips) when a real engine is missing: the tests
// against real engines are the point of this package's tests.
func needBinary(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing (%v): apt-get install fairy-stockfish gpsshogi", path, err)
	}
}

// testLogger logs to the test's output, shown when a test fails or with -v.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startEngine starts an engine and makes sure, at the end of the test, that
// it is closed and its process is gone.
func startEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	if cfg.USIOKTimeout == 0 {
		cfg.USIOKTimeout = 2 * time.Minute // gpsusi loads its data slowly on a loaded machine
	}
	e, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start(%s): %v", cfg.Path, err)
	}
	t.Cleanup(func() { closeAndCheck(t, e) })
	return e
}

// closeAndCheck closes e and checks that its process no longer exists.
func closeAndCheck(t *testing.T, e *Engine) {
	t.Helper()
	if err := e.Close(); err != nil && !errors.Is(err, ErrTimeout) {
		t.Errorf("Close: %v", err)
	}
	checkGone(t, e.PID())
}

// checkGone fails unless process pid has disappeared within a second. A
// zombie counts as gone: a grandchild whose parent died is reaped by init,
// which a container may never do.
func checkGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || isZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process %d still exists (kill -0: %v)", pid, err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) Z ...".
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// fakeConfig runs the test binary as the fake engine in the given mode. The
// fake writes its pid to a file, so that a test can check on it even when
// Start failed.
func fakeConfig(t *testing.T, mode string) (Config, func() int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := Config{
		Path: fakeengine.Path(),
		// atexit_sleep_ms: a -race binary otherwise sleeps 1s before exiting.
		Env: append(fakeengine.Env(mode), fakeengine.EnvPIDFile+"="+pidFile,
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")),
		Logger: testLogger(t),
	}
	pid := func() int {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("fake engine pid: %v", err)
		}
		n, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatalf("fake engine pid %q: %v", b, err)
		}
		return n
	}
	return cfg, pid
}
