package usi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config says how to run an engine. Zero durations and sizes take the
// defaults shown.
type Config struct {
	Path string   // the engine binary
	Args []string // its arguments
	Dir  string   // working directory; "" is this process's
	Env  []string // environment; nil inherits this process's (as exec.Cmd)

	USIOKTimeout   time.Duration // usi -> usiok (10s)
	ReadyOKTimeout time.Duration // isready -> readyok (30s; engines load books and nets here)
	StopTimeout    time.Duration // stop -> bestmove before the engine is killed (5s)
	QuitTimeout    time.Duration // quit -> exit before the engine is killed (2s)
	WriteTimeout   time.Duration // a line to the engine's stdin; a stuck engine is killed (5s)

	MaxLineBytes int // longer stdout lines are discarded (64 KiB)
	InfoBuffer   int // info lines queued per search for a lagging reader (128)

	Logger *slog.Logger // nil discards
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.USIOKTimeout, 10*time.Second)
	def(&c.ReadyOKTimeout, 30*time.Second)
	def(&c.StopTimeout, 5*time.Second)
	def(&c.QuitTimeout, 2*time.Second)
	def(&c.WriteTimeout, 5*time.Second)
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 64 << 10
	}
	if c.InfoBuffer <= 0 {
		c.InfoBuffer = 128
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

const (
	// drainGrace is how long, after the engine exited, we keep reading what
	// it wrote last. EOF normally comes at once; only a process that escaped
	// the group and holds the pipe makes us wait this long.
	drainGrace = 200 * time.Millisecond
	// maxStderrLine caps one logged stderr line.
	maxStderrLine = 1024
	// killWait is exec.Cmd.WaitDelay: the bound on Wait after a kill.
	killWait = 2 * time.Second
)

// Engine is one running USI engine process. See the package documentation
// for what is safe to call concurrently.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	cmd    *exec.Cmd
	pid    int
	cancel context.CancelFunc // kills the process group (through cmd.Cancel)

	stdin          *os.File
	stdout, stderr *os.File
	stdoutDone     chan struct{}
	stderrDone     chan struct{}
	done           chan struct{} // closed once the process is gone and work in flight failed
	usiok          chan struct{} // closed on usiok
	wg             sync.WaitGroup
	closeOnce      sync.Once
	closeErr       error

	writeMu sync.Mutex // one writer of stdin at a time; taken before mu

	mu         sync.Mutex
	handshaken bool
	id         ID
	options    []Option
	values     map[string]string // current option values, by advertised name
	readySent  uint64            // isready lines sent
	readyGot   uint64            // readyok lines received
	readyCh    chan struct{}     // closed and replaced on each readyok
	search     *Search
	lastWords  []string // the latest lines that were not USI (stdout) or went to stderr
	closing    bool
	killReason string
	err        error // why the process is gone; nil while it runs
}

// Start starts the engine in its own process group and performs the USI
// handshake (usi, then id and option lines, then usiok). ctx bounds only the
// start; the process lives until Close or Kill. On error nothing is left
// running. Start does not send isready: set options, then call IsReady.
func Start(ctx context.Context, cfg Config) (*Engine, error) {
	cfg = cfg.withDefaults()
	if cfg.Path == "" {
		return nil, errors.New("usi: no engine path")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The process's own context: cancelling it kills the group. It is not
	// ctx, which only bounds the start.
	pctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(pctx, cfg.Path, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, cfg.Env
	// Own process group, so that a kill also takes whatever the engine
	// spawned (fishnet does the same).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = killWait

	// Our own pipes (*os.File), so that exec starts no copying goroutines
	// and Wait does not close what our readers are still reading.
	var files []*os.File
	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(files) != 6 {
		closeAll()
		cancel()
		return nil, errors.New("usi: cannot create pipes")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err := cmd.Start()
	// The child has its ends now; holding them would keep EOF from coming.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		closeAll()
		cancel()
		return nil, fmt.Errorf("usi: start %s: %w", cfg.Path, err)
	}

	e := &Engine{
		cfg:        cfg,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		cancel:     cancel,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		done:       make(chan struct{}),
		usiok:      make(chan struct{}),
		readyCh:    make(chan struct{}),
	}
	e.log = cfg.Logger.With("component", "usi", "engine", filepath.Base(cfg.Path), "pid", e.pid)
	e.wg.Add(3)
	go e.readStdout()
	go e.readStderr()
	go e.wait()

	if err := e.handshake(ctx); err != nil {
		e.kill("handshake failed")
		<-e.done
		e.wg.Wait()
		cancel()
		return nil, &StartError{Err: err, LastWords: e.LastWords()}
	}
	e.log.Info("engine started", "name", e.id.Name, "options", len(e.options))
	return e, nil
}

func (e *Engine) handshake(ctx context.Context) error {
	if err := e.write("usi"); err != nil {
		return err
	}
	t := time.NewTimer(e.cfg.USIOKTimeout)
	defer t.Stop()
	select {
	case <-e.usiok:
		return nil
	case <-e.done:
		return fmt.Errorf("usi: handshake: %w", e.Err())
	case <-t.C:
		return fmt.Errorf("%w: no usiok within %v", ErrTimeout, e.cfg.USIOKTimeout)
	case <-ctx.Done():
		return fmt.Errorf("usi: handshake: %w", ctx.Err())
	}
}

// PID returns the engine's process id (also its process group id).
func (e *Engine) PID() int { return e.pid }

// ID returns the engine's "id name" and "id author".
func (e *Engine) ID() ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.id
}

// Options returns the options the engine advertised, in its order.
func (e *Engine) Options() []Option {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Option, len(e.options))
	for i, o := range e.options {
		o.Vars = slices.Clone(o.Vars)
		out[i] = o
	}
	return out
}

