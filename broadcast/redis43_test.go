package broadcast_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

// Issue 43: broadcasts whose Redis state is planted, lost or out of step.

const prefix = "usid:bc:"

func redisClient(t *testing.T, rs *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// plantState is a broadcast's state as usid stores it, with moves moves,
// for an engine the pods here do not have: no search of it starts (whose
// snapshot would replace a planted one before it is read).
func plantState(id string, moves int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"owner":"ip:192.0.2.1","engine":"elsewhere","multipv":1,"position":{"sfen":"startpos","moves":[`, id)
	for i := range moves {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"7g7f"`)
	}
	b.WriteString(`]},"version":1,"created_at":"2026-01-01T00:00:00Z","changed_at":"2099-01-01T00:00:00Z"}`)
	return b.String()
}

// plant lists broadcast id as live with the fields given.
func plant(t *testing.T, c *redis.Client, id string, fields map[string]any) {
	// All at once (MULTI): a pod's loop that found the id active before
	// its owner was written would give the place back and leave the
	// owner's set to the late write (make stress-test saw it).
	_, err := c.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
		ctx := context.Background()
		p.HSet(ctx, prefix+"b:"+id, fields)
		p.SAdd(ctx, prefix+"active", id)
		p.SAdd(ctx, prefix+"o:ip:192.0.2.1", id)
		p.HSet(ctx, prefix+"owners", id, "ip:192.0.2.1")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// usage is a process's CPU time and peak resident memory so far.
func usage(t *testing.T, pid int) (cpu time.Duration, hwm int64) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return cpu, hwm << 10
}

// getRaw is GET path's status and body.
func getRaw(t *testing.T, p *pod, path string) (int, []byte) {
	resp, err := http.Get("http://" + p.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestBroadcastPlantedStateBounded: a 19 MB state (valid JSON, 2.5 M
// moves), a 20 MB snapshot and an evaluations hash of 20,000 fields,
// each planted in a broadcast listed as live, cost a pod what a normal
// broadcast does: every value is measured in Redis before it is read, none
// over its bound is sent, and the broadcast is ended (its place given
// back) by the first pod that finds it; GET answers 404
// stored_state_invalid (or not_found once it is gone) in a few hundred
// bytes, never the planted value. Before: the pod read all of it on every
// loop, GET and join (29 → 502 MB, 12.5 CPU-s in 15 s; a GET of 45 MB).
func TestBroadcastPlantedStateBounded(t *testing.T) {
	rs := redistest.Start(t)
	c := redisClient(t, rs)
	p := startPod(t, podConfig(rs.URL, t.TempDir(), 50))
	pid := p.cmd.Process.Pid

	// A normal broadcast, watched and read, for the comparison.
	code, v := call(t, p, "POST", "/v1/broadcasts", map[string]any{"engine": "stamp", "position": map[string]any{"sfen": "startpos"}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, v)
	}
	normal := v["id"].(string)
	w := watch(t, p, normal)
	testwait.For(t, "lines", linesBound, func() bool { i, _ := w.find(0, isType("info", 1)); return i >= 0 })
	phase := func(ids []string) (time.Duration, int64, int) {
		cpu0, _ := usage(t, pid)
		largest := 0
		for range 10 {
			for _, id := range ids {
				_, b := getRaw(t, p, "/v1/broadcasts/"+id)
				largest = max(largest, len(b))
			}
			time.Sleep(100 * time.Millisecond) // the pace of a viewer's page polling; the pod's loop runs meanwhile
		}
		cpu1, hwm := usage(t, pid)
		return cpu1 - cpu0, hwm, largest
	}
	cpuN, hwmN, largestN := phase([]string{normal, normal, normal})
	t.Logf("a normal broadcast: 30 GETs cost %v of CPU; peak RSS %d MB; largest answer %d bytes", cpuN, hwmN>>20, largestN)

	big, snap, evals := "0123456789abcdef0123456789abcd01", "0123456789abcdef0123456789abcd02", "0123456789abcdef0123456789abcd03"
	bigState := plantState(big, 2_800_000)
	plant(t, c, big, map[string]any{"state": bigState, "search": 1, "term": 0})
	plant(t, c, snap, map[string]any{"state": plantState(snap, 2), "search": 1, "term": 0, "snap": strings.Repeat("x", 20<<20)})
	fields := make([]any, 0, 40000)
	for i := range 20000 {
		fields = append(fields, strconv.Itoa(i), `{"ply":`+strconv.Itoa(i)+`}`)
	}
	c.HSet(context.Background(), prefix+"e:"+evals, fields...)
	plant(t, c, evals, map[string]any{"state": plantState(evals, 2), "search": 1, "term": 0})
	t.Logf("planted: a state of %d MB (valid JSON, 2.8 M moves), a snapshot of 20 MB, 20,000 evaluations", len(bigState)>>20)

	// A viewer is refused (404), or closed normally (the broadcast is
	// ended once found invalid), never sent anything planted.
	type watched struct {
		id, got string
		err     error
	}
	watches := make(chan watched, 3)
	for _, id := range []string{big, snap, evals} {
		go func() {
			got, err := watchPlanted(p, id)
			watches <- watched{id, got, err}
		}()
	}
	cpuP, hwmP, largestP := phase([]string{big, snap, evals})
	for range 3 {
		w := <-watches
		if w.err != nil {
			t.Errorf("watching planted broadcast %s: %v", w.id[28:], w.err)
		} else {
			t.Logf("watching planted broadcast %s: %s", w.id[28:], w.got)
		}
	}
	t.Logf("three planted broadcasts: 30 GETs cost %v of CPU; peak RSS %d MB; largest answer %d bytes", cpuP, hwmP>>20, largestP)
	if largestP > 4<<10 {
		t.Errorf("a GET of a planted broadcast answered %d bytes", largestP)
	}
	if hwmP-hwmN > 32<<20 {
		t.Errorf("peak RSS %d MB with the planted broadcasts, %d MB before", hwmP>>20, hwmN>>20)
	}
	if cpuP > cpuN+500*time.Millisecond {
		t.Errorf("the planted broadcasts cost %v of CPU, a normal one %v", cpuP, cpuN)
	}
	for _, id := range []string{big, snap, evals} {
		code, b := getRaw(t, p, "/v1/broadcasts/"+id)
		var prob struct{ Code string }
		json.Unmarshal(b, &prob)
		if code != http.StatusNotFound || (prob.Code != "stored_state_invalid" && prob.Code != "not_found") {
			t.Errorf("GET planted %s: %d %s", id[28:], code, b)
		}
		testwait.For(t, "the planted broadcast's place given back", 5*time.Second, func() bool {
			return !c.SIsMember(context.Background(), prefix+"active", id).Val() && c.Exists(context.Background(), prefix+"b:"+id, prefix+"e:"+id).Val() == 0
		})
	}
	if n := c.SCard(context.Background(), prefix+"o:ip:192.0.2.1").Val(); n != 0 {
		t.Errorf("the planted owner's set still holds %d ids", n)
	}
	// The normal broadcast lives on.
	if code, v := call(t, p, "GET", "/v1/broadcasts/"+normal, nil); code != http.StatusOK || v["status"] != "live" {
		t.Errorf("the normal broadcast: %d %v", code, v["status"])
	}
}

// watchPlanted watches broadcast id on p: what came (a refusal, or the
// frames until the close), or what was wrong with it.
func watchPlanted(p *pod, id string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/broadcasts/"+id+"/ws", nil)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return "404", nil
		}
		return "", err
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 10)
	got := "101"
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			if s := websocket.CloseStatus(err); s == websocket.StatusNormalClosure {
				return got + ", closed normally", nil
			}
			return "", fmt.Errorf("%s, then %v", got, err)
		}
		got += fmt.Sprintf(", a frame of %d bytes", len(b))
	}
}

