package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/redistest"
)

// TestBudgetSharedOverRedis: two usid processes sharing one redis-server
// (access.redis) enforce one engine-time budget per key: engine time spent
// on one is refused on the other; another key is not touched (issue 17).
func TestBudgetSharedOverRedis(t *testing.T) {
	if _, err := os.Stat("/usr/games/fairy-stockfish"); err != nil {
		t.Fatalf("fairy-stockfish is missing (%v): apt-get install fairy-stockfish", err)
	}
	rs := redistest.Start(t)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	os.WriteFile(keys, []byte("shared: key-shared-0123456789\nother: key-other-0123456789\n"), 0o600)
	config := filepath.Join(dir, "usid.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `engines:
  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 1, options: {USI_Hash: 16, Threads: 1}}
  - {name: gps, disabled: true}
cache: {enabled: false}
access:
  keys_file: %s
  redis: %s
  keyed: {engine_time: {seconds: 1, period: 1h, burst: 1}}
`, keys, rs.URL), 0o600)
	start := func() string {
		_, addr, _ := startUsid(t, "--addr", "127.0.0.1:0", "--config", config)
		base := "http://" + addr
		deadline := time.Now().Add(60 * time.Second)
		for {
			if resp, err := http.Get(base + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return base
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("usid not ready within 60s")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	a, b := start(), start()
	analyze := func(base, key, limits string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/v1/analyze", strings.NewReader(`{"limits":`+limits+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, body := analyze(a, "key-shared-0123456789", `{"movetime_ms":1200}`); st != 200 {
		t.Fatalf("on the first usid: %d %s", st, body)
	}
	if st, body := analyze(b, "key-shared-0123456789", `{"depth":1}`); st != 429 || !strings.Contains(body, "engine time is spent") {
		t.Errorf("on the second usid after the first spent the key's budget: %d %s, want 429", st, body)
	}
	if st, body := analyze(b, "key-other-0123456789", `{"depth":1}`); st != 200 {
		t.Errorf("another key on the second usid: %d %s", st, body)
	}
}