// OptionValue returns the current value of an option as this Engine knows it:
// its default until SetOption changed it. Names match case-insensitively.
// USI has no command to read options back from the engine.
func (e *Engine) OptionValue(name string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.findOption(name)
	if !ok {
		return "", false
	}
	return e.values[o.Name], true
}

// findOption looks an option up by name, case-insensitively as USI says.
// e.mu must be held.
func (e *Engine) findOption(name string) (Option, bool) {
	for _, o := range e.options {
		if strings.EqualFold(o.Name, name) {
			return o, true
		}
	}
	return Option{}, false
}

// SetOption sets an advertised option after checking the value against what
// the engine advertised: "true"/"false" for check, an integer within
// min..max for spin, one of the vars for combo, no value for button. An
// empty string or filename value is sent as "setoption name <id>" without a
// value: fairy-stockfish would take "<empty>" for a file name. It fails with
// ErrBusy during a search, since USI sends setoption only to a waiting
// engine. Follow it with IsReady to know the engine has applied it.
func (e *Engine) SetOption(name, value string) error {
	e.mu.Lock()
	o, ok := e.findOption(name)
	busy := e.search != nil
	e.mu.Unlock()
	if !ok && (name == "USI_Hash" || name == "USI_Ponder") {
		// GUIs send these two reserved options to every engine, advertised
		// or not; an engine that does not know them ignores them.
		o, ok = Option{Name: name, Type: TypeSpin}, true
		if name == "USI_Ponder" {
			o.Type = TypeCheck
		}
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownOption, clip(name))
	}
	if busy {
		return ErrBusy
	}
	value, err := checkOptionValue(o, value)
	if err != nil {
		return err
	}
	line, err := SetOption{Name: o.Name, Value: value}.Line()
	if err != nil {
		return err
	}
	if err := e.write(line); err != nil {
		return err
	}
	if o.Type != TypeButton {
		e.mu.Lock()
		e.values[o.Name] = value
		e.mu.Unlock()
	}
	return nil
}

// checkOptionValue validates v for option o and returns it as it should be
// sent.
func checkOptionValue(o Option, v string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: option %s (%s): value %q %s", ErrBadCommand, o.Name, o.Type, clip(v), why)
	}
	switch o.Type {
	case TypeButton:
		if v != "" {
			return "", bad("given for a button")
		}
		return "", nil
	case TypeCheck:
		switch strings.ToLower(v) {
		case "true", "false":
			return strings.ToLower(v), nil
		}
		return "", bad("is not true or false")
	case TypeSpin:
		n, ok := parseInt(v)
		if !ok {
			return "", bad("is not an integer")
		}
		if (o.HasMin && n < o.Min) || (o.HasMax && n > o.Max) {
			return "", bad(fmt.Sprintf("is outside %d..%d", o.Min, o.Max))
		}
		return strconv.FormatInt(n, 10), nil
	case TypeCombo:
		for _, w := range o.Vars {
			if strings.EqualFold(w, v) {
				return w, nil
			}
		}
		return "", bad("is not one of " + strings.Join(o.Vars, ", "))
	default: // string, filename
		if v == "" {
			return "", nil
		}
		if err := checkText("option value", v); err != nil {
			return "", err
		}
		return v, nil
	}
}

