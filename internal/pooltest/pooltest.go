// Package pooltest runs a package's tests on one pool of engines that all
// of them share: it starts the pool, waits until it is ready, runs the
// tests, closes the pool and checks that no goroutine is left behind.
// Test code only; never in the binary.
package pooltest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/usid/usid/othello/engine"
	"github.com/usid/usid/pool"
)

// StartWait bounds the wait for the engines to start: generous, since a
// busy machine starts them slowly and a test waits for the state it needs.
const StartWait = 3 * time.Minute

// EnvLog, when set, makes the shared pool log to stderr (go test -v shows
// it beside the tests).
const EnvLog = "USID_TEST_POOL_LOG"

// othelloArg is the argument that makes a test binary under Main serve
// as usid's own othello engine, as `usid othello-engine` does.
const othelloArg = "othello-engine"

// Othello is an engine entry for usid's own othello engine, run as the
// server runs it (its binary with the argument othello-engine): here the
// test binary, which Main turns into the engine when so started.
func Othello(name string, instances int, clientOptions map[string]pool.OptionRule) pool.EngineConfig {
	return pool.EngineConfig{Name: name, Path: os.Args[0], Args: []string{othelloArg}, Protocol: "usix",
		Instances: instances, ClientOptions: clientOptions}
}

// ServeOthello serves usid's own othello engine on stdin and stdout when
// the test binary was started as it (`TESTBINARY othello-engine`, as the
// pool starts Othello's entry and the built-in configuration's "@self"),
// and returns its exit code; served is false otherwise. A TestMain calls
// it first.
func ServeOthello() (code int, served bool) {
	if len(os.Args) != 2 || os.Args[1] != othelloArg {
		return 0, false
	}
	if err := engine.ServeUSIX(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "othello-engine:", err)
		return 1, true
	}
	return 0, true
}

// PrivateCache points $XDG_CACHE_HOME, where usid caches engine profiles
// by default, at a new directory for this test binary's processes and the
// usid processes it starts, and returns the func that removes it: the
// user's cache would carry what an earlier run observed (a nodes limit an
// engine once overshot, emulated from then on) into this run. Not for a
// binary that runs the go command, whose build cache lives there too.
func PrivateCache() (remove func()) {
	dir, err := os.MkdirTemp("", "usid-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	return func() { os.RemoveAll(dir) }
}

// Main starts a pool of cfgs, hands it to use, waits until ready(p) holds,
// runs the tests and returns their exit code (1 if the pool could not be
// made ready, or goroutines leaked after passing tests). Every path in
// need is checked first: a missing engine fails with how to install it.
// A test binary started by the pool as Othello's engine serves as that
// engine instead, and returns its exit code.
func Main(m *testing.M, need map[string]string, cfgs []pool.EngineConfig, use func(*pool.Pool), ready func(*pool.Pool) bool) int {
	if code, served := ServeOthello(); served {
		return code
	}
	for path, pkg := range need {
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s is missing (%v): apt-get install %s\n", path, err, pkg)
			return 1
		}
	}
	defer PrivateCache()()
	var opts pool.Options
	if os.Getenv(EnvLog) != "" {
		// The pool's own account, for a failure that needs it.
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	p, err := pool.New(cfgs, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	use(p)
	deadline := time.Now().Add(StartWait)
	for !ready(p) {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "engines not ready after %v: %+v\n", StartWait, p.Status())
			p.Close(context.Background())
			return 1
		}
		time.Sleep(20 * time.Millisecond)
	}
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	p.Close(ctx)
	cancel()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	return code
}
