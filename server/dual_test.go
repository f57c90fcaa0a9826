package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/quota"
)

// meteredStore is a quota.Store that adds up, per client, the engine time
// its searches were charged in the end: what Take and TakeUpTo debited
// when a search started plus what Charge settled when it ended.
type meteredStore struct {
	quota.Store
	mu    sync.Mutex
	spent map[string]time.Duration
	takes map[string]int // searches that reserved time as they started
}

func (m *meteredStore) add(client string, d time.Duration, take bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spent[client] += d
	if take {
		m.takes[client]++
	}
}

func (m *meteredStore) Take(ctx context.Context, client string, b quota.Budget, d time.Duration) time.Duration {
	wait := m.Store.Take(ctx, client, b, d)
	if wait == 0 {
		m.add(client, d, true)
	}
	return wait
}

func (m *meteredStore) TakeUpTo(ctx context.Context, client string, b quota.Budget, d time.Duration, bg bool) (time.Duration, time.Duration) {
	granted, wait := m.Store.TakeUpTo(ctx, client, b, d, bg)
	if wait == 0 {
		m.add(client, granted, true)
	}
	return granted, wait
}

func (m *meteredStore) Charge(ctx context.Context, client string, b quota.Budget, held time.Duration) {
	m.Store.Charge(ctx, client, b, held)
	m.add(client, held, false)
}

func (m *meteredStore) of(client string) (time.Duration, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent[client], m.takes[client]
}

// TestTwoEnginesSideBySide: the board's second engine (issue 44) is a
// second WebSocket session of the same client. Both searches run at once,
// each on its own engine, and each is charged to the client's one budget:
// the budget is spent by both searches' time together. A client whose
// quota holds one session is refused the second with 429
// too_many_requests, and one whose leases are held by a REST search in
// flight and a session likewise.
func TestTwoEnginesSideBySide(t *testing.T) {
	shared.waitIdle(t)
	store := &meteredStore{Store: quota.NewMemory(quota.MemoryConfig{}), spent: map[string]time.Duration{}, takes: map[string]int{}}
	keys := map[string]string{"two": "key-two-0123456789", "one": "key-one-0123456789"}
	_, hs := withAccess(t, &Access{Keys: keys, Budgets: store,
		Keyed: Quota{EngineTime: quota.Budget{Seconds: 600, Period: time.Hour, Burst: 600}, Rate: 1000, Burst: 1000, Sessions: 2, Leases: 2, Messages: 1e6}})
	auth := func(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

	const movetime = 700 * time.Millisecond
	conns := make([]*websocket.Conn, 2)
	for i := range conns {
		c, resp, err := wsDial(t, hs.URL, "", auth(keys["two"]))
		if err != nil {
			t.Fatalf("session %d: %v (%v)", i+1, err, resp)
		}
		conns[i] = c
	}
	// A third session is beyond the quota: the second engine of a page
	// whose client already holds two is refused, with a code the page reads.
	if _, resp, err := wsDial(t, hs.URL, "", auth(keys["two"])); err == nil || resp == nil || resp.StatusCode != 429 {
		t.Fatalf("a third session of a client with 2: %v %v; want 429", err, resp)
	}
	// Each session analyses with its own engine (fairy, gps), at once, out
	// of gpsusi's book (from the start it answers at once, unsearched).
	engines := []string{"fairy", "gps"}
	outOfBook := `"position":{"moves":["1g1f","1c1d","9g9f","9c9d","5i5h","5a5b"]}`
	for i, c := range conns {
		msg := `{"type":"analyze","id":"d` + engines[i] + `","engine":"` + engines[i] + `",` + outOfBook + `,"limits":{"movetime_ms":` +
			jsonInt(movetime.Milliseconds()) + `}}`
		if err := c.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// Both searches have their engine before either ends: side by side.
	type seen struct {
		engineAt, doneAt time.Time
		ev               map[string]any
	}
	got := make([]seen, 2)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			for {
				_, b, err := c.Read(ctx)
				if err != nil {
					t.Errorf("%s: %v", engines[i], err)
					return
				}
				var ev map[string]any
				json.Unmarshal(b, &ev)
				switch ev["type"] {
				case "engine":
					got[i].engineAt = time.Now()
				case "bestmove", "error", "checkmate":
					got[i].doneAt, got[i].ev = time.Now(), ev
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g.ev["type"] != "bestmove" || g.ev["id"] != "d"+engines[i] {
			t.Fatalf("%s: ended with %v; want its bestmove", engines[i], g.ev)
		}
	}
	if !got[0].engineAt.Before(got[1].doneAt) || !got[1].engineAt.Before(got[0].doneAt) {
		t.Errorf("the searches did not overlap: fairy %v–%v, gps %v–%v", got[0].engineAt, got[0].doneAt, got[1].engineAt, got[1].doneAt)
	}
	// Both are charged to the one client: two searches reserved time, and
	// what they were charged in the end is both searches' time (each at
	// least its movetime, gps's emulated by usid's timer).
	spent, takes := store.of("key:two")
	if takes != 2 {
		t.Errorf("searches that took from the budget: %d; want 2", takes)
	}
	if spent < 2*movetime || spent > 2*movetime+4*time.Second {
		t.Errorf("engine time charged for both searches: %v; want about %v (two searches of %v)", spent, 2*movetime, movetime)
	}

	// A client whose quota holds one session: its second is refused.
	_, hs1 := withAccess(t, &Access{Keys: keys, Budgets: store,
		Keyed: Quota{EngineTime: quota.Budget{Seconds: 600, Period: time.Hour, Burst: 600}, Rate: 1000, Burst: 1000, Sessions: 1, Leases: 1, Messages: 1e6}})
	if _, _, err := wsDial(t, hs1.URL, "", auth(keys["one"])); err != nil {
		t.Fatal(err)
	}
	_, resp, err := wsDial(t, hs1.URL, "", auth(keys["one"]))
	if err == nil || resp == nil || resp.StatusCode != 429 {
		t.Fatalf("a second engine's session for a client with one: %v %v; want 429", err, resp)
	}
	var p struct{ Code string }
	if derr := json.NewDecoder(resp.Body).Decode(&p); derr != nil || p.Code != "too_many_requests" {
		t.Errorf("the refusal: %v %+v; want code too_many_requests", derr, p)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