// ResetOptions sets every option whose value SetOption changed back to its
// default, so that a leased engine goes back to the pool as it came.
func (e *Engine) ResetOptions() error {
	e.mu.Lock()
	var changed []Option
	for _, o := range e.options {
		if o.Type != TypeButton && e.values[o.Name] != o.Default {
			changed = append(changed, o)
		}
	}
	e.mu.Unlock()
	for _, o := range changed {
		if err := e.SetOption(o.Name, o.Default); err != nil {
			return err
		}
	}
	return nil
}

// IsReady sends "isready" and waits for "readyok", at most
// Config.ReadyOKTimeout (ErrTimeout) or until ctx is done. It is the health
// check, and the way to wait for options and usinewgame to be applied. It
// may be called during a search: the engine answers without stopping.
func (e *Engine) IsReady(ctx context.Context) error {
	e.writeMu.Lock()
	e.mu.Lock()
	e.readySent++
	n := e.readySent
	e.mu.Unlock()
	err := e.writeLocked("isready\n")
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	t := time.NewTimer(e.cfg.ReadyOKTimeout)
	defer t.Stop()
	for {
		// readyok lines answer isready lines in order, so a late answer to
		// an isready that timed out is not taken for this one.
		e.mu.Lock()
		got, ch := e.readyGot >= n, e.readyCh
		e.mu.Unlock()
		if got {
			return nil
		}
		select {
		case <-ch:
		case <-e.done:
			return e.Err()
		case <-t.C:
			return fmt.Errorf("%w: no readyok within %v (an engine loading large evaluation files or allocating a big hash may need a longer ready timeout)", ErrTimeout, e.cfg.ReadyOKTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NewGame sends "usinewgame". Follow it with IsReady.
func (e *Engine) NewGame() error { return e.sendIdle(USINewGame{}) }

// GameOver sends "gameover win|lose|draw".
func (e *Engine) GameOver(r GameResult) error { return e.sendIdle(GameOver{Result: r}) }

// sendIdle sends a command that USI allows only between searches.
func (e *Engine) sendIdle(c Command) error {
	line, err := c.Line()
	if err != nil {
		return err
	}
	e.mu.Lock()
	busy := e.search != nil
	e.mu.Unlock()
	if busy {
		return ErrBusy
	}
	return e.write(line)
}

// Go sends the position and go commands and returns the search in flight.
// Both commands are validated before anything is sent. One search at a time:
// while one is in flight (including one stopping) Go fails with ErrBusy.
// When ctx is done the search is stopped as by Search.Stop; its result is
// still the engine's bestmove. A "go mate" search ends with Checkmate (or
// with BestMove, from engines such as fairy-stockfish).
func (e *Engine) Go(ctx context.Context, pos Position, g Go) (*Search, error) {
	posLine, err := pos.Line()
	if err != nil {
		return nil, err
	}
	goLine, err := g.Line()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// writeMu first: a Stop from another goroutine must not reach the
	// engine before this go.
	e.writeMu.Lock()
	e.mu.Lock()
	if err := e.errLocked(); err != nil {
		e.mu.Unlock()
		e.writeMu.Unlock()
		return nil, err
	}
	if e.search != nil {
		e.mu.Unlock()
		e.writeMu.Unlock()
		return nil, ErrBusy
	}
	s := newSearch(e, g.Ponder)
	e.search = s
	e.mu.Unlock()
	err = e.writeLocked(posLine + "\n" + goLine + "\n")
	e.writeMu.Unlock()
	if err != nil {
		e.endSearch(s, Result{}, err)
		return nil, err
	}
	s.watch(ctx)
	return s, nil
}

// ActiveSearch returns the search in flight, or nil.
func (e *Engine) ActiveSearch() *Search {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.search
}

// Stop stops the search in flight, if any (see Search.Stop). Safe from any
// goroutine.
func (e *Engine) Stop() {
	if s := e.ActiveSearch(); s != nil {
		s.Stop()
	}
}

// endSearch ends s, if it is still the search in flight, with res or err.
func (e *Engine) endSearch(s *Search, res Result, err error) bool {
	e.mu.Lock()
	if e.search == s {
		e.search = nil
	}
	e.mu.Unlock()
	return s.finish(res, err)
}

// Done is closed when the engine process has exited (Err then says why),
// just before the search in flight fails.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Err returns nil while the process runs. After it exited it returns an
// error wrapping ErrEngineExited (and the *exec.ExitError with its status),
// and also ErrClosed if Close ended it.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// errLocked is the error for a new call: the exit, or ErrClosed. e.mu held.
func (e *Engine) errLocked() error {
	if e.err != nil {
		return e.err
	}
	if e.closing {
		return ErrClosed
	}
	return nil
}

// Kill kills the engine's process group (SIGKILL) and returns at once; Done
// is closed when it is gone. Work in flight fails with ErrEngineExited.
// Close must still be called. Safe from any goroutine.
func (e *Engine) Kill() { e.kill("Kill called") }

func (e *Engine) kill(reason string) {
	e.mu.Lock()
	if e.killReason == "" && e.err == nil {
		e.killReason = reason
	}
	e.mu.Unlock()
	e.cancel() // cmd.Cancel: kill the group
}

func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Close ends the engine: a search in flight fails with ErrClosed, "quit" is
// sent, and if the process has not exited within Config.QuitTimeout its
// group is killed. It returns when the process and this Engine's goroutines
// are gone. It returns nil, or an error wrapping ErrTimeout when the engine
// had to be killed. Safe from any goroutine, and more than once.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() { e.closeErr = e.close() })
	return e.closeErr
}

func (e *Engine) close() error {
	e.mu.Lock()
	e.closing = true
	s := e.search
	e.mu.Unlock()
	if s != nil {
		e.endSearch(s, Result{}, fmt.Errorf("%w: search abandoned", ErrClosed))
	}
	var err error
	select {
	case <-e.done:
	default:
		if werr := e.write("quit"); werr != nil {
			e.log.Debug("quit not sent", "err", werr)
		}
		t := time.NewTimer(e.cfg.QuitTimeout)
		select {
		case <-e.done:
		case <-t.C:
			e.log.Warn("engine did not quit; killing it", "timeout", e.cfg.QuitTimeout)
			e.kill("no exit after quit")
			err = fmt.Errorf("%w: engine did not exit within %v after quit; killed", ErrTimeout, e.cfg.QuitTimeout)
			<-e.done
		}
		t.Stop()
	}
	e.wg.Wait()
	e.cancel()
	return err
}

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
	if e.log.Enabled(context.Background(), slog.LevelDebug) {
		for l := range strings.Lines(text) {
			e.log.Debug("send", "line", strings.TrimSuffix(l, "\n"))
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
	e.log.Info("engine exited", "err", err)
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
				e.log.Warn("discarding over-long line from engine", "max_bytes", e.cfg.MaxLineBytes,
					"start", string(b[:min(len(b), 80)]))
				discarding = true
			}
			continue
		}
		if discarding {
			discarding = false // b is the end of the long line
		} else if len(b) > 0 {
			e.handle(string(bytes.TrimRight(b, "\r\n")))
		}
		if err != nil {
			return // EOF, or closed after the process exited
		}
	}
}

// firstToken returns the first word of a line.
func firstToken(line string) string {
	sc := scanner{s: line}
	return sc.next()
}

// handle dispatches one line from the engine.
func (e *Engine) handle(line string) {
	msg, err := ParseMessage(line)
	if err != nil {
		// A bestmove or checkmate we cannot read still ends the search:
		// the engine has stopped, and waiting would hang the caller.
		if tok := firstToken(line); tok == "bestmove" || tok == "checkmate" {
			e.log.Warn("bad search result from engine", "line", clip(line))
			if s := e.ActiveSearch(); s != nil {
				e.endSearch(s, Result{}, err)
			}
			return
		}
		if line != "" {
			e.log.Debug("ignored engine line", "line", clip(line))
			e.remember(line)
		}
		return
	}
	switch m := msg.(type) {
	case Info:
		if s := e.ActiveSearch(); s != nil {
			s.push(m)
		}
		return
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
			e.log.Warn("engine reports", "line", line)
		}
	}
	e.log.Debug("recv", "line", clip(line))
}

func (e *Engine) finishActive(res Result, line string) {
	if s := e.ActiveSearch(); s != nil {
		e.endSearch(s, res, nil)
		return
	}
	e.log.Debug("search result with no search in flight", "line", line)
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

// StartError is a failed Start with what the engine printed before it failed.
type StartError struct {
	Err       error
	LastWords []string
}

func (e *StartError) Error() string {
	if len(e.LastWords) == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v; the engine said: %s", e.Err, strings.Join(e.LastWords, " | "))
}

func (e *StartError) Unwrap() error { return e.Err }

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
			e.log.Warn("engine stderr", "line", line)
			e.remember(line)
		}
		cut = full // the rest of a long line is not logged
		if err != nil && !full {
			return
		}
	}
}
