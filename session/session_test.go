package session

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/proc"
	"github.com/usid/usid/pool"
)

func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			println("leaked goroutines:", err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

func fakePool(t *testing.T, instances int) *pool.Pool {
	return newPool(t, pool.EngineConfig{Name: "fake", Path: fakeengine.Path(), Instances: instances,
		Env: []string{fakeengine.EnvMode + "=" + fakeengine.Normal}})
}

// newPool starts a pool of one engine kind, closed when the test ends.
func newPool(t *testing.T, cfg pool.EngineConfig) *pool.Pool {
	p, err := pool.New([]pool.EngineConfig{cfg}, pool.Options{ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return p
}

// events reads a session's events until the terminal event of id.
func events(t *testing.T, s *Session, id string) []*Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []*Event
	for {
		evs, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v after %v", id, err, got)
		}
		for _, e := range evs {
			got = append(got, e)
			if e.ID == id && e.terminal() {
				return got
			}
		}
	}
}

func count(evs []*Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestMaxLease: a session past its lease time gives the engine back and
// queues again, so a long session cannot keep an engine from others.
func TestMaxLease(t *testing.T) {
	// Long enough that g2 follows g1 within it on a loaded machine; the
	// sleep below then outlasts it.
	const maxLease = 2 * time.Second
	svc := NewService(Config{Pool: fakePool(t, 1), MaxLease: maxLease})
	s := svc.NewSession()
	defer s.Close()
	play := `{"type":"go","id":"%s","btime":0,"wtime":0,"byoyomi":10}`
	s.Handle([]byte(sprintf(play, "g1")))
	first := events(t, s, "g1")
	s.Handle([]byte(sprintf(play, "g2")))
	second := events(t, s, "g2")
	time.Sleep(maxLease + 100*time.Millisecond)
	s.Handle([]byte(sprintf(play, "g3")))
	third := events(t, s, "g3")
	if count(first, EventEngine) != 1 || count(second, EventEngine) != 0 || count(third, EventEngine) != 1 {
		t.Errorf("engine events per request: %d %d %d, want 1 0 1 (kept within max lease, re-leased after)",
			count(first, EventEngine), count(second, EventEngine), count(third, EventEngine))
	}
}

// TestIdleRelease: a session that asks nothing gives its engine back.
func TestIdleRelease(t *testing.T) {
	p := fakePool(t, 1)
	svc := NewService(Config{Pool: p, IdleRelease: 50 * time.Millisecond})
	s := svc.NewSession()
	defer s.Close()
	s.Handle([]byte(`{"type":"go","id":"g","btime":0,"wtime":0,"byoyomi":10}`))
	events(t, s, "g")
	deadline := time.Now().Add(5 * time.Second)
	for p.Status()[0].Idle != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle session still holds its engine: %+v", p.Status()[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sprintf(format, id string) string { return fmt.Sprintf(format, id) }

// TestStoppedEngineMidSearch: an engine whose process is stopped (SIGSTOP)
// during a depth-bounded search is killed and the search ends in
// engine_error within a few checks, not after the watchdog (issue 16:
// such a search used to wait the whole max_analysis).
func TestStoppedEngineMidSearch(t *testing.T) {
	p := fakePool(t, 1)
	svc := NewService(Config{Pool: p, FrozenCheck: 50 * time.Millisecond, Caps: Caps{MaxAnalysis: time.Hour, WatchdogMargin: time.Hour}})
	s := svc.NewSession()
	defer s.Close()
	// Until stop: the fake streams info lines and never ends by itself.
	s.Handle([]byte(`{"type":"analyze","id":"a"}`))
	// The first info: the search runs on the serving engine, the youngest
	// child (the probe's process, if any, started before it).
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var evs []*Event
	for count(evs, EventInfo) == 0 {
		more, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("no info: %v", err)
		}
		evs = append(evs, more...)
	}
	pid, born := 0, int64(-1)
	for _, c := range proc.Children(os.Getpid()) {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c))
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) > 19 && f[0] != "Z" {
			if start, _ := strconv.ParseInt(f[19], 10, 64); start > born {
				pid, born = c, start
			}
		}
	}
	if pid == 0 {
		t.Fatal("no engine process")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	evs = append(evs, events(t, s, "a")...) // fails after 10 s without a terminal event
	last := evs[len(evs)-1]
	if last.Type != EventError || last.Code != CodeEngineError {
		t.Fatalf("terminal event %+v, want error engine_error", last)
	}
	if syscall.Kill(pid, 0) == nil {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z") {
			t.Errorf("the stopped engine %d still exists: %s", pid, st)
		}
	}
}

