package pool

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkAcquireRelease leases and releases a free real engine, reporting
// the latency percentiles of Acquire+Release (targets: p50 ≤ 50µs, p99 ≤ 500µs).
// Two instances, so one is free while the other is reset in the background.
func BenchmarkAcquireRelease(b *testing.B) {
	needBinary(b, fairyPath)
	p, err := New([]EngineConfig{fairy(2)}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for status(p, "fairy").Idle != 2 {
		if time.Now().After(deadline) {
			b.Fatal("engines did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		l, err := p.Acquire(ctx, "fairy", nil)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	pct := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