// endedCounter counts the ended events published for broadcast id, as
// every pod's viewers would get them.
func endedCounter(t *testing.T, c *redis.Client, id string) func() int {
	ps := c.Subscribe(context.Background(), prefix+"l:"+id)
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	var mu sync.Mutex
	n := 0
	go func() {
		for msg := range ps.Channel() {
			if strings.Contains(msg.Payload, `"type":"ended"`) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestBroadcastKeysOutOfStep: a broadcast's keys fall out of step as
// eviction or a half-done cleanup leaves them, on two pods sharing a
// redis-server. A broadcast whose hash is gone, its id still in the
// active and owner sets, is found by the pods' loop and given back (its
// viewers told ended, once), and its owner may create another; one whose
// state says ended but is still counted (a cleanup that failed before
// one script did it all) is given back with one ended published, not one
// per pod four times a second; the owner's DELETE of a broadcast whose
// hash is gone answers 404 and gives the place back at once. Before: the
// places stayed taken for good (429 for the owner's next creation), and
// every pod republished ended every check.
func TestBroadcastKeysOutOfStep(t *testing.T) {
	rs := redistest.Start(t)
	c := redisClient(t, rs)
	ctx := context.Background()
	cfg := podConfig(rs.URL, t.TempDir(), 50)
	a, b := startPod(t, cfg), startPod(t, cfg)
	create := func() string {
		t.Helper()
		code, v := call(t, a, "POST", "/v1/broadcasts", map[string]any{"engine": "stamp", "position": map[string]any{"sfen": "startpos"}})
		if code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, v)
		}
		return v["id"].(string)
	}
	counted := func(id string) bool { return c.SIsMember(ctx, prefix+"active", id).Val() }

	// Evicted: the hash goes, the sets keep the id.
	evicted, stale := create(), create() // the owner's two places
	w := watch(t, b, evicted)
	testwait.For(t, "lines", linesBound, func() bool { i, _ := w.find(0, isType("info", 1)); return i >= 0 })
	ended := endedCounter(t, c, evicted)
	c.Del(ctx, prefix+"b:"+evicted)
	start := time.Now()
	testwait.For(t, "the evicted broadcast's place given back", 5*time.Second, func() bool { return !counted(evicted) })
	testwait.For(t, "its viewer told", 5*time.Second, func() bool { i, _ := w.find(0, isType("ended", 0)); return i >= 0 })
	t.Logf("the evicted broadcast given back %v after its hash went", time.Since(start).Round(time.Millisecond))

	// Ended but still counted: the state says ended, the sets hold it.
	endedN := endedCounter(t, c, stale)
	js := c.HGet(ctx, prefix+"b:"+stale, "state").Val()
	c.HSet(ctx, prefix+"b:"+stale, "state", strings.Replace(js, `"version"`, `"ended":true,"version"`, 1))
	testwait.For(t, "the ended broadcast's place given back", 5*time.Second, func() bool { return !counted(stale) })
	time.Sleep(2 * time.Second) // ten checks of each pod: what would be republished, is
	if n := endedN(); n != 1 {
		t.Errorf("a broadcast ended but still counted: %d ended events published in 2 s, want 1", n)
	}
	if n := ended(); n != 1 {
		t.Errorf("an evicted broadcast: %d ended events published, want 1", n)
	}
	if n := c.SCard(ctx, prefix+"o:ip:127.0.0.1").Val(); n != 0 {
		t.Errorf("the owner's set holds %d ids, want 0", n)
	}

	// The owner's DELETE of a broadcast whose hash is gone.
	gone, kept := create(), create()
	c.Del(ctx, prefix+"b:"+gone)
	code, v := call(t, a, "DELETE", "/v1/broadcasts/"+gone, nil)
	t.Logf("DELETE of a broadcast whose hash is gone: %d %v", code, v)
	if code != http.StatusNotFound || v["code"] != "not_found" {
		t.Errorf("DELETE of a broadcast whose hash is gone: %d %v, want 404 not_found", code, v)
	}
	if counted(gone) {
		t.Error("DELETE of a broadcast whose hash is gone left it counted")
	}
	// The owner holds one place (kept): another creation is allowed.
	create()
	if code, _ := call(t, a, "DELETE", "/v1/broadcasts/"+kept, nil); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	if counted(kept) || c.TTL(ctx, prefix+"b:"+kept).Val() <= 0 {
		t.Errorf("an ended broadcast: counted %v, its hash's TTL %v", counted(kept), c.TTL(ctx, prefix+"b:"+kept).Val())
	}
}

// coherent reports what is wrong with a viewer's events, if anything: a
// line of another search than the last position's before it.
func coherent(evs []map[string]any) string {
	pos := -1
	for i, ev := range evs {
		switch ev["type"] {
		case "position":
			pos = num(ev["search"])
		case "info":
			if num(ev["search"]) != pos {
				return fmt.Sprintf("event %d: a line of search %d on the position of search %d", i, num(ev["search"]), pos)
			}
		}
	}
	return ""
}

// TestBroadcastRepairAfterCut: three pods on one redis-server, the second
// through a proxy. Its link is cut for 3 s and mended (every connection
// reset); meanwhile the owner, on the first pod, moves in two broadcasts
// and ends one of them. Within a few seconds of the mend every viewer on
// every pod has the ended broadcast's ended event (its connection closed)
// and the live one's new position and lines, and a late joiner on the
// second pod is shown the new search's lines on the new position only.
// No viewer ever gets a line of another search than its last position's.
// Before: the cut pod's viewer of the ended broadcast stayed open with no
// ended event, and its late joiner got the new search's lines on the old
// position.
func TestBroadcastRepairAfterCut(t *testing.T) {
	rs := redistest.Start(t)
	px := redistest.NewProxy(t, rs)
	profiles := t.TempDir()
	a := startPod(t, podConfig(rs.URL, profiles, 50))
	b := startPod(t, podConfig(px.URL, profiles, 50))
	c := startPod(t, podConfig(rs.URL, profiles, 50))
	// Each pod has one engine: one broadcast's search runs on the first,
	// the other's on the third.
	create := func(p *pod) string {
		t.Helper()
		code, v := call(t, p, "POST", "/v1/broadcasts", map[string]any{"engine": "stamp", "position": map[string]any{"sfen": "startpos"}})
		if code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, v)
		}
		return v["id"].(string)
	}
	ending, living := create(a), create(c)
	var all []*watcher
	viewers := map[string][]*watcher{}
	for _, id := range []string{ending, living} {
		for _, p := range []*pod{a, b, c} {
			w := watch(t, p, id)
			testwait.For(t, "lines", linesBound, func() bool { i, _ := w.find(0, isType("info", 1)); return i >= 0 })
			viewers[id] = append(viewers[id], w)
			all = append(all, w)
		}
	}

	px.Cut()
	for _, id := range []string{ending, living} {
		if code, v := call(t, a, "POST", "/v1/broadcasts/"+id+"/moves", map[string]any{"moves": []string{"7g7f"}}); code != http.StatusOK {
			t.Fatalf("moves: %d %v", code, v)
		}
	}
	testwait.For(t, "the next search's lines on the first pod", 5*time.Second, func() bool {
		i, _ := viewers[living][0].find(0, isType("info", 2))
		j, _ := viewers[ending][0].find(0, isType("info", 2))
		return i >= 0 && j >= 0
	})
	if code, v := call(t, a, "DELETE", "/v1/broadcasts/"+ending, nil); code != http.StatusOK {
		t.Fatalf("DELETE: %d %v", code, v)
	}
	time.Sleep(3 * time.Second) // the length of the cut
	px.Mend()
	mended := time.Now()

	for i, w := range viewers[ending] {
		testwait.For(t, fmt.Sprintf("ended on pod %d", i+1), 10*time.Second, func() bool { i, _ := w.find(0, isType("ended", 0)); return i >= 0 })
		_, at := w.find(0, isType("ended", 0))
		t.Logf("pod %d's viewer of the ended broadcast: ended %v after the mend", i+1, at.Sub(mended).Round(time.Millisecond))
		if at.Sub(mended) > 5*time.Second {
			t.Errorf("pod %d's viewer got ended %v after the mend", i+1, at.Sub(mended))
		}
	}
	for i, w := range viewers[living] {
		testwait.For(t, fmt.Sprintf("the new position and its lines on pod %d", i+1), 10*time.Second, func() bool {
			p, _ := w.find(0, isType("position", 2))
			l, _ := w.find(max(p, 0), isType("info", 2))
			return p >= 0 && l > p
		})
		_, at := w.find(0, isType("info", 2))
		t.Logf("pod %d's viewer of the live broadcast: the new search's lines %v after the mend", i+1, at.Sub(mended).Round(time.Millisecond))
	}
	late := watch(t, b, living)
	all = append(all, late)
	testwait.For(t, "the late joiner's lines", 5*time.Second, func() bool { i, _ := late.find(0, isType("info", 0)); return i >= 0 })
	if evs, _ := late.snapshot(); num(evs[0]["search"]) < 2 || evs[0]["type"] != "position" {
		t.Errorf("the late joiner on the cut pod began with %v", evs[0])
	}
	for i, w := range all {
		evs, _ := w.snapshot()
		if bad := coherent(evs); bad != "" {
			t.Errorf("viewer %d: %s", i, bad)
		}
	}
	t.Logf("the proxy cut %d connections", px.Cuts())
}

// linesBound is how long a broadcast may take to show its first lines: its
// runner claims it, leases an engine and searches. Under stress-ng, with
// the race detector, 10 s was once not enough (TestBroadcastKeysOutOfStep).
const linesBound = 30 * time.Second
