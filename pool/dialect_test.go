package pool

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
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
// isready follows usinewgame (as sunfish4 does): usinewgame before a game's
// first position, gameover when a lease that played with clocks ends,
// isready only at the start of a new game and never after usinewgame,
// USI_Hash and USI_Ponder always sent.
func TestConversationOrder(t *testing.T) {
	p, reg, sent := newRecordingPool(t, fake(fakeengine.StrictOrder, 1))
	waitIdle(t, p, "fake", 1)
	clock := &usi.Clock{BTime: time.Minute, WTime: time.Minute}
	for range 3 {
		l := acquire(t, p, "fake")
		if res := search(t, l, usi.Go{Clock: clock}); res.BestMove == nil {
			t.Fatalf("no bestmove: %+v", res)
		}
		l.Release()
		waitIdle(t, p, "fake", 1)
	}
	if n := restarts(reg, "fake", reasonCrash); n != 0 {
		t.Errorf("the engine crashed %v times", n)
	}
	checkOrder(t, sent.since(0))
	if sent.count("gameover draw") < 3 || sent.count("usinewgame") < 4 {
		t.Errorf("gameover %d, usinewgame %d; want one per lease", sent.count("gameover draw"), sent.count("usinewgame"))
	}
	if sent.count("setoption name USI_Hash value 256") == 0 || sent.count("setoption name USI_Ponder value false") == 0 {
		t.Error("USI_Hash and USI_Ponder were not sent")
	}
}

