package usi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/testwait"
)

// ctxTimeout is a test context with a generous deadline.
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestFakeNoUSIOK(t *testing.T) {
	cfg, pid := fakeConfig(t, fakeengine.NoUSIOK)
	cfg.USIOKTimeout = 300 * time.Millisecond
	start := time.Now()
	e, err := Start(t.Context(), cfg)
	if e != nil {
		e.Close()
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Start: got %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Start took %v, want about the 300ms timeout", d)
	}
	checkGone(t, pid())
}

func TestFakeExitAtStart(t *testing.T) {
	cfg, pid := fakeConfig(t, fakeengine.ExitNow)
	_, err := Start(t.Context(), cfg)
	var exit *exec.ExitError
	if !errors.Is(err, ErrEngineExited) || !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("Start: got %v, want ErrEngineExited with exit status 7", err)
	}
	checkGone(t, pid())
}

// syncBuffer collects log output from the engine's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestFakeStderrLogged(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Stderr)
	var buf syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	e := startEngine(t, cfg)
	closeAndCheck(t, e)
	var lines []string
	for l := range strings.Lines(buf.String()) {
		if strings.Contains(l, "engine stderr") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 || !strings.Contains(lines[0], "hello from stderr") || !strings.Contains(lines[2], "after the long line") {
		t.Fatalf("stderr records: got %q, want hello, the long line cut, after", lines)
	}
	if l := lines[1]; len(l) > 2*maxStderrLine || !strings.Contains(l, "[cut]") {
		t.Errorf("long stderr line: got a %d-byte record, want one cut near %d bytes", len(l), maxStderrLine)
	}
}

func TestStartMissingBinary(t *testing.T) {
	_, err := Start(t.Context(), Config{Path: "/nonexistent/engine"})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Start: got %v, want an error wrapping os.ErrNotExist", err)
	}
}

func TestFakeHandshake(t *testing.T) {
	for _, mode := range []string{fakeengine.Normal, fakeengine.CRLF, fakeengine.Garbage} {
		t.Run(mode, func(t *testing.T) {
			cfg, _ := fakeConfig(t, mode)
			e := startEngine(t, cfg)
			if got, want := e.ID(), (ID{Name: "Fake " + mode, Author: "usid tests"}); got != want {
				t.Errorf("ID: got %+v, want %+v", got, want)
			}
			opts := e.Options()
			if len(opts) < 2 {
				t.Fatalf("Options: got %d, want at least 2: %+v", len(opts), opts)
			}
			want := Option{Name: "USI_Hash", Type: TypeSpin, Default: "16", Min: 1, Max: 65536, HasMin: true, HasMax: true}
			if got := opts[0]; got.String() != want.String() {
				t.Errorf("option 0: got %q, want %q", got, want)
			}
			if err := e.IsReady(ctxTimeout(t, 5*time.Second)); err != nil {
				t.Fatalf("IsReady: %v", err)
			}
			s, err := e.Go(t.Context(), Position{}, Go{Depth: 3})
			if err != nil {
				t.Fatalf("Go: %v", err)
			}
			var infos []Info
			for in, ok := s.Next(t.Context()); ok; in, ok = s.Next(t.Context()) {
				infos = append(infos, in)
			}
			res, err := s.Wait(t.Context())
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if got, want := *res.BestMove, (BestMove{Move: "7g7f", Ponder: "3c3d"}); got != want {
				t.Errorf("bestmove: got %+v, want %+v", got, want)
			}
			if len(infos) == 0 {
				t.Errorf("infos: got none, want at least one")
			}
			if mode == fakeengine.Garbage {
				// The 1 MB line between the two info lines is dropped whole;
				// the line after it arrives intact.
				if len(infos) != 2 || infos[1].String() != "info depth 2 score cp 5 pv 7g7f 3c3d" {
					t.Errorf("infos around a 1 MB line: got %q, want depth 1 and depth 2", infos)
				}
			}
		})
	}
}

func TestFakeSlowReadyOK(t *testing.T) {
	// The first readyok comes far later than the timeout, so that the
	// first IsReady fails however slowly this test runs.
	cfg, _ := fakeConfig(t, fakeengine.SlowFirstReady+"=2s")
	cfg.ReadyOKTimeout = 150 * time.Millisecond
	e := startEngine(t, cfg)
	if err := e.IsReady(t.Context()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("first IsReady: got %v, want ErrTimeout", err)
	}
	// Once the late readyok has come, it is not taken for the answer to the
	// next isready, which the engine answers at once.
	testwait.For(t, "the late readyok", 10*time.Second, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.readyGot == 1
	})
	if err := e.IsReady(t.Context()); err != nil {
		t.Fatalf("second IsReady: got %v, want nil", err)
	}
	if err := e.Err(); err != nil {
		t.Errorf("Err after a slow readyok: got %v, want nil (the engine is alive)", err)
	}
}

