package usi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
	// Dialect is the protocol the engine speaks: DialectUSI (nil),
	// DialectUCI, DialectUSIX or DialectUOI. Detect tells which an engine
	// speaks.
	Dialect *Dialect

	USIOKTimeout   time.Duration // usi -> usiok (10s)
	ReadyOKTimeout time.Duration // isready -> readyok (30s; engines load books and nets here)
	StopTimeout    time.Duration // stop -> bestmove before the engine is killed (5s)
	QuitTimeout    time.Duration // quit -> exit before the engine is killed (2s)
	WriteTimeout   time.Duration // a line to the engine's stdin; a stuck engine is killed (5s)

	MaxLineBytes int // longer stdout lines are discarded (64 KiB)
	InfoBuffer   int // info lines queued per search for a lagging reader (128)

	Logger *slog.Logger // nil discards
	// Expected, when set, says why this engine's stderr and failures are
	// expected (a probe's spare engine, tried on what it may refuse:
	// gpsusi aborts on go depth with "terminate called ..."): its stderr
	// is logged at Info with this as "expected", not as a Warn.
	Expected string
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
	if c.Dialect == nil {
		c.Dialect = DialectUSI
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
	lg     atomic.Pointer[logging] // Relabel replaces it while readers log
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
	// readMore: the stdout reader holds another whole line after the one
	// it handles. Only the reader goroutine touches it.
	readMore bool

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
	scale      *ScoreScale // the engine's answer to the dialect's ScoreQuery
	lastWords  []string    // the latest lines that were not USI (stdout) or went to stderr
	closing    bool
	killReason string
	err        error // why the process is gone; nil while it runs
}

// logging is where an engine's log lines go, and Config.Expected.
type logging struct {
	log      *slog.Logger
	expected string
}

func (e *Engine) logger() *slog.Logger { return e.lg.Load().log }

// Relabel sends the engine's log lines to log from now on, with expected
// as Config.Expected: a probe's spare engine that goes on to serve
// (package pool) logs as a serving one.
func (e *Engine) Relabel(log *slog.Logger, expected string) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e.lg.Store(&logging{log.With("component", "usi", "engine", filepath.Base(e.cfg.Path), "pid", e.pid), expected})
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
	e.lg.Store(&logging{cfg.Logger.With("component", "usi", "engine", filepath.Base(cfg.Path), "pid", e.pid), cfg.Expected})
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
	e.logger().Info("engine started", "name", e.id.Name, "options", len(e.options))
	return e, nil
}

func (e *Engine) handshake(ctx context.Context) error {
	if err := e.write(e.cfg.Dialect.Hello); err != nil {
		return err
	}
	t := time.NewTimer(e.cfg.USIOKTimeout)
	defer t.Stop()
	select {
	case <-e.usiok:
		if q := e.cfg.Dialect.ScoreQuery; q != "" {
			// Not waited for: the answer comes before the readyok of the
			// first IsReady, and an engine that does not know the command
			// says nothing.
			return e.write(q)
		}
		return nil
	case <-e.done:
		return fmt.Errorf("usi: handshake: %w", e.Err())
	case <-t.C:
		return fmt.Errorf("%w: no %s within %v", ErrTimeout, e.cfg.Dialect.HelloOK, e.cfg.USIOKTimeout)
	case <-ctx.Done():
		return fmt.Errorf("usi: handshake: %w", ctx.Err())
	}
}

// ScoreScale returns the scale the engine declared for its bare scores
// (USI-X, UOI: "scoretype stones min -64 max 64"), asked for by Start; ok is
// false when the engine did not answer. Reliable after the first IsReady.
func (e *Engine) ScoreScale() (s ScoreScale, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.scale == nil {
		return ScoreScale{}, false
	}
	return *e.scale, true
}

// Dialect returns the protocol the engine speaks.
func (e *Engine) Dialect() *Dialect { return e.cfg.Dialect }

// PID returns the engine's process id (also its process group id).
func (e *Engine) PID() int { return e.pid }

// ID returns the engine's "id name" and "id author".
func (e *Engine) ID() ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.id
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
			e.logger().Debug("quit not sent", "err", werr)
		}
		t := time.NewTimer(e.cfg.QuitTimeout)
		select {
		case <-e.done:
		case <-t.C:
			e.logger().Warn("engine did not quit; killing it", "timeout", e.cfg.QuitTimeout)
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
