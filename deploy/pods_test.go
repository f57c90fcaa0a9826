package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/shogitest"
)

// The production topology on one machine (issue 30): three usid processes
// sharing one real redis-server, behind a round-robin proxy that sends
// every request, and every new WebSocket, to the next live pod, as a
// Service without session affinity does.

// pods is a round-robin reverse proxy over usid processes; a pod marked
// down (killed, or draining: no longer ready) gets no more requests.
type pods struct {
	mu   sync.Mutex
	all  []*liveUsid
	down map[*liveUsid]bool
	next int
}

func (p *pods) pick() *url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.all {
		u := p.all[p.next%len(p.all)]
		p.next++
		if !p.down[u] {
			target, _ := url.Parse(u.base)
			return target
		}
	}
	target, _ := url.Parse(p.all[0].base)
	return target
}

func (p *pods) setDown(u *liveUsid) {
	p.mu.Lock()
	p.down[u] = true
	p.mu.Unlock()
}

func (p *pods) live() []*liveUsid {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*liveUsid
	for _, u := range p.all {
		if !p.down[u] {
			out = append(out, u)
		}
	}
	return out
}

// runningJobs reads a pod's usid_game_jobs{state="running"}.
func runningJobs(u *liveUsid) int {
	resp, err := client.Get(u.base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `usid_game_jobs{state="running"} `); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return 0
}