func TestFakeIgnoresStop(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.IgnoreStop)
	cfg.StopTimeout = 300 * time.Millisecond
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Next(t.Context()); !ok {
		t.Fatal("no info before stop")
	}
	s.Stop()
	_, err = s.Wait(ctxTimeout(t, 10*time.Second))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Wait after an ignored stop: got %v, want ErrTimeout", err)
	}
	select {
	case <-e.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("engine not killed after ignoring stop")
	}
	if err := e.Err(); !errors.Is(err, ErrEngineExited) {
		t.Errorf("Err: got %v, want ErrEngineExited", err)
	}
}

func TestFakeDiesMidSearch(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.DieMidSearch)
	e := startEngine(t, cfg)
	start := time.Now()
	s, err := e.Go(t.Context(), Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ok := s.Next(t.Context()); ok; _, ok = s.Next(t.Context()) {
		n++
	}
	_, err = s.Wait(ctxTimeout(t, 5*time.Second))
	var exit *exec.ExitError
	if !errors.Is(err, ErrEngineExited) || !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("Wait: got %v, want ErrEngineExited with status 3", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("crash seen after %v, want at once", d)
	}
	if n != 3 {
		t.Errorf("info lines before the crash: got %d, want 3", n)
	}
	if _, err := e.Go(t.Context(), Position{}, Go{}); !errors.Is(err, ErrEngineExited) {
		t.Errorf("Go after the crash: got %v, want ErrEngineExited", err)
	}
	if err := e.IsReady(t.Context()); !errors.Is(err, ErrEngineExited) {
		t.Errorf("IsReady after the crash: got %v, want ErrEngineExited", err)
	}
}

func TestFakeBadBestMove(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.BadBestMove)
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(ctxTimeout(t, 5*time.Second)); !errors.Is(err, ErrSyntax) {
		t.Fatalf("Wait: got %v, want ErrSyntax", err)
	}
	if s := e.ActiveSearch(); s != nil {
		t.Errorf("ActiveSearch after the bad bestmove: got a search, want none")
	}
}

func TestFakeInfoFlood(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Flood)
	cfg.InfoBuffer = 64
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{})
	if err != nil {
		t.Fatal(err)
	}
	// A slow reader: the engine must not wait for it.
	for range 20 {
		if _, ok := s.Next(t.Context()); !ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	res, err := s.Wait(ctxTimeout(t, 30*time.Second))
	if err != nil || res.BestMove == nil || res.BestMove.Move != "7g7f" {
		t.Fatalf("Wait: got %+v, %v, want bestmove 7g7f", res, err)
	}
	last := map[int]int64{} // multipv -> nodes of the last line read
	for in, ok := s.Next(t.Context()); ok; in, ok = s.Next(t.Context()) {
		last[in.MultiPV] = in.Nodes
	}
	s.mu.Lock()
	high := s.q.highWater
	s.mu.Unlock()
	if high > cfg.InfoBuffer {
		t.Errorf("queued info lines: got at most %d, want at most %d", high, cfg.InfoBuffer)
	}
	if s.Dropped() == 0 {
		t.Errorf("Dropped: got 0, want lines dropped for a slow reader")
	}
	// The newest line of each multipv survives the coalescing.
	if last[1] != 200000 || last[2] != 199999 {
		t.Errorf("last info read per multipv: got %v, want 1:200000 2:199999", last)
	}
	if len(res.Lines) != 2 || res.Lines[0].Nodes != 200000 || res.Lines[1].Nodes != 199999 {
		t.Errorf("Result.Lines: got %v, want multipv 1 and 2 from the end of the flood", res.Lines)
	}
}

func TestFakeIgnoresQuit(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.IgnoreQuit)
	cfg.QuitTimeout = 200 * time.Millisecond
	e, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); !errors.Is(err, ErrTimeout) {
		t.Errorf("Close: got %v, want ErrTimeout (killed after quit)", err)
	}
	if err := e.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrEngineExited) {
		t.Errorf("Err after Close: got %v, want ErrClosed and ErrEngineExited", err)
	}
	checkGone(t, e.PID())
}

