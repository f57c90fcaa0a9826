package review

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/usid/usid/internal/shogitest"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

const gpsPath = "/usr/games/gpsusi"

// BenchmarkGpsGame100 times the default game analysis (no limits: the
// board's setting) of a 100-move game on gpsusi as usid.yaml configures it
// (one instance), whose depth limit is emulated: the target is 5 minutes.
// The moves are seeded random legal moves, so nearly every one differs
// from the engine's best and needs the second search: the worst case. It
// reports the time taken and the first time-left estimates.
//
//	go test ./review -run '^$' -bench GpsGame100 -benchtime 1x -timeout 30m
func BenchmarkGpsGame100(b *testing.B) {
	if _, err := os.Stat(gpsPath); err != nil {
		b.Fatalf("%s is missing (%v): apt-get install gpsshogi", gpsPath, err)
	}
	p, err := pool.New([]pool.EngineConfig{{Name: "gps", Path: gpsPath, Instances: 1}}, pool.Options{ProfileDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p.Close(ctx)
		cancel()
	}()
	svc := session.NewService(session.Config{Pool: p, DefaultEngine: "gps", AcquireTimeout: 5 * time.Minute})
	moves := randomGame(100, 26)
	for b.Loop() {
		m := New(Config{Service: svc})
		t0 := time.Now()
		v, serr := m.Start(session.Caller{Client: "bench"}, &Request{Position: &session.Position{Moves: moves}})
		if serr != nil {
			b.Fatal(serr)
		}
		var firstEst, firstEstAfter []int64
		for v.FinishedAt == nil {
			if est := v.Progress.EstimatedLeftMS; est != nil && len(firstEst) < 3 && (len(firstEst) == 0 || v.Progress.Done > 0) {
				firstEst, firstEstAfter = append(firstEst, *est), append(firstEstAfter, time.Since(t0).Milliseconds())
			}
			time.Sleep(500 * time.Millisecond)
			v, _ = m.Get("bench", v.ID)
		}
		took := time.Since(t0)
		extra := 0
		for _, p := range v.Positions {
			if p != nil && p.BestEval != nil {
				extra++
			}
		}
		b.Logf("status %s: %d positions, %d second searches, in %v; estimates (ms left) %v at (ms) %v", v.Status, v.Progress.Done, extra, took.Round(time.Second), firstEst, firstEstAfter)
		b.ReportMetric(took.Seconds(), "s/game")
		if v.Status != StatusDone || took > 5*time.Minute {
			b.Errorf("status %s after %v, want done within 5 minutes", v.Status, took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m.Close(ctx)
		cancel()
	}
}

// randomGame plays n seeded random legal moves from the start, never one
// that mates (a new seed when a game ends early).
func randomGame(n int, seed uint64) []string { return shogitest.RandomGame(n, seed, 100) }