// runner waits for the live pod that runs a job (the only job running).
func runner(t *testing.T, p *pods, but *liveUsid) *liveUsid {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, u := range p.live() {
			if u != but && runningJobs(u) == 1 {
				return u
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no pod runs the job after a minute")
	return nil
}

// killPod SIGKILLs usid and, as the container's end would, its engines.
func killPod(u *liveUsid) {
	u.cmd.Process.Signal(syscall.SIGKILL)
	<-u.exited
	u.mu.Lock()
	defer u.mu.Unlock()
	for pid := range u.started {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

type jobView struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress struct {
		Done  int `json:"done"`
		Total int `json:"total"`
	} `json:"progress"`
	Positions []*struct {
		Ply      int             `json:"ply"`
		Eval     json.RawMessage `json:"eval"`
		BestMove string          `json:"bestmove"`
	} `json:"positions"`
	FinishedAt *time.Time `json:"finished_at"`
}

// randomGame plays n seeded random legal moves from the start, none
// ending the game.
func randomGame(n int, seed uint64) []string { return shogitest.RandomGame(n, seed, 30) }

// TestThreePods (issue 30): through the round-robin proxy, a DELETE on one
// pod cancels a job running on another; a 100-position game analysis is
// polled (never a 404), the pod running it is SIGKILLed, later the next
// one is SIGTERMed; the job ends done with all 101 positions, searches
// done twice are at most the engines busy at each loss, and each search is
// charged to its owner once.
func TestThreePods(t *testing.T) {
	rs := redistest.Start(t)
	bin := buildUsid(t)
	const key = "owner-key-0123456789abcdef"
	t.Setenv("USID_API_KEYS", "owner:"+key)
	conf := filepath.Join(t.TempDir(), "usid.yaml")
	// Two engines a pod: a job analyses two positions at once. Short
	// searches keep the test to seconds. The budget refills slowly enough
	// that what the job spent can be read off it.
	os.WriteFile(conf, []byte(fmt.Sprintf(`engines:
  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 2, options: {USI_Hash: 16, Threads: 1}}
  - {name: gps, disabled: true}
games:
  lease: 2s
access:
  redis: %s
  keyed: {engine_time: {seconds: 1, period: 1000h, burst: 3600}}
`, rs.URL)), 0o600)
	p := &pods{down: map[*liveUsid]bool{}}
	for range 3 {
		p.all = append(p.all, startUsid(t, bin, conf))
	}
	for _, u := range p.all {
		deadline := time.Now().Add(time.Minute)
		for {
			resp, err := client.Get(u.base + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready after a minute", u.base)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(p.pick()) },
		Transport: &http.Transport{DisableKeepAlives: true},
	})
	defer proxy.Close()
	call := func(base, method, path string, body any) (int, *jobView) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v jobView
		if resp.StatusCode < 300 {
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, b)
			}
		} else {
			t.Logf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return resp.StatusCode, &v
	}

	// A DELETE on another pod than the one running the job.
	st, v := call(proxy.URL, "POST", "/v1/games/analysis", map[string]any{
		"position": map[string]any{"moves": randomGame(30, 7)}, "limits": map[string]any{"movetime_ms": 200}})
	if st != http.StatusAccepted {
		t.Fatalf("POST: %d", st)
	}
	run := runner(t, p, nil)
	other := p.all[0]
	if other == run {
		other = p.all[1]
	}
	begun := time.Now()
	st, c := call(other.base, "DELETE", "/v1/games/analysis/"+v.ID, nil)
	took := time.Since(begun)
	if st != 200 || c.Status != "cancelled" || c.FinishedAt == nil {
		t.Fatalf("DELETE on another pod: %d %s", st, c.Status)
	}
	t.Logf("DELETE on another pod than the one running the job: cancelled after %v", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the cancel took %v to reach the pod running the job, want about a lease check (250ms)", took)
	}
	for runningJobs(run) != 0 {
		time.Sleep(20 * time.Millisecond)
	}

	// The game analysis.
	moves := randomGame(100, 1)
	st, v = call(proxy.URL, "POST", "/v1/games/analysis", map[string]any{
		"position": map[string]any{"moves": moves}, "limits": map[string]any{"movetime_ms": 50}})
	if st != http.StatusAccepted {
		t.Fatalf("POST: %d", st)
	}
	poll := func() *jobView {
		t.Helper()
		st, g := call(proxy.URL, "GET", "/v1/games/analysis/"+v.ID, nil)
		if st != 200 {
			t.Fatalf("GET through the proxy: %d", st)
		}
		return g
	}
	var g *jobView
	for range 50 {
		g = poll()
		time.Sleep(10 * time.Millisecond)
	}
	for g.Progress.Done < 10 {
		g = poll()
		time.Sleep(10 * time.Millisecond)
	}
	first := runner(t, p, nil)
	g = poll()
	killed := time.Now()
	killPod(first)
	p.setDown(first)
	t.Logf("SIGKILL of the pod running the job at %d/%d positions", g.Progress.Done, g.Progress.Total)
	second := runner(t, p, first)
	takeKill := time.Since(killed)
	for g = poll(); g.Progress.Done < 60 && g.FinishedAt == nil; g = poll() {
		time.Sleep(10 * time.Millisecond)
	}
	second = runner(t, p, nil)
	termed := time.Now()
	atTerm := poll().Progress.Done
	p.setDown(second) // not ready once draining: the Service stops routing to it
	second.cmd.Process.Signal(syscall.SIGTERM)
	third := runner(t, p, second)
	takeTerm := time.Since(termed)
	<-second.exited
	t.Logf("SIGTERM of the next pod running it at %d positions; taken over %v after the SIGKILL (lease 2s), %v after the SIGTERM; the drain took %v",
		atTerm, takeKill.Round(time.Millisecond), takeTerm.Round(time.Millisecond), time.Since(termed).Round(time.Millisecond))
	_ = third
	// The pods left drain as on a rollout, leaving no engine behind.
	defer func() {
		for _, u := range p.live() {
			u.cmd.Process.Signal(syscall.SIGTERM)
			<-u.exited
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for g = poll(); g.FinishedAt == nil; g = poll() {
		if time.Now().After(deadline) {
			t.Fatalf("not ended after 2 minutes: %s %+v", g.Status, g.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if g.Status != "done" || g.Progress.Done != 101 || len(g.Positions) != 101 {
		t.Fatalf("job ended %s with %d/%d positions", g.Status, g.Progress.Done, len(g.Positions))
	}
	for i, pos := range g.Positions {
		// Every position analysed (a position the engine answers at once,
		// with no line, has a best move and no evaluation).
		if pos == nil || pos.Ply != i || (len(pos.Eval) == 0 && pos.BestMove == "") {
			t.Errorf("position %d: %+v", i, pos)
		}
	}

	// What the store says of each search: how often it started, whether
	// it was charged; and what the owner's budget lost.
	opt, _ := redis.ParseURL(rs.URL)
	rc := redis.NewClient(opt)
	defer rc.Close()
	ctx := context.Background()
	h, err := rc.HGetAll(ctx, "usid:games:job:"+v.ID).Result()
	if err != nil {
		t.Fatal(err)
	}
	searches, again, charged := 0, map[string]int{}, 0
	for f, val := range h {
		if k, ok := strings.CutPrefix(f, "n:"); ok {
			searches++
			if n, _ := strconv.Atoi(val); n > 1 {
				again[k] = n
			}
			if h["c:"+k] != "1" {
				t.Errorf("search %s was never charged", k)
			}
		}
		if strings.HasPrefix(f, "c:") {
			charged++
		}
	}
	plies := map[string]bool{}
	for k := range again {
		plies[k[1:]] = true
	}
	tokens, _ := rc.HGet(ctx, "usid:quota:key:owner", "t").Float64()
	t.Logf("%d searches for 101 positions, each charged once (%d charge marks); %d searches done twice (%v), on %d positions; the owner's budget lost %.2f engine-seconds (%d searches at 50 ms, and the cancelled job's)",
		searches, charged, len(again), again, len(plies), 3600-tokens, searches)
	// Two engines were busy at each of the two losses.
	if len(plies) > 4 {
		t.Errorf("%d positions searched twice, want at most the 2+2 in flight at the losses", len(plies))
	}
	if charged != searches {
		t.Errorf("%d charges for %d searches", charged, searches)
	}
}
