package pool

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// sentLines records the lines usid sends to engines (the usi package logs
// each at debug level as "send").
type sentLines struct {
	mu    sync.Mutex
	lines []string
}

func (s *sentLines) Enabled(context.Context, slog.Level) bool { return true }
func (s *sentLines) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "send" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			s.mu.Lock()
			s.lines = append(s.lines, a.Value.String())
			s.mu.Unlock()
		}
		return true
	})
	return nil
}
func (s *sentLines) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *sentLines) WithGroup(string) slog.Handler      { return s }

func (s *sentLines) count(line string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lines {
		if l == line {
			n++
		}
	}
	return n
}

func (s *sentLines) since(i int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines[i:]...)
}

func (s *sentLines) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lines)
}

func newRecordingPool(t *testing.T, cfgs ...EngineConfig) (*Pool, *prometheus.Registry, *sentLines) {
	t.Helper()
	sent := &sentLines{}
	reg := prometheus.NewRegistry()
	p, err := New(cfgs, Options{Logger: slog.New(sent), Registerer: reg, ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return p, reg, sent
}

// search runs one bounded search on a lease and waits for its answer.
func search(t *testing.T, l *Lease, g usi.Go) usi.Result {
	t.Helper()
	s, err := l.Go(t.Context(), usi.Position{}, g)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestConversationOrder: the GUIs' order, with an engine that exits when
// isready follows usinewgame (as sunfish4 does): usinewgame before each
// lease's first position, gameover when it ends, never isready after
// usinewgame, USI_Hash and USI_Ponder always sent.
func TestConversationOrder(t *testing.T) {
	p, reg, sent := newRecordingPool(t, fake(fakeengine.StrictOrder, 1))
	waitIdle(t, p, "fake", 1)
	for range 3 {
		l := acquire(t, p, "fake")
		if res := search(t, l, usi.Go{Depth: 2}); res.BestMove == nil {
			t.Fatalf("no bestmove: %+v", res)
		}
		l.Release()
		waitIdle(t, p, "fake", 1)
	}
	if n := restarts(reg, "fake", reasonCrash); n != 0 {
		t.Errorf("the engine crashed %v times", n)
	}
	var last string
	for _, l := range sent.since(0) {
		if l == "isready" && last == "usinewgame" {
			t.Errorf("isready right after usinewgame: %v", sent.since(0))
			break
		}
		if l != "" {
			last = l
		}
	}
	if sent.count("gameover draw") < 3 || sent.count("usinewgame") < 4 {
		t.Errorf("gameover %d, usinewgame %d; want one per lease", sent.count("gameover draw"), sent.count("usinewgame"))
	}
	if sent.count("setoption name USI_Hash value 256") == 0 || sent.count("setoption name USI_Ponder value false") == 0 {
		t.Error("USI_Hash and USI_Ponder were not sent")
	}
}

// TestCostlyIsReady: an engine that re-initialises on isready is never sent
// one between leases, nor while idle.
func TestCostlyIsReady(t *testing.T) {
	c := fake(fakeengine.SlowReady+"=400ms", 1)
	c.HealthInterval = 50 * time.Millisecond
	p, _, sent := newRecordingPool(t, c)
	waitIdle(t, p, "fake", 1)
	if prof := p.Profile("fake"); prof == nil || prof.ReadyBetweenLeases {
		t.Fatalf("profile %+v: want isready kept out of leases", prof)
	}
	before := sent.count("isready")
	for range 3 {
		l := acquire(t, p, "fake")
		search(t, l, usi.Go{Nodes: 100})
		l.Release()
		waitIdle(t, p, "fake", 1)
	}
	time.Sleep(300 * time.Millisecond) // several health checks
	if after := sent.count("isready"); after != before {
		t.Errorf("isready sent %d times during leases and idle time", after-before)
	}
}

// TestBigHashDefault: an engine whose own hash default is too big for it
// starts, because usid sends a modest USI_Hash as GUIs do.
func TestBigHashDefault(t *testing.T) {
	p, _, _ := newRecordingPool(t, fake(fakeengine.HashLimit+"=1024", 1))
	waitIdle(t, p, "fake", 1)
	if st := status(p, "fake"); st.LastError != "" {
		t.Errorf("last error %q", st.LastError)
	}
}

// TestCannotStartQuietly: an engine that prints an error and exits, and a
// chess (UCI) engine, are reported with their own words and not restarted
// in a storm.
func TestCannotStartQuietly(t *testing.T) {
	for _, tt := range []struct{ mode, want string }{
		{fakeengine.StdoutError, "failed to read nn.bin"},
		{fakeengine.UCI, "speaks UCI"},
	} {
		c := fake(tt.mode, 2)
		p, reg, _ := newRecordingPool(t, c)
		testwait.For(t, tt.mode+": a reported failure", 30*time.Second, func() bool { return status(p, "fake").LastError != "" })
		st := status(p, "fake")
		if !strings.Contains(st.LastError, tt.want) || st.Available {
			t.Errorf("%s: last error %q, available %v; want %q and unavailable", tt.mode, st.LastError, st.Available, tt.want)
		}
		_, err := p.Acquire(t.Context(), "fake", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Acquire = %v, want the reason", tt.mode, err)
		}
		time.Sleep(time.Second)
		if n := restarts(reg, "fake", reasonStartFailed); n != 1 {
			t.Errorf("%s: %v failed starts within a second, want 1 (no restart storm)", tt.mode, n)
		}
	}
}

// TestRecycleAfterMate: an engine that answers no go after a mate search is
// replaced after a lease that ran one.
func TestRecycleAfterMate(t *testing.T) {
	p, reg, _ := newRecordingPool(t, fake(fakeengine.DeafAfterMate, 1))
	waitIdle(t, p, "fake", 1)
	if prof := p.Profile("fake"); prof.AfterMate != probe.AfterMateRecycle {
		t.Fatalf("after_mate %q", prof.AfterMate)
	}
	l := acquire(t, p, "fake")
	pid := l.Engine().PID()
	s, err := l.Go(t.Context(), usi.Position{SFEN: "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1"}, usi.Go{Mate: true, MateTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Wait(t.Context()); err != nil || res.Checkmate == nil {
		t.Fatalf("mate: %+v %v", res, err)
	}
	l.Release()
	testwait.For(t, "a recycled engine", 30*time.Second, func() bool { return restarts(reg, "fake", reasonRecycle) == 1 })
	waitIdle(t, p, "fake", 1)
	l = acquire(t, p, "fake")
	defer l.Release()
	if l.Engine().PID() == pid {
		t.Fatal("the engine that went deaf was leased again")
	}
	if res := search(t, l, usi.Go{Depth: 1}); res.BestMove == nil {
		t.Errorf("no bestmove after the recycle: %+v", res)
	}
}

// TestSpinInt64: a spin option advertised up to int64's max keeps its max.
func TestSpinInt64(t *testing.T) {
	m, err := usi.ParseMessage("option name NodesLimit type spin default 0 min 0 max 9223372036854775807")
	if err != nil {
		t.Fatal(err)
	}
	o := m.(usi.Option)
	if !o.HasMax || o.Max != 9223372036854775807 {
		t.Errorf("max %d (has %v)", o.Max, o.HasMax)
	}
	var b bytes.Buffer
	b.WriteString(o.String())
	if !strings.Contains(b.String(), "max 9223372036854775807") {
		t.Errorf("String() = %q", b.String())
	}
}
