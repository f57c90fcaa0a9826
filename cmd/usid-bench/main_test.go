package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/usid/usid/internal/proc"
)

// TestMain lets the test binary be the fake engine and the usid child, as
// the tool's own binary is (see childMain).
func TestMain(m *testing.M) {
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestShort runs the whole tool in -short mode, end to end: it proves the
// tool still works (not its numbers) and that it leaves no process or
// goroutine behind.
func TestShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engines and websocketd")
	}
	// Orphaned descendants (an engine whose usid died, a websocketd child)
	// become our children, so the leak check below sees them.
	if err := setSubreaper(); err != nil {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	defer goleak.VerifyNone(t)

	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(t.Context(), []string{"-short", "-out", out}, &stdout, &stderr)
	t.Logf("usid-bench -short took %v; its log:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	if code != 0 {
		t.Fatalf("usid-bench -short: exit %d, want 0; output:\n%s", code, stdout.String())
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, stdout.Bytes()) {
		t.Errorf("-out file differs from the printed report")
	}
	report := string(md)
	for i := range measurements {
		if !strings.Contains(report, fmt.Sprintf("\n| %d | ", i+1)) {
			t.Errorf("report has no row for measurement %d:\n%s", i+1, report)
		}
	}
	for _, want := range []string{"| # | measurement | result | target | verdict |", "Short run", "p99 ≤ 2 ms", "RSS ≤ 150 MB", "CPU usid ", "expected (", "run 2/2"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "ERROR") {
		t.Errorf("report has errors:\n%s", report)
	}
	if left := leftovers(5 * time.Second); len(left) > 0 {
		t.Errorf("processes left behind: %s", strings.Join(left, "; "))
	}
}

func setSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// leftovers waits up to d until this process has no children and returns
// those it had: any child now is a leak, since run waits for every process
// it starts and orphans are reparented to us. Exited ones are reaped, and
// ones still running at the deadline killed, so that a failed run does not
// leave them for the next.
func leftovers(d time.Duration) []string {
	var left []string
	deadline := time.Now().Add(d)
	for {
		late := time.Now().After(deadline)
		running := 0
		for _, pid := range proc.Children(os.Getpid()) {
			name := fmt.Sprintf("pid %d (%s)", pid, proc.Comm(pid))
			var ws syscall.WaitStatus
			if p, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); p == pid {
				left = append(left, name+" exited after its parent")
				continue
			}
			running++
			if late {
				syscall.Kill(pid, syscall.SIGKILL)
				syscall.Wait4(pid, &ws, 0, nil)
				left = append(left, name+" still running: killed")
			}
		}
		if running == 0 || late {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}
