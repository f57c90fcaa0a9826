// The engine's pipes. One goroutine reads stdout and routes each message, one
// logs stderr, one waits for the process; writes are bounded by WriteTimeout.

package usi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// write sends one line (without its newline) to the engine.
func (e *Engine) write(line string) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	return e.writeLocked(line + "\n")
}

// writeLocked writes text (whole lines) to stdin with a deadline; e.writeMu
// must be held. An engine that stops reading its input is killed, since a
// partly written line would leave the stream in an unknown state.
func (e *Engine) writeLocked(text string) error {
	select {
	case <-e.done:
		return e.Err()
	default:
	}
	if err := e.stdin.SetWriteDeadline(time.Now().Add(e.cfg.WriteTimeout)); err != nil {
		return fmt.Errorf("%w: %v", ErrEngineExited, err)
	}
	if _, err := e.stdin.WriteString(text); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			e.kill("stdin write timed out")
			return fmt.Errorf("%w: engine did not read its input within %v", ErrTimeout, e.cfg.WriteTimeout)
		}
		return fmt.Errorf("%w: write: %v", ErrEngineExited, err)
	}
	if e.logger().Enabled(context.Background(), slog.LevelDebug) {
		for l := range strings.Lines(text) {
			e.logger().Debug("send", "line", strings.TrimSuffix(l, "\n"))
		}
	}
	return nil
}

// wait owns the process: it reaps it, lets the readers finish, then fails
// whatever was in flight and closes done.
func (e *Engine) wait() {
	defer e.wg.Done()
	werr := e.cmd.Wait()
	killGroup(e.pid) // whatever the engine left behind in its group

	// Read what the engine wrote before it died (say, a last bestmove), but
	// do not wait forever for a pipe held open by an escaped process.
	t := time.NewTimer(drainGrace)
	for _, d := range []chan struct{}{e.stdoutDone, e.stderrDone} {
		select {
		case <-d:
		case <-t.C:
		}
	}
	t.Stop()
	e.stdout.Close() // unblocks a reader still waiting
	e.stderr.Close()
	<-e.stdoutDone
	<-e.stderrDone
	e.stdin.Close()

	e.mu.Lock()
	err := fmt.Errorf("%w (status 0)", ErrEngineExited)
	if werr != nil {
		err = fmt.Errorf("%w: %w", ErrEngineExited, werr)
	}
	if e.killReason != "" {
		err = fmt.Errorf("%w (killed: %s)", err, e.killReason)
	}
	if e.closing {
		err = fmt.Errorf("%w: %w", ErrClosed, err)
	} else if len(e.lastWords) > 0 {
		err = fmt.Errorf("%w; the engine said: %s", err, strings.Join(e.lastWords, " | "))
	}
	e.err = err
	s := e.search
	e.search = nil
	e.mu.Unlock()
	e.logger().Info("engine exited", "err", err)
	// Done first: a caller whose search failed finds the engine marked gone.
	close(e.done)
	if s != nil {
		s.finish(Result{}, err)
	}
}

// readStdout owns stdout: it reads every line as it comes, so the engine
// never blocks on a full pipe, and hands messages out without blocking.
func (e *Engine) readStdout() {
	defer e.wg.Done()
	defer close(e.stdoutDone)
	r := bufio.NewReaderSize(e.stdout, e.cfg.MaxLineBytes)
	discarding := false
	for {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: drop it to its end, so that a
			// runaway engine cannot make us hold megabytes.
			if !discarding {
				e.logger().Warn("discarding over-long line from engine", "max_bytes", e.cfg.MaxLineBytes,
					"start", string(b[:min(len(b), 80)]))
				discarding = true
			}
			continue
		}
		if discarding {
			discarding = false // b is the end of the long line
		} else if len(b) > 0 {
			buffered, _ := r.Peek(r.Buffered())
			e.readMore = infoNext(buffered)
			e.handle(string(bytes.TrimRight(b, "\r\n")))
		}
		if err != nil {
			return // EOF, or closed after the process exited
		}
	}
}

// infoNext reports whether buffered (what the reader holds after the line
// it handles) starts with a whole info line: the engine wrote faster than
// its lines are delivered, and the next one will reach the search too (see
// Search.Deliver's more).
func infoNext(buffered []byte) bool {
	end := bytes.IndexByte(buffered, '\n')
	if end < 0 {
		return false
	}
	line := bytes.TrimLeft(buffered[:end], " \t")
	return bytes.HasPrefix(line, []byte("info")) && (len(line) == 4 || line[4] <= ' ')
}

