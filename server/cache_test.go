package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/usid/usid"
	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
)

// cachedEnv is a second server over the shared pool, with its own service
// and evaluation cache: like another usid instance.
func cachedEnv(t *testing.T, cfg evalcache.Config) (*env, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	c, err := evalcache.New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.NewService(session.Config{Pool: shared.pool, Cache: c, IdleRelease: 2 * time.Second, AcquireTimeout: 5 * time.Second,
		Caps: session.Caps{MaxMultiPV: 5, MaxAnalysis: time.Minute}})
	srv := New(Config{Service: svc, Pool: shared.pool, OpenAPI: usid.OpenAPI,
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}})
	e := &env{pool: shared.pool, srv: srv, http: httptest.NewServer(srv)}
	t.Cleanup(func() {
		e.http.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
		c.Close()
		shared.waitIdle(t)
	})
	return e, reg
}

func analyze(t *testing.T, e *env, body map[string]any) map[string]any {
	t.Helper()
	code, _, v := call(t, e, "POST", "/v1/analyze", body)
	if code != 200 {
		t.Fatalf("analyze %v: %d %v", body, code, v)
	}
	return v
}

func firstLine(v map[string]any) map[string]any { return v["lines"].([]any)[0].(map[string]any) }

// TestCacheREST: a REST analysis whose limit a cached search met is
// answered from the cache (depth, nodes, movetime), for the same position
// whatever its move number; a deeper ask searches and refills it.
func TestCacheREST(t *testing.T) {
	shared.waitIdle(t)
	e, reg := cachedEnv(t, evalcache.Config{})
	pos := map[string]any{"moves": []string{"7g7f", "3c3d", "2g2f"}}
	req := func(limits map[string]any, extra ...any) map[string]any {
		b := map[string]any{"engine": "fairy", "position": pos, "limits": limits}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		return b
	}
	first := analyze(t, e, req(map[string]any{"depth": 8}))
	if first["cached"] != nil {
		t.Fatalf("first search answered from an empty cache: %v", first)
	}
	second := analyze(t, e, req(map[string]any{"depth": 8}, "notation", "kif"))
	if second["cached"] != true || second["bestmove"] != first["bestmove"] || num(firstLine(second)["depth"]) < 8 ||
		len(firstLine(second)["pv_kif"].([]any)) == 0 || second["bestmove_kif"] == nil {
		t.Fatalf("second: %v (first %v)", second, first)
	}
	if shallower := analyze(t, e, req(map[string]any{"depth": 5})); shallower["cached"] != true || num(firstLine(shallower)["depth"]) < 8 {
		t.Errorf("depth 5 after depth 8: %v", shallower)
	}
	if deeper := analyze(t, e, req(map[string]any{"depth": 11})); deeper["cached"] != nil || num(firstLine(deeper)["depth"]) < 11 {
		t.Errorf("depth 11: %v", deeper)
	}
	if again := analyze(t, e, req(map[string]any{"depth": 11})); again["cached"] != true || num(firstLine(again)["depth"]) < 11 {
		t.Errorf("depth 11 again: %v (the deeper result replaces the shallower)", again)
	}
	// The same position with another move number and no moves.
	sfen := "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P4P1/PP1PPPP1P/1B5R1/LNSGKGSNL w - 77"
	if same := analyze(t, e, map[string]any{"engine": "fairy", "position": map[string]any{"sfen": sfen}, "limits": map[string]any{"depth": 8}}); same["cached"] != true {
		t.Errorf("same position, other move number: %v", same)
	}
	// Another MultiPV count is another key.
	if mpv := analyze(t, e, req(map[string]any{"depth": 8}, "multipv", 2)); mpv["cached"] != nil || len(mpv["lines"].([]any)) != 2 {
		t.Errorf("multipv 2: %v", mpv)
	}
	// Nodes and movetime.
	pos = map[string]any{"moves": []string{"2g2f"}}
	analyze(t, e, req(map[string]any{"nodes": 20000}))
	if n := analyze(t, e, req(map[string]any{"nodes": 5000})); n["cached"] != true {
		t.Errorf("nodes 5000 after nodes 20000: %v", n)
	}
	if n := analyze(t, e, req(map[string]any{"nodes": 200000})); n["cached"] != nil {
		t.Errorf("nodes 200000 after nodes 20000: %v", n)
	}
	pos = map[string]any{"moves": []string{"5g5f"}}
	analyze(t, e, req(map[string]any{"movetime_ms": 500}))
	if m := analyze(t, e, req(map[string]any{"movetime_ms": 100})); m["cached"] != true {
		t.Errorf("movetime 100 after movetime 500: %v", m)
	}
	if h := testutil.ToFloat64(gauge(t, reg, "usid_evalcache_hits_total", "memory")); h < 6 {
		t.Errorf("%v memory hits counted, want at least 6", h)
	}
}