// TestOptionsRestoredOnNewLease: the options a client set are set again on the engine it gets after giving its idle engine
// back, even when another client used that engine in between (issue 17:
// a human thinking longer than idle_release used to play another opponent).
func TestOptionsRestoredOnNewLease(t *testing.T) {
	p := newPool(t, pool.EngineConfig{Name: "fake", Path: fakeengine.Path(), Instances: 1,
		Env:           []string{fakeengine.EnvMode + "=" + fakeengine.EchoOptions},
		ClientOptions: map[string]pool.OptionRule{"Style": {Values: []string{"Solid", "Normal", "Risky"}}}})
	svc := NewService(Config{Pool: p, IdleRelease: 50 * time.Millisecond})
	s := svc.NewSession()
	defer s.Close()
	echo := func(id string) (restored []string, text string) {
		t.Helper()
		s.Handle([]byte(sprintf(`{"type":"analyze","id":"%s","limits":{"depth":1}}`, id)))
		for _, e := range events(t, s, id) {
			switch {
			case e.Type == EventEngine:
				restored = e.Restored
			case e.Type == EventInfo && strings.HasPrefix(e.Text, "Style="):
				text, _, _ = strings.Cut(e.Text, " searches=")
			}
		}
		return restored, text
	}
	control := func(msg, id, want string) {
		t.Helper()
		s.Handle([]byte(msg))
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			evs, err := s.Next(ctx)
			if err != nil {
				t.Fatalf("%s: no %s event: %v", id, want, err)
			}
			for _, e := range evs {
				if e.ID == id && (e.Type == want || e.Type == EventError) {
					if e.Type != want {
						t.Fatalf("%s: %+v", id, e)
					}
					return
				}
			}
		}
	}
	control(`{"type":"setoption","id":"o","name":"Style","value":"Risky"}`, "o", EventOption)
	control(`{"type":"newgame","id":"n"}`, "n", EventReady)
	if _, text := echo("a1"); text != "Style=Risky newgame=true" {
		t.Fatalf("first lease: the engine says %q", text)
	}
	// Idle: the engine goes back to the pool, which resets it; another
	// client searches on it.
	deadline := time.Now().Add(5 * time.Second)
	for p.Status()[0].Idle != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle session still holds its engine: %+v", p.Status()[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	other := svc.NewSession()
	defer other.Close()
	other.Handle([]byte(`{"type":"analyze","id":"x","limits":{"depth":1}}`))
	for _, e := range events(t, other, "x") {
		if e.Type == EventInfo && strings.HasPrefix(e.Text, "Style=") && !strings.HasPrefix(e.Text, "Style=Normal newgame=true ") {
			t.Errorf("another client's engine was told %q: the first client's option leaked", e.Text)
		}
	}
	other.Close()
	for p.Status()[0].Idle != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the other session still holds the engine: %+v", p.Status()[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	restored, text := echo("a2")
	if text != "Style=Risky newgame=true" || !slices.Equal(restored, []string{"Style"}) {
		t.Errorf("after a new lease: the engine says %q, restored %v; want Style=Risky newgame=true, [Style]", text, restored)
	}
}