func TestFakeGrandchildKilled(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Grandchild)
	e := startEngine(t, cfg)
	child, err := strconv.Atoi(strings.TrimPrefix(e.ID().Author, "child "))
	if err != nil {
		t.Fatalf("child pid in %q: %v", e.ID().Author, err)
	}
	closeAndCheck(t, e)
	checkGone(t, child)
}

func TestFakeDeafEngineKilled(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Deaf)
	cfg.WriteTimeout = 200 * time.Millisecond
	e := startEngine(t, cfg)
	// The engine no longer reads: once the pipe is full, a write times out
	// and the engine is killed.
	long := strings.Repeat("z", 32<<10)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = e.SetOption("Book File", long)
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("SetOption on a deaf engine: got %v, want ErrTimeout", err)
	}
	select {
	case <-e.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("deaf engine not killed")
	}
}

func TestFakeCloseDuringSearch(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Normal)
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	closeAndCheck(t, e)
	if _, err := s.Wait(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close: got %v, want ErrClosed", err)
	}
	if _, err := e.Go(t.Context(), Position{}, Go{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Go after Close: got %v, want ErrClosed", err)
	}
}

func TestFakeKillDuringSearch(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Normal)
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Kill()
	_, err = s.Wait(ctxTimeout(t, 5*time.Second))
	if !errors.Is(err, ErrEngineExited) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Wait after Kill: got %v, want ErrEngineExited (killed)", err)
	}
	<-e.Done()
	checkGone(t, e.PID())
}

func TestFakeKilledFromOutside(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Normal)
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, err = s.Wait(ctxTimeout(t, 5*time.Second))
	if !errors.Is(err, ErrEngineExited) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("Wait after kill -9: got %v, want ErrEngineExited (signal: killed)", err)
	}
	select {
	case <-e.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after kill -9")
	}
}

func TestFakeStopAndCancel(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Normal)
	e := startEngine(t, cfg)
	tests := []struct {
		name string
		end  func(s *Search, cancel context.CancelFunc)
	}{
		{"Search.Stop", func(s *Search, _ context.CancelFunc) { s.Stop() }},
		{"Engine.Stop", func(_ *Search, _ context.CancelFunc) { e.Stop() }},
		{"cancel ctx", func(_ *Search, cancel context.CancelFunc) { cancel() }},
		{"ponderhit", func(s *Search, _ context.CancelFunc) {
			if err := s.Ponderhit(); err != nil {
				t.Errorf("Ponderhit: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := e.Go(ctx, Position{}, Go{Ponder: true, Clock: &Clock{BTime: time.Second, WTime: time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Go(ctx, Position{}, Go{}); !errors.Is(err, ErrBusy) {
				t.Errorf("second Go during a search: got %v, want ErrBusy", err)
			}
			if err := e.SetOption("USI_Hash", "32"); !errors.Is(err, ErrBusy) {
				t.Errorf("SetOption during a search: got %v, want ErrBusy", err)
			}
			if err := e.NewGame(); !errors.Is(err, ErrBusy) {
				t.Errorf("NewGame during a search: got %v, want ErrBusy", err)
			}
			if err := e.IsReady(ctx); err != nil {
				t.Errorf("IsReady during a search: got %v, want nil", err)
			}
			tt.end(s, cancel)
			res, err := s.Wait(ctxTimeout(t, 5*time.Second))
			if err != nil || res.BestMove == nil || *res.BestMove != (BestMove{Move: "7g7f", Ponder: "3c3d"}) {
				t.Fatalf("Wait: got %+v, %v, want bestmove 7g7f ponder 3c3d", res, err)
			}
			if len(res.Lines) != 1 || res.Lines[0].PV[0] != "7g7f" {
				t.Errorf("Result.Lines: got %v, want the last pv 7g7f 3c3d", res.Lines)
			}
		})
	}
}

