// Package redistest starts Debian's real redis-server for tests, on a free
// loopback port, without persistence. It is never part of the binary. Each
// server belongs to the test that started it and is stopped by that test's
// cleanup; starting several at once, from parallel tests, is safe.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Addr string // host:port
	URL  string // redis://host:port/0
	cmd  *exec.Cmd
}

// Start runs redis-server on a free loopback port and stops it when the test
// ends. A missing binary fails the test: tests never skip for it.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, "", "--save", "", "--appendonly", "no", "--protected-mode", "yes")
}

// StartConfig is Start with a redis.conf's text (as a deployment ships it):
// only where the server listens and writes is changed (loopback, a free
// port, a temporary directory). Its log is shown if the test fails.
func StartConfig(t testing.TB, conf string) *Server {
	t.Helper()
	return start(t, conf)
}

func start(t testing.TB, conf string, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is missing: apt-get install redis-server (%v)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	var argv []string
	if conf != "" {
		file := filepath.Join(dir, "redis.conf")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		argv = append(argv, file) // options after the file override it
	}
	argv = append(argv, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir)
	cmd := exec.Command(bin, append(argv, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Dir = &out, &out, dir
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("redis-server's log:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Ping()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING: %v\n%s", s.Addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ping asks the server for PONG over a raw connection.
func (s *Server) Ping() error {
	line, err := s.command("PING")
	if err == nil && !strings.HasPrefix(line, "+PONG") {
		err = fmt.Errorf("redis answered %q", line)
	}
	return err
}

// DBSize is the number of keys in database 0, or -1 if the server did not
// answer: a test waits on it for a write it cannot see otherwise.
func (s *Server) DBSize() int {
	line, err := s.command("DBSIZE")
	if err != nil || !strings.HasPrefix(line, ":") {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return -1
	}
	return n
}

// command sends one inline command over a raw connection and returns the
// first line of the answer.
func (s *Server) command(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

// Stop kills the server and waits for it (a test may stop it early to
// simulate an outage).
func (s *Server) Stop() {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
}
