package session

import (
	"slices"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
)

// TestSparseNodes: an engine that reports its node count only every
// 200,000 nodes (Apery prints few info lines) is stopped within 1.5 times
// an emulated nodes 20000, by its speed; the answer says nodes was
// emulated and how many nodes were searched.
//
// The fake counts nodes as 20,000 a second by its own clock from the go it
// read, so what it reports does not depend on the machine's speed: only on
// the time between go and stop reaching it, which usid sets to a second
// from sending go. The ratio stays within 1.5 unless the stop reaches the
// fake half a second later than the go did; under that much load the
// machine would fail far more than this test. Before, usid waited for an
// info line past the limit: ten seconds, 200,000 nodes.
func TestSparseNodes(t *testing.T) {
	const limit = 20000
	p := newPool(t, pool.EngineConfig{Name: "sparse", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.SparseNodes + "=20000"}})
	svc := NewService(Config{Pool: p, AcquireTimeout: 2 * time.Minute})
	for i := range 3 {
		res, err := svc.Analyze(t.Context(), &Request{Limits: &Limits{Nodes: limit}})
		if err != nil {
			t.Fatal(err)
		}
		if prof := p.Profile("sparse"); prof.Goes("nodes") != probe.Emulated || prof.NPS != 20000 {
			t.Fatalf("profile: nodes %s, nps %d; want emulated, 20000", prof.Goes("nodes"), prof.NPS)
		}
		if !slices.Equal(res.Emulated, []string{"nodes"}) || res.Nodes > limit*3/2 || res.Nodes < limit/2 {
			t.Errorf("search %d: emulated %v, nodes %d; want [nodes] and %d..%d", i, res.Emulated, res.Nodes, limit/2, limit*3/2)
		}
		t.Logf("search %d: %d nodes for nodes %d (%.2f)", i, res.Nodes, limit, float64(res.Nodes)/limit)
	}
}

// TestNativeOvershoot: an engine that honours go nodes in the probe but
// overshoots a larger limit by more than half (YaneuraOu's nodes 20000
// once searched 30,923) has the limit emulated from the next search on,
// and the profile says so, as observed. A small limit overshot by a few
// thousand nodes (fairy's nodes 2000 once searched 4,912) is not held
// against it.
func TestNativeOvershoot(t *testing.T) {
	p, err := pool.New([]pool.EngineConfig{{Name: "over", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.OvershootNodes}}},
		pool.Options{ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	svc := NewService(Config{Pool: p, AcquireTimeout: 2 * time.Minute})
	res, perr := svc.Analyze(t.Context(), &Request{Limits: &Limits{Nodes: 2000}})
	if perr != nil {
		t.Fatal(perr)
	}
	if res.Nodes != 5000 || len(res.Emulated) != 0 || p.Profile("over").Goes("nodes") != probe.Native {
		t.Fatalf("nodes 2000: searched %d, emulated %v, profile %s; want 5000 (the fake's slack), native", res.Nodes, res.Emulated, p.Profile("over").Goes("nodes"))
	}
	res, perr = svc.Analyze(t.Context(), &Request{Limits: &Limits{Nodes: 20000}})
	if perr != nil {
		t.Fatal(perr)
	}
	if len(res.Emulated) != 0 || res.Nodes != 40000 {
		t.Fatalf("first search: emulated %v, nodes %d; want native, 40000 (the fake's overshoot)", res.Emulated, res.Nodes)
	}
	prof := p.Profile("over")
	if prof.Goes("nodes") != probe.Emulated || prof.Sources["nodes"] != probe.SourceObserved {
		t.Fatalf("profile after the overshoot: nodes %s (%s: %s)", prof.Goes("nodes"), prof.Sources["nodes"], prof.Notes["nodes"])
	}
	res, perr = svc.Analyze(t.Context(), &Request{Limits: &Limits{Nodes: 20000}})
	if perr != nil {
		t.Fatal(perr)
	}
	if !slices.Equal(res.Emulated, []string{"nodes"}) || res.Nodes > 30000 {
		t.Errorf("second search: emulated %v, nodes %d; want [nodes], at most 30000", res.Emulated, res.Nodes)
	}
}
