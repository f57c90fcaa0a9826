package server

import (
	"context"
	"encoding/json"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLimits: GET /v1/limits shows the service's caps (in the units of the
// request fields they bound) and the quota of the client as this request
// identifies it, keyed or anonymous; it costs no quota. Every answer is
// checked against openapi.yaml by checkedClient.
func TestLimits(t *testing.T) {
	cfg := shared.srv.cfg
	svc := *cfg.Service
	svc.Caps.MaxMateTime, svc.Caps.MaxMultiPV, svc.Caps.MaxDepth = 30*time.Second, 3, 20
	cfg.Service, cfg.Registerer = &svc, nil
	cfg.Access = &Access{Anonymous: true, Keys: map[string]string{"alice": "alice-secret-0123"},
		Keyed:          Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 7, Burst: 9, Sessions: 2, Leases: 3, Messages: 11, Reads: 13},
		AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: 30}, Rate: 0.001, Burst: 1}}
	srv := New(cfg)
	hs := newTestHTTP(t, srv)

	get := func(key string, hdr map[string]string) (int, limitsJSON) {
		t.Helper()
		req, _ := http.NewRequest("GET", hs.URL+"/v1/limits", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l limitsJSON
		if resp.StatusCode == 200 {
			if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, l
	}

	wantCaps := capsJSON{MaxMoveTimeMS: svc.Caps.MaxMoveTime.Milliseconds(), MaxAnalysisMS: svc.Caps.MaxAnalysis.Milliseconds(),
		MaxMateTimeMS: 30000, MaxClockMS: svc.Caps.MaxClock.Milliseconds(), MaxDepth: 20, MaxNodes: svc.Caps.MaxNodes, MaxMultiPV: 3, MaxMoves: svc.Caps.MaxMoves}
	if wantCaps.MaxMoveTimeMS <= 0 || wantCaps.MaxNodes <= 0 {
		t.Fatalf("the shared service's caps are not filled in: %+v", svc.Caps)
	}
	// Anonymous: the anonymous quota, with the defaults of what it leaves out.
	status, l := get("", nil)
	if status != 200 || l.Caps != wantCaps {
		t.Errorf("anonymous: %d caps %+v, want %+v", status, l.Caps, wantCaps)
	}
	// The game analysis' defaults, as a request without limits gets them.
	if g := l.GameAnalysis; cfg.Review == nil || g == nil || g.DefaultLimits.MoveTimeMS != cfg.Review.DefaultMoveTime().Milliseconds() ||
		g.DefaultLimits.MoveTimeMS <= 0 || g.Thresholds != review.DefaultThresholds() {
		t.Errorf("game_analysis %+v, want the default time per position and thresholds", g)
	}
	// The budget: 30 engine-seconds set, the period and burst defaulted
	// (a minute; the default burst scaled to the seconds set).
	if b := l.Quota.Budget; b == nil || *b != (budgetJSON{EngineSeconds: 30, PeriodS: 60, Burst: 60, InteractiveShare: 0.25, InteractiveReserve: 15}) {
		t.Errorf("anonymous budget %+v, want 30 engine-seconds a minute, 60 at most, 15 of them (a quarter) kept for interactive searches", b)
	}
	l.Quota.Budget = nil
	if want := (quotaJSON{Client: "anonymous", Rate: 0.001, Burst: 1, Sessions: 4, Leases: 4, Messages: 50, Reads: 50}); l.Quota != want {
		t.Errorf("anonymous quota %+v, want %+v", l.Quota, want)
	}
	// A key holder: the keyed quota and the key's name; no budget (-1).
	status, l = get("alice-secret-0123", nil)
	if want := (quotaJSON{Client: "key", Key: "alice", Rate: 7, Burst: 9, Sessions: 2, Leases: 3, Messages: 11, Reads: 13}); status != 200 || l.Quota != want || l.Caps != wantCaps {
		t.Errorf("keyed: %d %+v, want %+v", status, l, want)
	}
	// Every rate of the quota is listed: reads (the GET routes' flood
	// guard) was not (issue 37), though messages and rate were.
	req, _ := http.NewRequest("GET", hs.URL+"/v1/limits", nil)
	req.Header.Set("Authorization", "Bearer alice-secret-0123")
	if resp, err := checkedClient(t).Do(req); err != nil {
		t.Error(err)
	} else {
		var raw struct {
			Quota map[string]any `json:"quota"`
		}
		json.NewDecoder(resp.Body).Decode(&raw)
		resp.Body.Close()
		if raw.Quota["reads"] != 13.0 {
			t.Errorf("keyed quota %v: want reads 13", raw.Quota)
		}
	}
	// The identification and origin rules of every /v1 route.
	if status, _ := get("wrong-key", nil); status != 401 {
		t.Errorf("a wrong key: %d, want 401", status)
	}
	if status, _ := get("", map[string]string{"Origin": "https://evil.example"}); status != 403 {
		t.Errorf("a foreign page: %d, want 403", status)
	}
	// Asking costs nothing: after many asks the anonymous client (burst 1)
	// still has its one search (refused for having no limit, not 429).
	for range 30 {
		get("", nil)
	}
	resp, body := do(t, "POST", hs.URL+"/v1/analyze", "", `{"position":{"sfen":"startpos"}}`)
	if resp.StatusCode != 422 {
		t.Errorf("a search after 30 asks for limits: %d %s, want 422 (no limit), not 429", resp.StatusCode, body)
	}
	if resp, _ := do(t, "POST", hs.URL+"/v1/analyze", "", `{"position":{"sfen":"startpos"}}`); resp.StatusCode != 429 {
		t.Errorf("the second search with burst 1: %d, want 429", resp.StatusCode)
	}
}

// TestLimitsHosts: with server.hosts set, another Host is 421 here too.
func TestLimitsHosts(t *testing.T) {
	cfg := shared.srv.cfg
	cfg.Hosts, cfg.Registerer = []string{"usid.example"}, nil
	hs := newTestHTTP(t, New(cfg))
	req, _ := http.NewRequest("GET", hs.URL+"/v1/limits", nil)
	req.Host = "evil.example"
	resp, err := checkedClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 421 {
		t.Errorf("another Host: %d, want 421", resp.StatusCode)
	}
}

// newTestHTTP serves srv on loopback until the test ends, then drains it.
func newTestHTTP(t *testing.T, srv *Server) *httptest.Server {
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Drain(ctx)
		hs.Close()
	})
	return hs
}