// gauge reads one metric of reg by name and tier label.
func gauge(t *testing.T, reg *prometheus.Registry, name, tier string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "tier" && l.GetValue() == tier {
					v := m.GetCounter().GetValue()
					c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
					c.Add(v)
					return c
				}
			}
		}
	}
	t.Fatalf("no metric %s{tier=%q}", name, tier)
	return nil
}

// TestCacheWebSocket: an analysis of a position the cache knows gets the
// cached lines at once, marked cached, then the live search's.
func TestCacheWebSocket(t *testing.T) {
	shared.waitIdle(t)
	e, _ := cachedEnv(t, evalcache.Config{})
	cl := dial(t, e)
	pos := map[string]any{"moves": []string{"7g7f", "8c8d"}}
	cl.send(map[string]any{"type": "analyze", "id": "a1", "engine": "fairy", "position": pos, "limits": map[string]any{"depth": 8}})
	evs := cl.terminal("a1", 20*time.Second)
	if last(evs)["type"] != "bestmove" {
		t.Fatalf("a1: %v", last(evs))
	}
	for _, ev := range evs {
		if ev["cached"] != nil {
			t.Fatalf("a1 got a cached line from an empty cache: %v", ev)
		}
	}
	cl.send(map[string]any{"type": "analyze", "id": "a2", "engine": "fairy", "position": pos, "limits": map[string]any{"depth": 10}, "notation": "kif"})
	evs = cl.terminal("a2", 20*time.Second)
	var infos []map[string]any
	for _, ev := range evs {
		if ev["type"] == "info" {
			infos = append(infos, ev)
		}
	}
	if len(infos) < 2 || infos[0]["cached"] != true || num(infos[0]["depth"]) < 8 || infos[0]["pv_kif"] == nil {
		t.Fatalf("a2's first info is not the cached line: %v", infos)
	}
	live := 0
	for _, ev := range infos[1:] {
		if ev["cached"] == nil {
			live++
		}
	}
	if live == 0 || last(evs)["type"] != "bestmove" {
		t.Fatalf("a2 did not go on live: %d live infos, last %v", live, last(evs))
	}
	// A client that changed the engine's options gets nothing cached: the
	// cached lines describe the engine as configured.
	cl.send(map[string]any{"type": "setoption", "id": "o1", "engine": "fairy", "name": "Skill Level", "value": "3"})
	cl.until(10*time.Second, func(ev map[string]any) bool { return ev["id"] == "o1" })
	cl.send(map[string]any{"type": "analyze", "id": "a3", "engine": "fairy", "position": pos, "limits": map[string]any{"depth": 6}})
	for _, ev := range cl.terminal("a3", 20*time.Second) {
		if ev["cached"] != nil {
			t.Fatalf("a3, after setoption, got a cached line: %v", ev)
		}
	}
}

// TestCacheRedisShared: two usid servers with their own memory tiers share
// one real redis-server and each sees the other's results; when Redis goes
// away they search, and /readyz stays ready.
func TestCacheRedisShared(t *testing.T) {
	shared.waitIdle(t)
	rs := redistest.Start(t)
	a, _ := cachedEnv(t, evalcache.Config{RedisURL: rs.URL})
	b, regB := cachedEnv(t, evalcache.Config{RedisURL: rs.URL})
	ask := func(e *env, moves ...string) map[string]any {
		return analyze(t, e, map[string]any{"engine": "fairy", "position": map[string]any{"moves": moves}, "limits": map[string]any{"depth": 8}})
	}
	// search asks e for a position new to both, and waits until its result
	// is in Redis (the writer puts it there just after answering): only
	// then can the other server's first ask be a Redis hit (asked earlier,
	// it would search and keep the answer in its own memory tier).
	search := func(e *env, moves ...string) map[string]any {
		t.Helper()
		keys := rs.DBSize()
		v := ask(e, moves...)
		if v["cached"] != nil {
			t.Fatalf("%v: %v", moves, v)
		}
		testwait.For(t, "the result in Redis", time.Minute, func() bool { return rs.DBSize() > keys })
		return v
	}
	fromA := search(a, "6g6f")
	if v := ask(b, "6g6f"); v["cached"] != true || v["bestmove"] != fromA["bestmove"] {
		t.Errorf("b's answer %v is not a's search %v from the shared cache", v, fromA)
	}
	fromB := search(b, "1g1f")
	if v := ask(a, "1g1f"); v["cached"] != true || v["bestmove"] != fromB["bestmove"] {
		t.Errorf("a's answer %v is not b's search %v from the shared cache", v, fromB)
	}
	if h := testutil.ToFloat64(gauge(t, regB, "usid_evalcache_hits_total", "redis")); h < 1 {
		t.Errorf("b counted %v redis hits", h)
	}

	rs.Stop()
	if v := ask(b, "9g9f"); v["cached"] != nil || v["bestmove"] == "" {
		t.Errorf("during the outage: %v", v)
	}
	if code, _, v := call(t, b, "GET", "/readyz", nil); code != 200 {
		t.Errorf("/readyz during a cache outage: %d %v", code, v)
	}
	if e := testutil.ToFloat64(gauge(t, regB, "usid_evalcache_errors_total", "redis")); e < 1 {
		t.Errorf("the outage was not counted: %v", e)
	}
}