func countLine(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// checkOrder fails on isready right after usinewgame or right after
// another isready: the orders on which strict engines exit.
func checkOrder(t *testing.T, lines []string) {
	t.Helper()
	var last string
	for _, l := range lines {
		if l == "isready" && (last == "usinewgame" || last == "isready") {
			t.Errorf("isready right after %s: %v", last, lines)
			return
		}
		if l != "" {
			last = l
		}
	}
}

// TestAnalysesKeepTheGame: one-shot analyses on an engine go on in one game,
// as in an analysis GUI: one usinewgame (at start), no gameover, no isready
// between leases, so that the engine keeps its hash. A lease in which a
// client changed an option, or that played with clocks, ends its game; the
// next search starts a new one.
func TestAnalysesKeepTheGame(t *testing.T) {
	c := fake(fakeengine.EchoOptions, 1)
	c.ClientOptions = map[string]OptionRule{"Style": {}}
	p, _, sent := newRecordingPool(t, c)
	waitIdle(t, p, "fake", 1)
	mark := sent.len()
	start := mark // the engine is in its first game
	for range 3 {
		l := acquire(t, p, "fake")
		search(t, l, usi.Go{Depth: 2})
		l.Release()
		waitIdle(t, p, "fake", 1)
	}
	after := sent.since(mark)
	for _, line := range []string{"usinewgame", "gameover draw", "isready"} {
		if slices.Contains(after, line) {
			t.Errorf("%q between analyses: %v", line, after)
		}
	}
	// A client's option ends the game: the next tenant starts a new one.
	l := acquire(t, p, "fake")
	if err := l.SetOption("Style", "Risky"); err != nil {
		t.Fatal(err)
	}
	search(t, l, usi.Go{Depth: 2})
	l.Release()
	waitIdle(t, p, "fake", 1)
	// So does a game with clocks.
	l = acquire(t, p, "fake")
	mark = sent.len()
	search(t, l, usi.Go{Clock: &usi.Clock{BTime: time.Minute, WTime: time.Minute}})
	l.Release()
	waitIdle(t, p, "fake", 1)
	l = acquire(t, p, "fake")
	search(t, l, usi.Go{Depth: 2})
	l.Release()
	waitIdle(t, p, "fake", 1)
	games := sent.since(mark)
	if n := countLine(sent.since(start), "usinewgame"); n != 2 {
		t.Errorf("usinewgame %d times, want 2: after the option, after the game", n)
	}
	if !slices.Contains(games, "gameover draw") {
		t.Errorf("no gameover after a game with clocks: %v", games)
	}
	checkOrder(t, sent.since(0))
}

// TestStrictEnginesServe: engines that exit on a conversation a careless
// GUI has start and serve, games and analyses alike: one that exits on two
// isready in a row (sunfish4), one that exits on any isready after the
// first, one that hangs on "position startpos moves" after a "position
// sfen" (gpsusi). None is ever restarted.
func TestStrictEnginesServe(t *testing.T) {
	clock := &usi.Clock{BTime: time.Minute, WTime: time.Minute}
	for _, mode := range []string{fakeengine.ReadyTwice, fakeengine.OneReady, fakeengine.StartposHang} {
		p, reg, sent := newRecordingPool(t, fake(mode, 1))
		waitIdle(t, p, "fake", 1)
		for i, tt := range []struct {
			pos usi.Position
			g   usi.Go
		}{
			{usi.Position{SFEN: "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1"}, usi.Go{Depth: 1}},
			{usi.Position{SFEN: "startpos", Moves: []string{"7g7f", "3c3d"}}, usi.Go{Clock: clock}},
			{usi.Position{SFEN: "startpos", Moves: []string{"7g7f"}}, usi.Go{Depth: 1}},
			{usi.Position{SFEN: "startpos", Moves: []string{"2g2f"}}, usi.Go{Clock: clock}},
		} {
			l := acquire(t, p, "fake")
			s, err := l.Go(t.Context(), tt.pos, tt.g)
			if err != nil {
				t.Fatalf("%s: search %d: %v", mode, i, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			res, err := s.Wait(ctx)
			cancel()
			if err != nil || res.BestMove == nil {
				t.Fatalf("%s: search %d: %+v %v", mode, i, res, err)
			}
			l.Release()
			waitIdle(t, p, "fake", 1)
		}
		for _, reason := range []string{reasonCrash, reasonResetFailed, reasonStartFailed, reasonKilled} {
			if n := restarts(reg, "fake", reason); n != 0 {
				t.Errorf("%s: %v restarts (%s)", mode, n, reason)
			}
		}
		checkOrder(t, sent.since(0))
		st := status(p, "fake")
		if !st.Available || st.LastError != "" {
			t.Errorf("%s: available %v, last error %q", mode, st.Available, st.LastError)
		}
		// The finding, with the engine's last words, is in its profile
		// (GET /v1/engines shows it).
		if n := st.Profile.Notes[probe.AvoidReadyAfterGameOver]; mode == fakeengine.OneReady && !strings.Contains(n, "bye: one isready is enough") {
			t.Errorf("%s: the profile's note %q lacks the engine's last words", mode, n)
		}
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

// TestCannotStartQuietly: an engine that prints an error and exits is
// reported with its own words and not restarted in a storm.
func TestCannotStartQuietly(t *testing.T) {
	for _, tt := range []struct{ mode, want string }{
		{fakeengine.StdoutError, "failed to read nn.bin"},
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

// TestUCIKind: an entry of name and path is enough for a chess engine: the
// dialect is learned, the engines speak UCI, and searches go through the
// same leases; an entry naming the protocol is not asked.
func TestUCIKind(t *testing.T) {
	named := fake(fakeengine.UCI, 1)
	named.Name, named.Protocol = "named", "uci"
	p, _, sent := newRecordingPool(t, fake(fakeengine.UCI, 1), named)
	for _, name := range []string{"fake", "named"} {
		waitIdle(t, p, name, 1)
		if prof := p.Profile(name); prof.Protocol != "uci" || prof.Game() != "chess" || !prof.Checkmate {
			t.Fatalf("%s: profile protocol %q, checkmate %v", name, prof.Protocol, prof.Checkmate)
		}
		l := acquire(t, p, name)
		if l.Engine().Dialect() != usi.DialectUCI {
			t.Errorf("%s: dialect %s", name, l.Engine().Dialect().Name)
		}
		s, err := l.Go(t.Context(), usi.Position{Moves: []string{"e2e4"}}, usi.Go{Nodes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Wait(t.Context())
		if err != nil || res.BestMove == nil || !usi.IsUCIMove(res.BestMove.Move) {
			t.Errorf("%s: %+v, %v", name, res.BestMove, err)
		}
		l.Release()
	}
	if sent.count("ucinewgame") == 0 || sent.count("usinewgame") != 0 {
		t.Errorf("new games sent: ucinewgame %d, usinewgame %d", sent.count("ucinewgame"), sent.count("usinewgame"))
	}
}
