package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
)

// matchView is GET /v1/matches/{id}, as far as this test reads it.
type matchView struct {
	Status string            `json:"status"`
	Games  []json.RawMessage `json:"games"`
	Score  struct{ Wins, Draws, Losses int }
}

func getMatch(t *testing.T, addr, id string) (*matchView, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/matches/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	var v matchView
	if err := json.NewDecoder(io.TeeReader(resp.Body, &b)).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET match on %s: %d %v %s", addr, resp.StatusCode, err, b.String())
	}
	return &v, b.String()
}

// TestMatchAcrossPods (issue 45): three usid processes on one
// redis-server play a match started on one of them. Once a game has
// ended, the process playing a game is killed (SIGKILL): the match still
// ends done with every game played, the games ended before the kill
// unchanged, the killed pod's game played again by another once its lease
// ran out; the other pods answer the same match; the strong side is still
// ahead.
func TestMatchAcrossPods(t *testing.T) {
	if _, err := os.Stat("/usr/games/fairy-stockfish"); err != nil {
		t.Fatalf("fairy-stockfish is missing (%v): apt-get install fairy-stockfish", err)
	}
	rs := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	dir := t.TempDir()
	const lease = 1500 * time.Millisecond
	type pod struct {
		name, addr string
		logs       func() string
		kill       func()
	}
	start := func(name string) *pod {
		config := filepath.Join(dir, name+".yaml")
		os.WriteFile(config, fmt.Appendf(nil, `engines:
  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 2, options: {USI_Hash: 16, Threads: 1}, client_options: {"Skill Level": {}}}
  - {name: gps, disabled: true}
cache: {enabled: false}
matches: {redis: %q, lease: %s, max_running: 1, max_concurrency: 2}
`, rs.URL, lease), 0o600)
		cmd, addr, logs := startUsid(t, "--addr", "127.0.0.1:0", "--config", config)
		p := &pod{name: name, addr: addr, logs: logs, kill: func() { cmd.Process.Kill(); cmd.Wait() }}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("pod %s's log:\n%s", name, logs())
			}
		})
		return p
	}
	pods := []*pod{start("a"), start("b"), start("c")}
	for _, p := range pods {
		testwait.For(t, "pod "+p.name+"'s engines idle", 3*time.Minute, func() bool {
			return enginesIn("http://"+p.addr, "fairy", "idle") == 2
		})
	}

	body := `{"players": [{"engine": "fairy"}, {"engine": "fairy", "options": {"Skill Level": "-20"}}],
		"games": 6, "limits": {"nodes": 3000}, "concurrency": 2}`
	resp, err := http.Post("http://"+pods[0].addr+"/v1/matches", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || created.ID == "" {
		t.Fatalf("POST /v1/matches: %d", resp.StatusCode)
	}
	id := created.ID

	// A game ended, and a pod holding another (its lease in Redis, its
	// name in its log's claims): that pod is killed.
	podOf := regexp.MustCompile(`match game claimed.* pod=(\w+)`)
	var victim *pod
	var victimName string
	var before *matchView
	ctx := context.Background()
	testwait.For(t, "a game ended and another held", 2*time.Minute, func() bool {
		v, _ := getMatch(t, pods[1].addr, id)
		if !slices.ContainsFunc(v.Games, ended) {
			return false
		}
		keys, _ := rc.Keys(ctx, "usid:match:l:"+id+":*").Result()
		for _, k := range keys {
			holder, _ := rc.Get(ctx, k).Result()
			for _, p := range pods {
				if m := podOf.FindStringSubmatch(p.logs()); m != nil && m[1] == holder {
					victim, victimName, before = p, holder, v
					return true
				}
			}
		}
		return false
	})
	victim.kill()
	killed := time.Now()
	held := 0
	keys, _ := rc.Keys(ctx, "usid:match:l:"+id+":*").Result()
	for _, k := range keys {
		if h, _ := rc.Get(ctx, k).Result(); h == victimName {
			held++
		}
	}
	if held == 0 {
		t.Fatalf("pod %s held no game when killed", victim.name)
	}
	var others []*pod
	for _, p := range pods {
		if p != victim {
			others = append(others, p)
		}
	}
	testwait.For(t, "the match ended", 3*time.Minute, func() bool {
		v, _ := getMatch(t, others[0].addr, id)
		return v.Status != "running" && v.Status != "queued"
	})
	took := time.Since(killed)
	t.Logf("pod %s killed holding %d game(s); the match ended %v later", victim.name, held, took.Round(time.Millisecond))
	if took < lease {
		t.Errorf("the match ended %v after the kill: before the killed pod's %v lease could run out", took, lease)
	}
	v, raw := getMatch(t, others[0].addr, id)
	if v.Status != "done" || len(v.Games) != 6 {
		t.Fatalf("got %s with %d games, want done with 6: %s", v.Status, len(v.Games), raw)
	}
	for _, g := range before.Games {
		if !ended(g) {
			continue // under way at the kill: listed as it stood, played again
		}
		var at struct{ Index int }
		json.Unmarshal(g, &at)
		if string(g) != string(v.Games[at.Index]) {
			t.Errorf("game %d, ended before the kill, changed:\n%s\n%s", at.Index, g, v.Games[at.Index])
		}
	}
	if _, raw2 := getMatch(t, others[1].addr, id); raw2 != raw {
		t.Errorf("two pods answer differently:\n%s\n%s", raw, raw2)
	}
	t.Logf("score %+v", v.Score)
	if v.Score.Wins <= v.Score.Losses {
		t.Errorf("got %+v: want the strong side ahead", v.Score)
	}
}

// ended reports whether a match's game, as listed, has ended: it has a
// reason (the games under way are listed too, with none).
func ended(g json.RawMessage) bool {
	var v struct{ Reason string }
	return json.Unmarshal(g, &v) == nil && v.Reason != ""
}
