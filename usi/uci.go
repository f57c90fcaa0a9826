package usi

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// SpeaksUCI starts the engine described by cfg once more and asks it "uci",
// the first command of the chess protocol USI was derived from. It reports
// whether the engine answered "uciok" within timeout: an engine that failed
// the USI handshake and passes this one is a chess engine, and an operator
// should be told so rather than see it restarted in vain. The process is
// killed before SpeaksUCI returns.
func SpeaksUCI(ctx context.Context, cfg Config, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Path, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = killWait
	cmd.Stdin = strings.NewReader("uci\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return false
	}
	if err := cmd.Start(); err != nil {
		return false
	}
	defer func() {
		cancel() // kills the group, if it still runs
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "uciok" {
			return true
		}
	}
	return false
}