// firstToken returns the first word of a line.
func firstToken(line string) string {
	sc := scanner{s: line}
	return sc.next()
}

// handle dispatches one line from the engine.
func (e *Engine) handle(line string) {
	msg, err := e.cfg.Dialect.ParseMessage(line)
	if err != nil {
		// A bestmove or checkmate we cannot read still ends the search:
		// the engine has stopped, and waiting would hang the caller.
		if tok := firstToken(line); tok == "bestmove" || tok == "checkmate" {
			e.logger().Warn("bad search result from engine", "line", clip(line))
			if s := e.ActiveSearch(); s != nil {
				e.endSearch(s, Result{}, err)
			}
			return
		}
		if line != "" {
			e.logger().Debug("ignored engine line", "line", clip(line))
			e.remember(line)
		}
		return
	}
	switch m := msg.(type) {
	case Info:
		if s := e.ActiveSearch(); s != nil {
			if m.Score.Scaled {
				if sc, ok := e.ScoreScale(); ok {
					m.Score = sc.Clamp(m.Score)
				}
			}
			s.push(m, e.readMore)
		}
		return
	case ScoreScale:
		e.mu.Lock()
		e.scale = &m
		e.mu.Unlock()
	case BestMove:
		e.finishActive(Result{BestMove: &m}, line)
	case Checkmate:
		e.finishActive(Result{Checkmate: &m}, line)
	case ReadyOK:
		e.mu.Lock()
		e.readyGot++
		close(e.readyCh)
		e.readyCh = make(chan struct{})
		e.mu.Unlock()
	case ID:
		e.mu.Lock()
		if !e.handshaken {
			if m.Name != "" {
				e.id.Name = m.Name
			}
			if m.Author != "" {
				e.id.Author = m.Author
			}
		}
		e.mu.Unlock()
	case Option:
		e.mu.Lock()
		if !e.handshaken {
			if i := slices.IndexFunc(e.options, func(o Option) bool { return strings.EqualFold(o.Name, m.Name) }); i >= 0 {
				e.options[i] = m // the engine repeated it: the last one counts
			} else {
				e.options = append(e.options, m)
			}
		}
		e.mu.Unlock()
	case USIOK:
		e.mu.Lock()
		if !e.handshaken {
			e.handshaken = true
			e.values = make(map[string]string, len(e.options))
			for _, o := range e.options {
				if o.Type != TypeButton {
					e.values[o.Name] = o.Default
				}
			}
			close(e.usiok)
		}
		e.mu.Unlock()
	case CopyProtection, Registration:
		if strings.HasSuffix(line, "error") {
			e.logger().Warn("engine reports", "line", line)
		}
	}
	e.logger().Debug("recv", "line", clip(line))
}

func (e *Engine) finishActive(res Result, line string) {
	if s := e.ActiveSearch(); s != nil {
		e.endSearch(s, res, nil)
		return
	}
	e.logger().Debug("search result with no search in flight", "line", line)
}

// maxLastWords is how many of an engine's non-USI lines are kept for
// diagnostics ("Error! : failed to read nn.bin").
const maxLastWords = 16

// remember keeps a line that is not USI (from stdout or stderr), so that an
// engine that fails can be reported with its own last words.
func (e *Engine) remember(line string) {
	line = clip(line)
	e.mu.Lock()
	if len(e.lastWords) == maxLastWords {
		e.lastWords = slices.Delete(e.lastWords, 0, 1)
	}
	e.lastWords = append(e.lastWords, line)
	e.mu.Unlock()
}

// LastWords returns the latest lines the engine wrote that were not USI
// messages (stdout) or went to stderr, oldest first: what an engine says
// when it cannot load its files or does not speak USI.
func (e *Engine) LastWords() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.lastWords)
}

// readStderr logs the engine's stderr, one capped line per record.
func (e *Engine) readStderr() {
	defer e.wg.Done()
	defer close(e.stderrDone)
	r := bufio.NewReaderSize(e.stderr, maxStderrLine)
	cut := false
	for {
		b, err := r.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if !cut && len(b) > 0 {
			line := string(bytes.TrimRight(b, "\r\n"))
			if full {
				line += " [cut]"
			}
			if lg := e.lg.Load(); lg.expected != "" {
				lg.log.Info("engine stderr", "line", line, "expected", lg.expected)
			} else {
				e.logger().Warn("engine stderr", "line", line)
			}
			e.remember(line)
		}
		cut = full // the rest of a long line is not logged
		if err != nil && !full {
			return
		}
	}
}
