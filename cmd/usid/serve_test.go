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

	"github.com/usid/usid"
	"github.com/usid/usid/internal/proc"
)

// TestDefaultConfig: the shipped usid.yaml parses strictly and names the
// engines Debian installs.
func TestDefaultConfig(t *testing.T) {
	c, err := ParseConfig(usid.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range c.Engines {
		names = append(names, e.Name+"="+e.Path)
	}
	if got := strings.Join(names, " "); got != "fairy=/usr/games/fairy-stockfish gps=/usr/games/gpsusi" {
		t.Errorf("engines %s", got)
	}
	if _, err := ParseConfig([]byte("engines: []\nlisen: x\n")); err == nil {
		t.Error("a misspelt key was accepted")
	}
}

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

func TestAccessConfig(t *testing.T) {
	dir := t.TempDir()
	keys := dir + "/keys"
	os.WriteFile(keys, []byte("# team keys\nalice: 0123456789abcdef0123\n\nbob:fedcba9876543210fedc\n"), 0o600)
	c, err := ParseConfig([]byte("access:\n  keys_file: " + keys + "\n  anonymous: false\n  trusted_proxies: [10.0.0.0/8]\n  keyed: {rate: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.access(func(k string) string {
		if k == "USID_API_KEYS" {
			return "carol:carolcarolcarolcarol"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Keys) != 3 || a.Keys["bob"] != "fedcba9876543210fedc" || a.Anonymous || len(a.TrustedProxies) != 1 || a.Keyed.Rate != 3 {
		t.Errorf("access: %+v", a)
	}
	for _, bad := range []string{"access:\n  trusted_proxies: [nonsense]\n", "access:\n  keys_file: /nonexistent\n"} {
		c, err := ParseConfig([]byte(bad))
		if err == nil {
			_, err = c.access(func(string) string { return "" })
		}
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c, _ = ParseConfig([]byte("engines: []\n"))
	if _, err := c.access(func(string) string { return "short:key" }); err == nil {
		t.Error("a short key was accepted")
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
