package pool

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/usi"
)

// startsOf runs an engine kind whose fake engine appends its pid to a file
// as it starts, in a pool with a profile directory of its own (so that the
// probe runs), and returns the pool and that file.
func startsOf(t *testing.T, cfg EngineConfig) (*Pool, string) {
	t.Helper()
	starts := filepath.Join(t.TempDir(), "starts")
	cfg.Env = append(cfg.Env, fakeengine.EnvStarts+"="+starts)
	cfg.Protocol = "usi" // no usi.Detect: its quick look would be a process more
	p, _ := newPoolIn(t, t.TempDir(), cfg)
	return p, starts
}

func pidsIn(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, l := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("%s: %q", file, l)
		}
		pids = append(pids, n)
	}
	return pids
}

// infoTexts runs a plain search on the lease and returns its info lines' text.
func infoTexts(t *testing.T, l *Lease) []string {
	t.Helper()
	s, err := l.Go(t.Context(), usi.Position{SFEN: "startpos"}, usi.Go{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for {
		in, ok := s.Next(t.Context())
		if !ok {
			break
		}
		texts = append(texts, in.Text)
	}
	if _, err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return texts
}

// TestSlowReadyStartedOnce (issue 44): an engine whose first isready takes
// long (nshogi: a minute) is started once, for the probe, and that process
// serves: the first search comes about one isready after the pool starts,
// not two.
func TestSlowReadyStartedOnce(t *testing.T) {
	const ready = 3 * time.Second
	cfg := fake(fakeengine.SlowFirstReady+"="+ready.String(), 1)
	cfg.Timeouts.Ready = 2 * ready
	began := time.Now()
	p, starts := startsOf(t, cfg)
	l := acquire(t, p, "fake")
	infoTexts(t, l)
	took := time.Since(began)
	pid := l.Engine().PID()
	l.Release()
	pids := pidsIn(t, starts)
	if len(pids) != 1 || pids[0] != pid {
		t.Errorf("engine processes started: %v, the one serving %d; want one, the probe's", pids, pid)
	}
	// The probe's own searches take a second or so beside the isready;
	// two isready would be 2×ready at least.
	if took >= 2*ready {
		t.Errorf("first search done %v after the pool started; want less than two isready (%v)", took.Round(time.Millisecond), 2*ready)
	}
	if prof := p.Profile("fake"); prof == nil || prof.ReadyFirstMS < ready.Milliseconds() {
		t.Errorf("profile %+v: want the probe's slow first isready", prof)
	}
	t.Logf("first search done %v after the pool started; isready took %v", took.Round(time.Millisecond), ready)
}

// TestProbeEngineReset: the probe's engine serves as a fresh one would: the
// options the probe set (USI_AnalyseMode true, USI_OwnBook false) are back
// to their defaults, so the engine answers from its book as a fresh one
// does; and the first lease's search is the first of a new game.
func TestProbeEngineReset(t *testing.T) {
	t.Run("options", func(t *testing.T) {
		p, starts := startsOf(t, fake(fakeengine.AnalyseMode, 1))
		l := acquire(t, p, "fake")
		for _, o := range []struct{ name, want string }{{"USI_AnalyseMode", "false"}, {"USI_OwnBook", "true"}} {
			if v, _ := l.Engine().OptionValue(o.name); v != o.want {
				t.Errorf("%s = %q on the first lease, want %q (its default)", o.name, v, o.want)
			}
		}
		if texts := infoTexts(t, l); len(texts) != 0 {
			t.Errorf("a plain go printed %q; want a book answer (no info), as a fresh engine's", texts)
		}
		l.Release()
		if pids := pidsIn(t, starts); len(pids) != 1 {
			t.Errorf("engine processes started: %v, want one", pids)
		}
	})
	t.Run("game", func(t *testing.T) {
		p, starts := startsOf(t, fake(fakeengine.EchoOptions, 1))
		l := acquire(t, p, "fake")
		texts := infoTexts(t, l)
		l.Release()
		if len(texts) == 0 || !strings.Contains(texts[0], "newgame=true searches=1") {
			t.Errorf("the first lease's search said %q; want the first search of a new game", texts)
		}
		if pids := pidsIn(t, starts); len(pids) != 1 {
			t.Errorf("engine processes started: %v, want one", pids)
		}
	})
}
