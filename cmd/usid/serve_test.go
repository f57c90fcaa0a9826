package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/usid/usid/internal/proc"
)

// TestServe runs the real usid binary with the default configuration on a
// free port, checks that it becomes ready and serves, then sends SIGTERM and
// checks that it exits cleanly and leaves no engine behind.
func TestServe(t *testing.T) {
	for _, p := range []string{"/usr/games/fairy-stockfish", "/usr/games/gpsusi"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s missing: apt-get install fairy-stockfish gpsshogi", p)
		}
	}
	cmd, addr, log := startUsid(t, "--addr", "127.0.0.1:0")
	base := "http://" + addr
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := get("/readyz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for path, want := range map[string]string{
		"/metrics":      "usid_pool_utilization",
		"/openapi.yaml": "openapi: 3",
		"/v1/engines":   `"name":"gps"`,
		"/":             "<html",
	} {
		if code, body := get(path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body without %q", path, code, want)
		}
	}
	engines := proc.Children(cmd.Process.Pid)
	if len(engines) < 3 {
		t.Errorf("usid runs %d engine processes, want 3 (2 fairy, 1 gps)", len(engines))
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("usid exited with %v\n%s", err, log())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("usid did not exit within 20s of SIGTERM")
	}
	for _, pid := range engines {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("engine process %d outlived usid", pid)
		}
	}
}

// startUsid runs the usid command (this test binary as main) with args and
// returns it, the address it listens on, and a func that returns what it
// has logged since. The process is killed at the end of the test.
func startUsid(t *testing.T, args ...string) (*exec.Cmd, string, func() string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "USID_RUN_MAIN=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`usid listening"? addr=(\S+)`)
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() }) // don't hang on a silent usid
	var addr string
	for addr == "" && lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	timer.Stop()
	if addr == "" {
		t.Fatal("usid did not say where it listens")
	}
	var mu sync.Mutex
	var rest strings.Builder
	go func() {
		for lines.Scan() {
			mu.Lock()
			rest.WriteString(lines.Text() + "\n")
			mu.Unlock()
		}
	}()
	return cmd, addr, func() string {
		mu.Lock()
		defer mu.Unlock()
		return rest.String()
	}
}
