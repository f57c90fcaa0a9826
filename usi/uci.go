package usi

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Detect learns which dialect an engine speaks: it starts the engine
// described by cfg once, sends "usi" then "uci", and takes the dialect whose
// answer ("usiok" or "uciok") comes first. An engine that speaks both (as
// fairy-stockfish does) answers "usi" first and is taken for a USI engine:
// to serve it as a chess engine, name the dialect in cfg (the pool's
// `protocol: uci`) and Detect is not asked. The process is killed before
// Detect returns; cfg.Dialect is ignored. It fails when neither answer came
// within timeout, with the engine's last words.
func Detect(ctx context.Context, cfg Config, timeout time.Duration) (*Dialect, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Path, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = killWait
	// Both at once: an engine reads "usi", answers, then reads "uci"; a
	// UCI engine refuses "usi" in words and answers "uci".
	cmd.Stdin = strings.NewReader(DialectUSI.Hello + "\n" + DialectUCI.Hello + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("usi: start %s: %w", cfg.Path, err)
	}
	defer func() {
		cancel() // kills the group, if it still runs
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var last []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch line {
		case DialectUSI.HelloOK:
			return DialectUSI, nil
		case DialectUCI.HelloOK:
			return DialectUCI, nil
		}
		if line != "" && !strings.HasPrefix(line, "option ") && !strings.HasPrefix(line, "id ") {
			last = append(last, clip(line))
			if len(last) > 3 {
				last = last[1:]
			}
		}
	}
	err = fmt.Errorf("%w: neither usiok nor uciok within %v", ErrTimeout, timeout)
	if ctx.Err() == nil {
		err = fmt.Errorf("%w: the engine ended its output without usiok or uciok", ErrEngineExited)
	}
	if len(last) > 0 {
		return nil, &StartError{Err: err, LastWords: last}
	}
	return nil, err
}
