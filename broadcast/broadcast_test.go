package broadcast_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/app"
	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

// envServe makes the test binary a usid serving the configuration file it
// names on the address in envAddr: a real process of its own, as a pod.
const (
	envServe = "USID_BROADCAST_TEST_SERVE"
	envAddr  = "USID_BROADCAST_TEST_ADDR"
)

func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	if file := os.Getenv(envServe); file != "" {
		os.Exit(serve(file, os.Getenv(envAddr)))
	}
	os.Exit(m.Run())
}

func serve(file, addr string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := app.ParseConfig(raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m := &app.Main{Config: cfg, Addr: addr, Logger: log}
	if err := m.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.Close(ctx)
	return 0
}

// pod is a usid process.
type pod struct {
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startPod runs a usid process with config (YAML) and waits until it is ready.
func startPod(t *testing.T, config string) *pod {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "usid.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pod{addr: freeAddr(t), log: &bytes.Buffer{}}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), envServe+"="+file, envAddr+"="+p.addr)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("pod %s log:\n%s", p.addr, p.log.String())
		}
	})
	testwait.For(t, "pod "+p.addr+" ready", 60*time.Second, func() bool {
		resp, err := http.Get("http://" + p.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

func (p *pod) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// call sends a JSON request to pod p and decodes the answer.
func call(t *testing.T, p *pod, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+p.addr+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// watcher is a viewer's WebSocket, its events in order with when they came.
type watcher struct {
	mu     sync.Mutex
	events []map[string]any
	at     []time.Time
	closed bool
	c      *websocket.Conn
}

func watch(t *testing.T, p *pod, id string) *watcher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/broadcasts/"+id+"/ws", nil)
	if err != nil {
		t.Fatalf("watch on %s: %v", p.addr, err)
	}
	c.SetReadLimit(1 << 20)
	w := &watcher{c: c}
	go func() {
		for {
			_, b, err := c.Read(context.Background())
			now := time.Now()
			w.mu.Lock()
			if err != nil {
				w.closed = true
				w.mu.Unlock()
				return
			}
			var ev map[string]any
			json.Unmarshal(b, &ev)
			w.events = append(w.events, ev)
			w.at = append(w.at, now)
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *watcher) snapshot() ([]map[string]any, []time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.events...), append([]time.Time(nil), w.at...)
}

// find is the first event after index from that match says yes to, and its index.
func (w *watcher) find(from int, match func(map[string]any) bool) (int, time.Time) {
	evs, at := w.snapshot()
	for i := from; i < len(evs); i++ {
		if match(evs[i]) {
			return i, at[i]
		}
	}
	return -1, time.Time{}
}

func num(v any) int { f, _ := v.(float64); return int(f) }

func isType(typ string, search int) func(map[string]any) bool {
	return func(ev map[string]any) bool {
		return ev["type"] == typ && (search == 0 || num(ev["search"]) == search)
	}
}

// terminals counts the terminal events per search a viewer got.
func terminals(evs []map[string]any) map[int]int {
	n := map[int]int{}
	for _, ev := range evs {
		if ev["type"] == "bestmove" || ev["type"] == "error" {
			n[num(ev["search"])]++
		}
	}
	return n
}

func podConfig(redisURL, profiles string, stampMS int) string {
	return fmt.Sprintf(`engines:
  - name: stamp
    path: %s
    env: ["%s=%s=%dms"]
    instances: 1
profile_dir: %s
cache: {enabled: false}
access:
  redis: %s
broadcast:
  lease: 1s
  check: 200ms
`, os.Args[0], fakeengine.EnvMode, fakeengine.StampedInfo, stampMS, profiles, redisURL)
}

// TestFailoverAcrossPods (issue 38): three usid processes on one
// redis-server. A broadcast created on one runs its search there; viewers on
// the other two see its lines. The first pod is killed (SIGKILL): within 3 s
// the viewers on the others get lines again, of a new search another pod
// took over, after exactly one terminal event for the search that was cut.
func TestFailoverAcrossPods(t *testing.T) {
	rs := redistest.Start(t)
	profiles := t.TempDir()
	cfg := podConfig(rs.URL, profiles, 50)
	a := startPod(t, cfg)
	b, c := startPod(t, cfg), startPod(t, cfg)

	code, v := call(t, a, "POST", "/v1/broadcasts", map[string]any{"engine": "stamp", "position": map[string]any{"sfen": "startpos", "moves": []string{"7g7f"}}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, v)
	}
	id := v["id"].(string)
	wb, wc := watch(t, b, id), watch(t, c, id)
	for _, w := range []*watcher{wb, wc} {
		testwait.For(t, "lines on another pod", 10*time.Second, func() bool { i, _ := w.find(0, isType("info", 1)); return i >= 0 })
	}
	// A late joiner gets the position and the current line at once.
	late := watch(t, c, id)
	testwait.For(t, "the late joiner's state", 2*time.Second, func() bool {
		i, _ := late.find(0, isType("position", 1))
		j, _ := late.find(0, isType("info", 1))
		return i == 0 && j == 1
	})
	// The moves come from the owner, on any pod: a new search.
	if code, v := call(t, b, "POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"3c3d"}, "ply": 1}); code != http.StatusOK || num(v["ply"]) != 2 {
		t.Fatalf("moves: %d %v", code, v)
	}
	for _, w := range []*watcher{wb, wc} {
		testwait.For(t, "the next search's lines", 5*time.Second, func() bool { i, _ := w.find(0, isType("info", 2)); return i >= 0 })
	}
	if code, _ := call(t, b, "POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"2g2f"}, "ply": 1}); code != http.StatusConflict {
		t.Errorf("moves for a stale ply: %d, want 409", code)
	}

	killed := time.Now()
	a.kill()
	var cut, back int
	for _, w := range []*watcher{wb, wc} {
		testwait.For(t, "lines of a search taken over", 10*time.Second, func() bool {
			i, _ := w.find(0, func(ev map[string]any) bool { return ev["type"] == "info" && num(ev["search"]) > 2 })
			return i >= 0
		})
		_, got := w.find(0, func(ev map[string]any) bool { return ev["type"] == "info" && num(ev["search"]) > 2 })
		gap := got.Sub(killed)
		t.Logf("viewer got lines again %v after the kill", gap.Round(time.Millisecond))
		if gap > 3*time.Second {
			t.Errorf("lines again %v after the kill: want ≤ 3s", gap)
		}
		if i, _ := w.find(0, func(ev map[string]any) bool { return ev["type"] == "error" && num(ev["search"]) == 2 }); i >= 0 {
			cut++
		}
		back++
	}
	if cut != back {
		t.Errorf("%d of %d viewers got the cut search's error", cut, back)
	}
	// The broadcast's position is the same: the take-over searched it again.
	code, v = call(t, c, "GET", "/v1/broadcasts/"+id, nil)
	if code != http.StatusOK || num(v["ply"]) != 2 || len(v["lines"].([]any)) == 0 {
		t.Errorf("GET after the take-over: %d %v", code, v)
	}
	if code, _ := call(t, c, "DELETE", "/v1/broadcasts/"+id, nil); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	for _, w := range []*watcher{wb, wc, late} {
		testwait.For(t, "ended", 5*time.Second, func() bool { i, _ := w.find(0, isType("ended", 0)); return i >= 0 })
		evs, _ := w.snapshot()
		for s, n := range terminals(evs) {
			if n != 1 {
				t.Errorf("search %d: %d terminal events, want 1", s, n)
			}
		}
	}
}

// TestBroadcastOnePod: the life of a broadcast on one usid with a real engine
// (fairy-stockfish): viewers get the position, lines and one bestmove per
// search, the evaluations of the positions searched, and the evaluation
// cache answers for them afterwards.
func TestBroadcastOnePod(t *testing.T) {
	p := startPod(t, fmt.Sprintf(`engines:
  - name: fairy
    path: /usr/games/fairy-stockfish
    instances: 2
    options: {USI_Hash: 16, Threads: 1}
profile_dir: %s
`, t.TempDir()))
	code, v := call(t, p, "POST", "/v1/broadcasts", map[string]any{"engine": "fairy", "multipv": 2, "position": map[string]any{"sfen": "startpos"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, v)
	}
	id := v["id"].(string)
	ws := []*watcher{watch(t, p, id), watch(t, p, id), watch(t, p, id)}
	moves := []string{"7g7f", "3c3d", "2g2f"}
	for i, m := range moves {
		for _, w := range ws {
			testwait.For(t, "lines of both multipv", 10*time.Second, func() bool {
				a, _ := w.find(0, func(ev map[string]any) bool {
					return ev["type"] == "info" && num(ev["search"]) == i+1 && num(ev["multipv"]) == 2
				})
				return a >= 0
			})
		}
		time.Sleep(300 * time.Millisecond) // a deeper search to cache (the moves of a game come seconds apart)
		if code, v := call(t, p, "POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{m}}); code != http.StatusOK {
			t.Fatalf("move %s: %d %v", m, code, v)
		}
	}
	if code, v := call(t, p, "POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"5i5h"}}); code != http.StatusUnprocessableEntity || num(v["move_index"]) != 3 {
		t.Errorf("an illegal move: %d %v", code, v)
	}
	testwait.For(t, "the evaluations of the three positions searched", 5*time.Second, func() bool {
		code, v = call(t, p, "GET", "/v1/broadcasts/"+id, nil)
		return len(v["evals"].([]any)) == 3
	})
	if code != http.StatusOK || len(v["evals"].([]any)) != 3 {
		t.Errorf("GET: %d evals %v", code, v["evals"])
	}
	if code, _ := call(t, p, "DELETE", "/v1/broadcasts/"+id, nil); code != http.StatusOK {
		t.Fatalf("DELETE: %d", code)
	}
	for _, w := range ws {
		testwait.For(t, "ended", 5*time.Second, func() bool { i, _ := w.find(0, isType("ended", 0)); return i >= 0 })
		evs, _ := w.snapshot()
		n := terminals(evs)
		for s := 1; s <= 4; s++ {
			if n[s] != 1 {
				t.Errorf("search %d: %d terminal events, want 1 (%v)", s, n[s], n)
			}
		}
	}
	// Each finished position's lines are in the cache: analysing the game
	// afterwards asks no engine.
	for i := range moves {
		code, v := call(t, p, "POST", "/v1/analyze", map[string]any{"engine": "fairy", "multipv": 2, "limits": map[string]any{"depth": 1},
			"position": map[string]any{"sfen": "startpos", "moves": moves[:i]}})
		if code != http.StatusOK || v["cached"] != true {
			t.Errorf("position %d analysed again: %d cached=%v", i, code, v["cached"])
		}
	}
}

// TestBroadcasterPays: the search is charged to the engine-time budget of
// the client that created the broadcast: with one engine-second in it, the
// analysis of the position stops once it is spent (bestmove
// limited_by_budget), viewers or not.
func TestBroadcasterPays(t *testing.T) {
	p := startPod(t, fmt.Sprintf(`engines:
  - name: stamp
    path: %s
    env: ["%s=%s=50ms"]
    instances: 1
profile_dir: %s
cache: {enabled: false}
access:
  anonymous_quota: {engine_time: {seconds: 1, period: 1h, burst: 1}}
`, os.Args[0], fakeengine.EnvMode, fakeengine.StampedInfo, t.TempDir()))
	code, v := call(t, p, "POST", "/v1/broadcasts", map[string]any{"engine": "stamp"})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, v)
	}
	w := watch(t, p, v["id"].(string))
	watch(t, p, v["id"].(string))
	testwait.For(t, "the search stopped by the owner's budget", 10*time.Second, func() bool {
		i, _ := w.find(0, func(ev map[string]any) bool { return ev["type"] == "bestmove" && ev["limited_by_budget"] == true })
		return i >= 0
	})
	start, _ := w.find(0, isType("position", 1))
	end, _ := w.find(0, isType("bestmove", 1))
	_, t0 := w.find(start, isType("position", 1))
	_, t1 := w.find(end, isType("bestmove", 1))
	if d := t1.Sub(t0); d < 500*time.Millisecond || d > 5*time.Second {
		t.Errorf("the search ran %v on a budget of 1 engine-second", d)
	}
}

// TestForgottenBroadcastEnds: a broadcast sent no move for broadcast.idle
// ends by itself, as if its owner had ended it (its search's one terminal
// event, then ended, its place given back); one kept sending moves lives on.
func TestForgottenBroadcastEnds(t *testing.T) {
	p := startPod(t, fmt.Sprintf(`engines:
  - name: fairy
    path: /usr/games/fairy-stockfish
    instances: 2
    options: {USI_Hash: 16, Threads: 1}
broadcast: {idle: 1500ms, check: 50ms, max_per_client: 2}
profile_dir: %s
`, t.TempDir()))
	create := func() string {
		code, v := call(t, p, "POST", "/v1/broadcasts", map[string]any{"engine": "fairy", "position": map[string]any{"sfen": "startpos"}})
		if code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, v)
		}
		return v["id"].(string)
	}
	forgotten, kept := create(), create()
	w := watch(t, p, forgotten)
	start := time.Now()
	moves := []string{"7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b"}
	for i := 0; ; i++ {
		if i, _ := w.find(0, isType("ended", 0)); i >= 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the forgotten broadcast did not end within 10 s of an idle limit of 1.5 s")
		}
		// The other one is sent a move every 0.5 s.
		if code, v := call(t, p, "POST", "/v1/broadcasts/"+kept+"/moves", map[string]any{"moves": []string{moves[i%len(moves)]}}); code != http.StatusOK {
			if i < len(moves) {
				t.Fatalf("move to the kept broadcast: %d %v", code, v)
			}
		}
		time.Sleep(500 * time.Millisecond) // the pace of the kept game's moves
	}
	took := time.Since(start)
	if took < 1500*time.Millisecond {
		t.Errorf("the forgotten broadcast ended after %v, before its idle limit of 1.5 s", took)
	}
	evs, _ := w.snapshot()
	if n := terminals(evs); n[1] != 1 {
		t.Errorf("the forgotten broadcast's search: %v terminal events, want 1", n)
	}
	if code, v := call(t, p, "GET", "/v1/broadcasts/"+forgotten, nil); code != http.StatusOK || v["status"] != "ended" {
		t.Errorf("GET the forgotten broadcast: %d %v", code, v["status"])
	}
	if code, v := call(t, p, "GET", "/v1/broadcasts/"+kept, nil); code != http.StatusOK || v["status"] != "live" {
		t.Errorf("GET the kept broadcast: %d %v, want live", code, v["status"])
	}
	// Its place is free again: a client with two at most may start another.
	create()
	t.Logf("the forgotten broadcast ended %v after it was created", took.Round(10*time.Millisecond))
}
