package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

// TestSoak runs about 100 WebSocket sessions and REST clients against usid on
// loopback and checks for zero unexpected errors and flat goroutines and
// memory. It runs 8 s by default; USID_SOAK=5m (make soak) runs longer.
func TestSoak(t *testing.T) {
	d := 8 * time.Second
	if v := os.Getenv("USID_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("USID_SOAK=%q: %v", v, err)
		}
	}
	const sessions, restClients = 100, 8
	// Fewer engines than sessions: sessions hand their engine on after
	// MaxLease and queue again, so everyone is served in turn.
	e, _ := fakeServerWith(t, func(c *session.Config) { c.MaxLease = time.Second },
		pool.EngineConfig{Name: "fake", Path: fakeengine.Path(), Instances: 40, Queue: 500,
			Env: []string{fakeengine.EnvMode + "=" + fakeengine.Normal}})
	e.waitIdle(t)

	var searches, restOK, failures atomic.Int64
	var firstErr sync.Once
	fail := func(format string, args ...any) {
		failures.Add(1)
		firstErr.Do(func() { t.Errorf(format, args...) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	measure := func() (int, uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return runtime.NumGoroutine(), m.HeapInuse
	}
	var g0 int
	var h0 uint64
	var warm sync.Once
	for i := range sessions {
		wg.Go(func() {
			c, _, err := websocket.Dial(ctx, "ws"+e.http.URL[len("http"):]+"/v1/ws", nil)
			if err != nil {
				fail("dial: %v", err)
				return
			}
			defer c.CloseNow()
			for n := 0; ctx.Err() == nil; n++ {
				id := fmt.Sprintf("s%d-%d", i, n)
				req := fmt.Sprintf(`{"type":"analyze","id":%q,"limits":{"movetime_ms":%d}}`, id, 20+(i+n)%80)
				if n%7 == 3 { // sometimes an analysis until stop, as boards do
					req = fmt.Sprintf(`{"type":"analyze","id":%q,"position":{"moves":["2g2f","8c8d"]}}`, id)
				}
				if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
					return
				}
				if n%7 == 3 {
					time.Sleep(30 * time.Millisecond)
					c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"type":"stop","id":%q}`, id)))
				}
				for {
					_, b, err := c.Read(ctx)
					if err != nil {
						if ctx.Err() == nil {
							fail("session %d read: %v", i, err)
						}
						return
					}
					s := string(b)
					// The only error expected: a stop that came while the
					// request still waited for an engine.
					if strings.Contains(s, `"type":"error"`) && !(n%7 == 3 && strings.Contains(s, `"code":"cancelled"`)) {
						fail("session %d: %s", i, s)
					}
					if strings.Contains(s, `"id":"`+id+`"`) && (strings.Contains(s, `"type":"bestmove"`) || strings.Contains(s, `"type":"error"`)) {
						searches.Add(1)
						break
					}
				}
			}
		})
	}
	for range restClients {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, _, body := callPlain(e, "/v1/validate", `{"position":{"moves":["7g7f","3c3d"]}}`)
				if code != 200 || body == "" {
					fail("validate: %d %s", code, body)
				}
				code, _, body = callPlain(e, "/v1/analyze", `{"limits":{"movetime_ms":30}}`)
				switch {
				case code == 200:
					restOK.Add(1)
				case ctx.Err() == nil:
					fail("analyze: %d %s", code, body)
				}
			}
		})
	}
	time.Sleep(min(d/4, 3*time.Second))
	warm.Do(func() { g0, h0 = measure() })
	wg.Wait()
	e.waitIdle(t)
	time.Sleep(200 * time.Millisecond) // sessions' goroutines wind down
	g1, h1 := measure()
	t.Logf("soak %v: %d sessions, %d REST clients: %d WebSocket searches, %d REST analyses, %d failures; goroutines %d under load, %d after; heap %.1f MB under load, %.1f MB after",
		d, sessions, restClients, searches.Load(), restOK.Load(), failures.Load(), g0, g1, float64(h0)/1e6, float64(h1)/1e6)
	if searches.Load() < sessions {
		t.Errorf("only %d searches", searches.Load())
	}
	if g1 > g0 {
		t.Errorf("goroutines grew: %d under load, %d after the load ended", g0, g1)
	}
	if h1 > h0+8<<20 {
		t.Errorf("heap grew: %d under load, %d after", h0, h1)
	}
}

// callPlain posts a body without the spec check (safe from any goroutine).
func callPlain(e *env, path, body string) (int, http.Header, string) {
	resp, err := http.Post(e.http.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