func TestFakeSetOption(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Normal)
	e := startEngine(t, cfg)
	tests := []struct {
		name, value string
		wantErr     error
		wantValue   string // as OptionValue reads it afterwards
	}{
		{"USI_Hash", "256", nil, "256"},
		{"usi_hash", "+64", nil, "64"},
		{"USI_Hash", "0", ErrBadCommand, "64"},
		{"USI_Hash", "70000", ErrBadCommand, "64"},
		{"USI_Hash", "12x", ErrBadCommand, "64"},
		{"Style", "risky", nil, "Risky"},
		{"Style", "Wild", ErrBadCommand, "Risky"},
		{"USI_Ponder", "TRUE", nil, "true"},
		{"USI_Ponder", "yes", ErrBadCommand, "true"},
		{"Book File", "/tmp/a book.bin", nil, "/tmp/a book.bin"},
		{"Book File", "a\nisready", ErrBadCommand, "/tmp/a book.bin"},
		{"Book File", "", nil, ""},
		{"Clear Hash", "", nil, ""},
		{"Clear Hash", "now", ErrBadCommand, ""},
		{"NoSuchOption", "1", ErrUnknownOption, ""},
	}
	for _, tt := range tests {
		err := e.SetOption(tt.name, tt.value)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Errorf("SetOption(%q, %q): got %v, want %v", tt.name, tt.value, err, tt.wantErr)
		}
		if got, _ := e.OptionValue(tt.name); got != tt.wantValue {
			t.Errorf("after SetOption(%q, %q): OptionValue got %q, want %q", tt.name, tt.value, got, tt.wantValue)
		}
	}
	if err := e.ResetOptions(); err != nil {
		t.Fatal(err)
	}
	for _, o := range e.Options() {
		if got, _ := e.OptionValue(o.Name); o.Type != TypeButton && got != o.Default {
			t.Errorf("after ResetOptions: %s got %q, want default %q", o.Name, got, o.Default)
		}
	}
	if err := e.IsReady(t.Context()); err != nil {
		t.Errorf("IsReady: %v", err)
	}
}

// TestFakeDeliver: lines handed to Deliver's function come in order on the
// engine's reader, the ones queued before Deliver first; every line the
// engine printed is either delivered or counted dropped (only while queued,
// before Deliver); none comes after Wait has returned.
func TestFakeDeliver(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.Flood)
	cfg.InfoBuffer = 64
	e := startEngine(t, cfg)
	s, err := e.Go(t.Context(), Position{}, Go{})
	if err != nil {
		t.Fatal(err)
	}
	// Let lines pile up in the queue first.
	testwait.For(t, "lines queued", 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.q.tail > 0
	})
	var (
		mu       sync.Mutex
		last     = map[int]int64{} // multipv -> nodes of the last line delivered
		n        int64
		returned bool
		problems []string
		sawMore  bool // a line came with another at hand
		lastMore bool
	)
	s.Deliver(func(in *Info, more bool) {
		mu.Lock()
		defer mu.Unlock()
		sawMore, lastMore = sawMore || more, more
		if returned {
			problems = append(problems, "a line after Wait returned")
		}
		if in.Nodes <= last[in.MultiPV] {
			problems = append(problems, fmt.Sprintf("multipv %d: nodes %d after %d", in.MultiPV, in.Nodes, last[in.MultiPV]))
		}
		last[in.MultiPV] = in.Nodes
		n++
	})
	res, err := s.Wait(ctxTimeout(t, 30*time.Second))
	mu.Lock()
	returned = true
	got := n
	mu.Unlock()
	if err != nil || res.BestMove == nil || res.BestMove.Move != "7g7f" {
		t.Fatalf("Wait: got %+v, %v, want bestmove 7g7f", res, err)
	}
	if len(problems) > 0 {
		t.Fatalf("delivery out of order: %v", problems[:min(len(problems), 5)])
	}
	if got+s.Dropped() != 200000 {
		t.Errorf("lines delivered %d + dropped %d: want the 200000 the engine printed", got, s.Dropped())
	}
	if s.Dropped() > 200000-int64(cfg.InfoBuffer) || got < int64(cfg.InfoBuffer) {
		t.Errorf("delivered %d, dropped %d: want the lines after Deliver all delivered", got, s.Dropped())
	}
	if last[1] != 200000 || last[2] != 199999 {
		t.Errorf("last line delivered per multipv: got %v, want 1:200000 2:199999", last)
	}
	if _, ok := s.Next(t.Context()); ok {
		t.Error("Next after Deliver: got a line, want none queued")
	}
	if !sawMore || lastMore {
		t.Errorf("more: seen %v, on the last line %v; want lines of the flood with more, the last without", sawMore, lastMore)
	}
}

// TestInfoNext: the reader says more only when a whole info line follows.
func TestInfoNext(t *testing.T) {
	for _, tt := range []struct {
		buffered string
		want     bool
	}{
		{"", false},
		{"info depth 2", false}, // not whole yet
		{"info depth 2\n", true},
		{"  info depth 2\r\n", true},
		{"info\n", true},
		{"bestmove 7g7f\ninfo depth 3\n", false},
		{"information\n", false},
		{"readyok\n", false},
	} {
		if got := infoNext([]byte(tt.buffered)); got != tt.want {
			t.Errorf("infoNext(%q) = %v, want %v", tt.buffered, got, tt.want)
		}
	}
}