// handicap2 is the two-piece handicap start (White, without rook and
// bishop, moves first); shuffle is a king and rook shuffle that comes back
// to it.
const handicap2 = "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"

var shuffle = []string{"5a5b", "2h3h", "5b5a", "3h2h"}

func repeatMoves(cycles int) []string {
	var m []string
	for range cycles {
		m = append(m, shuffle...)
	}
	return m
}

// TestCacheRepetitionNotShared: a position reached through a repetition is
// a different question (fairy-stockfish answers it cp 0 at depth 40 within
// a second: the next return is sennichite); its answer is never served for
// the position without that history, nor is the clean answer served to the
// repetition; each gets the engine's honest answer, every time.
func TestCacheRepetitionNotShared(t *testing.T) {
	shared.waitIdle(t)
	e, _ := cachedEnv(t, evalcache.Config{})
	ask := func(moves []string, depth int) map[string]any {
		return analyze(t, e, map[string]any{"engine": "fairy", "position": map[string]any{"sfen": handicap2, "moves": moves},
			"limits": map[string]any{"depth": depth}})
	}
	cp := func(v map[string]any) (int, bool) {
		s := firstLine(v)["score"].(map[string]any)
		c, ok := s["cp"].(float64)
		return int(c), ok
	}
	rep := ask(repeatMoves(3), 40)
	if c, ok := cp(rep); !ok || c != 0 || rep["cached"] != nil {
		t.Fatalf("through a threefold shuffle: %v (want the engine's draw, cp 0)", rep)
	}
	clean := ask(nil, 8)
	if c, ok := cp(clean); clean["cached"] != nil || !ok || c > -300 {
		t.Fatalf("the position without the history was served %v (want a search: White, two pieces down, is well behind)", clean)
	}
	// The clean answer is cached for clean histories (another move order
	// to the same position, with no position twice, shares it)...
	if again := ask(nil, 8); again["cached"] != true {
		t.Errorf("the clean answer was not cached: %v", again)
	}
	// ...and never served to the repetition, which still gets its own
	// answer from the engine.
	for _, cycles := range []int{1, 3} {
		v := ask(repeatMoves(cycles), 6)
		if v["cached"] != nil {
			t.Errorf("%d cycles: served from the cache: %v", cycles, v)
		}
		if c, _ := cp(v); cycles == 3 && c != 0 {
			t.Errorf("3 cycles: %v, want the engine's draw", v)
		}
	}
}

// TestCacheRepetitionTaintsLease: a WebSocket lease whose engine searched a
// repeated history may carry that answer in its hash (searches of one
// lease share it): the lease's later searches do not fill the cache.
func TestCacheRepetitionTaintsLease(t *testing.T) {
	shared.waitIdle(t)
	e, _ := cachedEnv(t, evalcache.Config{})
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "rep", "engine": "fairy",
		"position": map[string]any{"sfen": handicap2, "moves": repeatMoves(3)}, "limits": map[string]any{"depth": 30}})
	if ev := last(cl.terminal("rep", 30*time.Second)); ev["type"] != "bestmove" {
		t.Fatalf("rep: %v", ev)
	}
	after := map[string]any{"sfen": handicap2, "moves": []string{"5a5b"}}
	cl.send(map[string]any{"type": "analyze", "id": "next", "engine": "fairy", "position": after, "limits": map[string]any{"depth": 6}})
	if ev := last(cl.terminal("next", 30*time.Second)); ev["type"] != "bestmove" {
		t.Fatalf("next: %v", ev)
	}
	if v := analyze(t, e, map[string]any{"engine": "fairy", "position": after, "limits": map[string]any{"depth": 6}}); v["cached"] != nil {
		t.Fatalf("a search on the lease that searched a repetition filled the cache: %v", v)
	}
}

