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

// Detect learns which dialect an engine speaks. It starts the engine
// described by cfg once (cfg.Dialect is ignored) and sends "usi", "uci" and
// "uoi" at once: an engine reads them in turn, answers its own and ignores
// or refuses the others in words (the othello engines say nothing to a
// command they do not know). "uciok" is UCI, "uoiok" the UOI draft.
//
// "usiok" is USI (shogi) or USI-X (othello): both answer it alike. Detect
// then sends "score_scale_and_type" and "isready"; a "scoretype" line before
// "readyok" is USI-X. Otherwise it asks for a short search from the start
// position in words both games share ("usinewgame", "position startpos
// moves", "go btime 0 wtime 0 byoyomi 100": no space inside a position, no
// upper-case move, nothing an othello engine crashes on): a bestmove that is
// an othello square or "pass" is USI-X, anything else (a shogi move, as
// "7g7f") USI. An engine that speaks USI and UCI (fairy-stockfish) answers
// "usi" first and is taken for a USI engine: to serve it as a chess engine,
// name the dialect in cfg (the pool's `protocol: uci`) and Detect is not
// asked.
//
// The process is killed before Detect returns. It fails when no hello was
// answered within timeout, with the engine's last words; after a usiok, when
// the search did not answer in time, it fails with an error wrapping
// ErrUndecided (and ErrTimeout): the engine is USI or USI-X.
func Detect(ctx context.Context, cfg Config, timeout time.Duration) (*Dialect, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Path, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = killWait
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("usi: start %s: %w", cfg.Path, err)
	}
	lines := make(chan string)
	readDone := make(chan struct{})
	defer func() {
		cancel() // kills the group, if it still runs
		cmd.Wait()
		<-readDone // Wait closed stdout
	}()
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- strings.TrimSpace(sc.Text()):
			case <-ctx.Done():
				return
			}
		}
		close(lines)
	}()
	// A write that fails means the engine is gone: its output says the rest.
	send := func(s string) { in.Write([]byte(s)) }

	send(DialectUSI.Hello + "\n" + DialectUCI.Hello + "\n" + DialectUOI.Hello + "\n")
	var last []string
	stage := 0 // 0: waiting for a hello's answer; 1: for readyok; 2: for bestmove
	for {
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
		}
		if !ok {
			break
		}
		switch stage {
		case 0:
			switch line {
			case DialectUSI.HelloOK:
				stage = 1
				send(DialectUSIX.ScoreQuery + "\nisready\n")
				continue
			case DialectUCI.HelloOK:
				return DialectUCI, nil
			case DialectUOI.HelloOK:
				return DialectUOI, nil
			}
		case 1:
			m, _ := DialectUSIX.ParseMessage(line)
			switch m.(type) {
			case ScoreScale:
				return DialectUSIX, nil
			case ReadyOK:
				stage = 2
				send(DialectUSIX.NewGame + "\nposition startpos moves\ngo btime 0 wtime 0 byoyomi 100\n")
				continue
			}
		case 2:
			// Read as USI: an othello square is not a USI move, so the
			// move is taken from the line as written.
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "bestmove" {
				if IsOthelloMove(f[1]) {
					return DialectUSIX, nil
				}
				return DialectUSI, nil
			}
		}
		if line != "" && !strings.HasPrefix(line, "option ") && !strings.HasPrefix(line, "id ") && !strings.HasPrefix(line, "info ") {
			last = append(last, clip(line))
			if len(last) > 3 {
				last = last[1:]
			}
		}
	}
	switch {
	case stage > 0 && ctx.Err() != nil:
		err = fmt.Errorf("%w: %w: usiok, but no readyok and bestmove within %v", ErrUndecided, ErrTimeout, timeout)
	case stage > 0:
		err = fmt.Errorf("%w: usiok, then the engine ended its output before its bestmove", ErrUndecided)
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: neither usiok, uciok nor uoiok within %v", ErrTimeout, timeout)
	default:
		err = fmt.Errorf("%w: the engine ended its output without usiok, uciok or uoiok", ErrEngineExited)
	}
	if len(last) > 0 {
		return nil, &StartError{Err: err, LastWords: last}
	}
	return nil, err
}
