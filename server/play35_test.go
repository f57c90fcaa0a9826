package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
)

// proxied serves e's pool, service and games behind a trusted proxy on
// loopback, so that each client names its own address (X-Forwarded-For):
// clients of several addresses and networks from one test.
func proxied(t *testing.T, e *env) *httptest.Server {
	cfg := e.srv.cfg
	cfg.Registerer = nil
	cfg.Access = &Access{Anonymous: true, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Drain(context.Background())
		hs.Close()
	})
	return hs
}

// dialFrom connects to hs as the client at addr.
func dialFrom(t *testing.T, hs *httptest.Server, addr string) *wsClient {
	t.Helper()
	c, _, err := wsDial(t, hs.URL, "", http.Header{"X-Forwarded-For": {addr}})
	if err != nil {
		t.Fatalf("dial as %s: %v", addr, err)
	}
	cl := &wsClient{t: t, c: c, events: make(chan map[string]any, 10000), done: make(chan struct{})}
	go cl.read()
	t.Cleanup(func() { cl.c.Close(websocket.StatusNormalClosure, ""); <-cl.done })
	return cl
}

func playOf(ev map[string]any) map[string]any { p, _ := ev["play"].(map[string]any); return p }

// TestEngineClockStandsWhileQueued (issue 35): one fairy process; during
// the human's turn the game's idle engine goes to another client's
// analysis until stop. The human moves; the engine's search waits for the
// process. Its clock must stand meanwhile: it never loses on time without
// having searched, and its move's time is what it used once it had the
// process, not the wait.
func TestEngineClockStandsWhileQueued(t *testing.T) {
	e, err := newEnvWith([]pool.EngineConfig{{Name: "fairy", Path: fairyPath, Instances: 1,
		Options: map[string]string{"USI_Hash": "16", "Threads": "1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	hs := proxied(t, e)
	player, other := dialFrom(t, hs, "192.0.2.1"), dialFrom(t, hs, "198.51.100.7")

	// The engine's whole time is a byoyomi of 2 s; its level has it think
	// 300 ms, so that a loaded machine leaves it time to spare.
	const byoyomi = 2000
	player.send(map[string]any{"type": "play_start", "id": "p1", "engine": "fairy",
		"play": map[string]any{"side": "b", "level": map[string]any{"movetime_ms": 300},
			"clock": map[string]any{"b": map[string]any{"main_ms": 600000}, "w": map[string]any{"byoyomi_ms": byoyomi}}}})
	st := playOf(last(player.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p1" })))
	if st == nil || st["status"] != "playing" {
		t.Fatalf("play_start: %v", st)
	}
	game := st["game"].(string)
	// The game's session leases the process for its new game (usinewgame)
	// first: the engine's turn must begin with a go that waits, not with
	// a new game still waiting (no clock runs then, as it was).
	testwait.For(t, "the game's engine leased for its new game", 20*time.Second, func() bool { return e.pool.Status()[0].Idle == 0 })

	// The other client's analysis takes the process the game holds idle.
	other.send(map[string]any{"type": "analyze", "id": "a1", "engine": "fairy", "position": map[string]any{"moves": []string{"2g2f"}}})
	other.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "a1" && ev["type"] == "info" })

	moved := time.Now()
	player.send(map[string]any{"type": "play_move", "id": "m1", "game": game, "move": "7g7f"})
	// The engine's search waits for the process: the page is told that no
	// clock runs (the engine's stands), or, as it was, the game is lost on
	// time.
	st = playOf(last(player.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return p != nil && len(p["moves"].([]any)) == 1 && (p["status"] != "playing" || p["clock"].(map[string]any)["running"] == nil)
	})))
	if st["status"] != "playing" {
		t.Fatalf("the engine waited %v for the process and the game ended: %v (times_ms %v)", time.Since(moved).Round(time.Millisecond), st["result"], st["times_ms"])
	}
	if w := st["clock"].(map[string]any)["w"].(map[string]any); num(w["byoyomi_ms"]) != byoyomi {
		t.Errorf("the waiting engine's clock: %v, want its whole byoyomi", w)
	}
	// The analysis holds the process for twice the engine's allowance:
	// the scenario's length, not a wait for something to happen.
	<-time.After(2*(byoyomi+300)*time.Millisecond - time.Since(moved))
	waited := time.Since(moved)
	for _, ev := range drain(player) {
		if p := playOf(ev); p != nil && p["status"] != "playing" {
			t.Fatalf("the engine waited %v for the process and the game ended: %v (times_ms %v)", waited.Round(time.Millisecond), p["result"], p["times_ms"])
		}
	}
	other.send(map[string]any{"type": "stop", "id": "a1"})
	other.terminal("a1", 10*time.Second)

	st = playOf(last(player.until(20*time.Second, func(ev map[string]any) bool {
		p := playOf(ev)
		return p != nil && (p["status"] != "playing" || len(p["moves"].([]any)) == 2)
	})))
	total := time.Since(moved)
	if st["status"] != "playing" {
		sent := e.sentTo("fairy")
		t.Fatalf("after the analysis stopped (%v after the move): %v %v; last lines sent: %q", total, st["result"], st["times_ms"], sent[max(len(sent)-8, 0):])
	}
	times := st["times_ms"].([]any)
	used := num(times[1])
	t.Logf("the engine waited %v, moved %v after the human, its clock charged %d ms", waited.Round(time.Millisecond), total.Round(time.Millisecond), used)
	if used > byoyomi+300 || time.Duration(used)*time.Millisecond > total-waited {
		t.Errorf("the engine's move was charged %d ms: more than its byoyomi, or than the %v it could have searched", used, total-waited)
	}
	if clock := st["clock"].(map[string]any); clock["running"] != "b" {
		t.Errorf("after the engine's move: clock %v", clock)
	}
	player.send(map[string]any{"type": "play_resign", "id": "x", "game": game})
	player.until(10*time.Second, func(ev map[string]any) bool { p := playOf(ev); return p != nil && p["status"] == "ended" })
	e.waitIdle(t)
}

// drain returns the events cl has received so far, without waiting.
func drain(cl *wsClient) []map[string]any {
	var got []map[string]any
	for {
		select {
		case ev := <-cl.events:
			got = append(got, ev)
		default:
			return got
		}
	}
}

// TestGamesPerNetwork (issues 35, 43): the addresses of one network (an
// IPv4 /24, an IPv6 /64) together hold at most play's MaxPerNetwork games
// (8 by default), a /56 twice that, so that one subscriber's many
// addresses cannot take every slot of the server (64); a client of
// another network still starts one.
func TestGamesPerNetwork(t *testing.T) {
	hs := proxied(t, shared)
	const perNetwork = 8 // play.Config's default, which the shared env keeps
	long := map[string]any{"side": "b", "clock": map[string]any{"b": map[string]any{"main_ms": 21600000, "byoyomi_ms": 21600000}, "w": map[string]any{"byoyomi_ms": 1000}}}
	type started struct {
		cl   *wsClient
		game string
	}
	var games []started
	defer func() {
		for _, s := range games {
			s.cl.send(map[string]any{"type": "play_resign", "id": "x", "game": s.game})
			s.cl.until(10*time.Second, func(ev map[string]any) bool { p := playOf(ev); return p != nil && p["status"] == "ended" })
		}
		shared.waitIdle(t)
	}()
	start := func(addr string) (*wsClient, map[string]any) {
		cl := dialFrom(t, hs, addr)
		cl.send(map[string]any{"type": "play_start", "id": "p", "engine": "fairy", "play": long})
		ev := last(cl.until(20*time.Second, func(ev map[string]any) bool { return ev["id"] == "p" }))
		if p := playOf(ev); p != nil {
			games = append(games, started{cl, p["game"].(string)})
		}
		return cl, ev
	}
	// Two games from each client (one client's bound), client after
	// client, until the network's bound refuses: the addresses of
	// 203.0.113.0/24 hold 8; the /64s of 2001:db8:0:100::/56 (issue 43:
	// one subscriber's) 16, twice a /64's bound, where they held every
	// game slot (64) before.
	for _, nw := range []struct {
		name, addr string
		want       int
	}{{"203.0.113.0/24", "203.0.113.%d", perNetwork}, {"2001:db8:0:100::/56", "2001:db8:0:1%02x::1", 2 * perNetwork}} {
		n, refused := 0, map[string]any(nil)
		for i := 1; i <= 40 && refused == nil; i++ {
			for range 2 {
				if _, ev := start(fmt.Sprintf(nw.addr, i)); ev["type"] == "error" {
					refused = ev
					break
				}
				n++
			}
		}
		t.Logf("the clients of %s started %d games, then: %v", nw.name, n, refused)
		if n != nw.want || refused == nil || refused["code"] != "too_many_requests" {
			t.Fatalf("%s started %d games (then %v), want %d and too_many_requests", nw.name, n, refused, nw.want)
		}
	}
	if _, ev := start("198.51.100.20"); playOf(ev) == nil {
		t.Errorf("a client of another network: %v", ev)
	}
}

// TestNetworksOf: the networks an anonymous client's places are bounded
// with, narrowest first (issue 43: an IPv6 /56 and /48 as well as the /64).
func TestNetworksOf(t *testing.T) {
	for id, want := range map[string]string{
		"ip:203.0.113.5":       "net:203.0.113.0/24",
		"ip:203.0.113.250":     "net:203.0.113.0/24",
		"ip:2001:db8:1:2::/64": "net:2001:db8:1:2::/64 net:2001:db8:1::/56 net:2001:db8:1::/48",
		"ip:2001:db8::1":       "net:2001:db8::/64 net:2001:db8::/56 net:2001:db8::/48",
		"ip:not-an-address":    "",
		"key:alice":            "",
	} {
		if got := strings.Join(networksOf(id), " "); got != want {
			t.Errorf("networksOf(%q) = %q, want %q", id, got, want)
		}
	}
}