// TestCacheHostileRedisValues: whatever another writer puts in the shared
// Redis under a position's key is checked like an engine's answer: a value
// that fails (both cp and mate, a bound usid never writes, more lines than
// MultiPV, an illegal move, a depth its lines did not reach, a field usid
// never writes) is not served, over REST or WebSocket, and is replaced by
// the honest search's result.
func TestCacheHostileRedisValues(t *testing.T) {
	shared.waitIdle(t)
	rs := redistest.Start(t)
	opt, err := redis.ParseURL(rs.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	ctx := context.Background()
	pos := map[string]any{"moves": []string{"7g7f", "3c3d"}}
	req := map[string]any{"engine": "fairy", "position": pos, "limits": map[string]any{"depth": 6}}
	// Redis calls get seconds, not the default 100 ms: on a loaded machine a
	// slow call would make the cache back off and drop the writes waited for.
	cfg := evalcache.Config{RedisURL: rs.URL, Timeout: 5 * time.Second}
	a, _ := cachedEnv(t, cfg)
	honest := analyze(t, a, req)
	var key string
	testwait.For(t, "the result in redis", 30*time.Second, func() bool {
		keys := rc.Keys(ctx, "usid:eval:*").Val()
		if len(keys) == 1 {
			key = keys[0]
		}
		return key != ""
	})
	line := firstLine(honest)
	depth := num(line["depth"])
	hostileLine := func(extra string) string {
		return fmt.Sprintf(`{"multipv":1,"depth":%d,"nodes":%d,"time_ms":%d,"pv":["2g2f"]%s}`, depth, num(line["nodes"]), num(line["time_ms"]), extra)
	}
	many := make([]string, 3000)
	for i := range many {
		many[i] = hostileLine(`,"score":{"cp":1}`)
	}
	values := map[string]string{
		"cp and mate":      `{"bestmove":"2g2f","lines":[` + hostileLine(`,"score":{"cp":5,"mate":3}`) + `]}`,
		"html bound":       `{"bestmove":"2g2f","lines":[` + hostileLine(`,"score":{"cp":5},"bound":"<img src=x onerror=alert(1)>"`) + `]}`,
		"bidi bound":       `{"bestmove":"2g2f","lines":[` + hostileLine(`,"score":{"cp":5},"bound":"\u202elower"`) + `]}`,
		"3000 lines":       `{"bestmove":"2g2f","lines":[` + strings.Join(many, ",") + `]}`,
		"illegal pv":       `{"bestmove":"2g2f","lines":[` + strings.Replace(hostileLine(`,"score":{"cp":5}`), `"2g2f"`, `"2g2f","2f2a"`, 1) + `]}`,
		"illegal bestmove": `{"bestmove":"5i5g","lines":[` + hostileLine(`,"score":{"cp":5}`) + `]}`,
		"unknown field":    `{"bestmove":"2g2f","lines":[` + hostileLine(`,"score":{"cp":5}`) + `],"note":"x"}`,
		"no score":         `{"bestmove":"2g2f","lines":[` + hostileLine(``) + `]}`,
	}
	for name, v := range values {
		rc.HSet(ctx, key, "data", v)
		if name == "3000 lines" { // and a depth its lines never reached
			rc.HSet(ctx, key, "depth", 40)
		} else {
			rc.HSet(ctx, key, "depth", depth)
		}
		b, _ := cachedEnv(t, cfg)
		if name == "3000 lines" || name == "html bound" {
			cl := dial(t, b)
			cl.send(map[string]any{"type": "analyze", "id": "w", "engine": "fairy", "position": pos, "limits": map[string]any{"depth": 6}})
			evs := cl.terminal("w", 30*time.Second)
			for _, ev := range evs {
				if ev["cached"] != nil {
					t.Errorf("%s: served over WebSocket: %v", name, ev)
					break
				}
			}
			if last(evs)["type"] != "bestmove" {
				t.Errorf("%s: the WebSocket search ended in %v", name, last(evs))
			}
		} else {
			if got := analyze(t, b, req); got["cached"] != nil {
				t.Errorf("%s: served over REST: %v", name, got)
			}
		}
		testwait.For(t, name+" replaced by the honest result", 30*time.Second, func() bool {
			d := rc.HGet(ctx, key, "data").Val()
			return d != v && strings.Contains(d, `"bestmove"`)
		})
	}
}
