package server

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
)

// TestHandshakeRefusalsAreProblems: every way GET /v1/ws can be refused
// before the upgrade answers problem JSON with a stable code (docs/api.md,
// "Errors", promises it for every error), and each exchange agrees with openapi.yaml.
func TestHandshakeRefusalsAreProblems(t *testing.T) {
	hs := ownServer(t, func(c *Config) { c.OriginPatterns = []string{"board.example.com"} })
	upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	with := func(over map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range upgrade {
			h[k] = v
		}
		for k, v := range over {
			h[k] = v
		}
		return h
	}
	for _, tt := range []struct {
		name   string
		method string
		header map[string]string
		status int
		code   string
	}{
		{"plain GET", "GET", nil, 426, "upgrade_required"},
		{"keep-alive, no upgrade", "GET", map[string]string{"Connection": "keep-alive"}, 426, "upgrade_required"},
		{"upgrade to another protocol", "GET", with(map[string]string{"Upgrade": "h2c"}), 426, "upgrade_required"},
		{"old version", "GET", with(map[string]string{"Sec-WebSocket-Version": "8"}), 400, "bad_request"},
		{"bad key", "GET", with(map[string]string{"Sec-WebSocket-Key": "short"}), 400, "bad_request"},
		{"foreign Origin", "GET", with(map[string]string{"Origin": "https://evil.example"}), 403, "origin_not_allowed"},
		{"Origin that is no URL", "GET", with(map[string]string{"Origin": "://"}), 403, "origin_not_allowed"},
		{"POST", "POST", with(nil), 405, "method_not_allowed"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, hs.URL+"/v1/ws", nil)
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		resp, err := checkedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), `"code":"`+tt.code+`"`) {
			t.Errorf("%s: %d %s %s, want %d problem+json with code %s", tt.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status, tt.code)
		}
		if tt.status == 426 && (resp.Header.Get("Upgrade") != "websocket" || resp.Header.Get("Retry-After") != "") {
			t.Errorf("%s: headers %v, want Upgrade: websocket and no Retry-After", tt.name, resp.Header)
		}
	}
	// And what passes the checks is upgraded (Accept agrees with them).
	for _, origin := range []string{"", "http://" + strings.TrimPrefix(hs.URL, "http://"), "https://board.example.com", "HTTPS://BOARD.EXAMPLE.COM"} {
		hdr := http.Header{}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		c, resp, err := wsDial(t, hs.URL, "", hdr)
		if err != nil {
			t.Errorf("Origin %q: %v (status %v)", origin, err, resp)
			continue
		}
		c.CloseNow()
	}
}

// TestMethodNotAllowed: a method a path does not take is 405 problem JSON
// with the Allow header RFC 9110 asks for.
func TestMethodNotAllowed(t *testing.T) {
	for _, tt := range []struct{ method, path, allow string }{
		{"GET", "/v1/analyze", "POST"}, {"DELETE", "/v1/engines", "GET"}, {"POST", "/healthz", "GET, HEAD"}, {"PUT", "/v1/ws", "GET"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, shared.http.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tt.allow || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(string(body), `"code":"method_not_allowed"`) {
			t.Errorf("%s %s: %d Allow %q %s, want 405 problem+json with Allow %q", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Allow"), body, tt.allow)
		}
	}
}

// TestRetryAfterAgreesWithDetail: when an engine keeps failing, the detail
// text and the Retry-After header announce the same number of seconds.
func TestRetryAfterAgreesWithDetail(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "broken", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.ExitNow},
		MaxFailures: 2, Cooldown: 59 * time.Second})
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, hdr, p := call(t, e, "POST", "/v1/analyze", map[string]any{"limits": map[string]any{"depth": 1}})
		if code == 503 && p["code"] == "engine_unavailable" {
			m := regexp.MustCompile(`retry in (\d+)s`).FindStringSubmatch(p["detail"].(string))
			if m == nil || hdr.Get("Retry-After") != m[1] {
				t.Fatalf("detail %q with Retry-After %q: they must agree", p["detail"], hdr.Get("Retry-After"))
			}
			// An engine that never starts is retried with a growing
			// backoff (from 5s), one that keeps crashing after a cooldown
			// (59s here): either way a wait of 1..59 whole seconds.
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > 59 {
				t.Errorf("Retry-After %s, want the pool's wait, 1..59 s", m[1])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no engine_unavailable: last answer %d %v", code, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRetryAfterOnlyWhereSpecified: Retry-After comes with 429 and 503 and
// with no other status.
func TestRetryAfterOnlyWhereSpecified(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/analyze", "{"},
		{"POST", "/v1/analyze", map[string]any{"engine": "nope", "limits": map[string]any{"depth": 1}}},
		{"POST", "/v1/validate", map[string]any{"position": map[string]any{"sfen": "9/9/9/9/9/9/9/9/9 b - 1"}, "notation": "csa"}},
		{"DELETE", "/v1/engines", nil},
		{"GET", "/nowhere", nil},
	} {
		code, hdr, _ := call(t, shared, tt.method, tt.path, tt.body)
		if code < 400 || code == 429 || code == 503 {
			t.Fatalf("%s %s: status %d, want a client error other than 429", tt.method, tt.path, code)
		}
		if hdr.Get("Retry-After") != "" {
			t.Errorf("%s %s → %d with Retry-After %q", tt.method, tt.path, code, hdr.Get("Retry-After"))
		}
	}
}

// TestEngineDeathIsBadGateway: an engine that dies during a REST search is
// 502 engine_error, as openapi.yaml describes (call checks the answer
// against it).
func TestEngineDeathIsBadGateway(t *testing.T) {
	e, _ := fakeServer(t, pool.EngineConfig{Name: "mortal", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.DieAfter + "=1500ms"},
		Capabilities: pool.Capabilities{Go: []string{"btime", "wtime", "byoyomi", "infinite"}}})
	code, hdr, p := call(t, e, "POST", "/v1/analyze", map[string]any{"limits": map[string]any{"movetime_ms": 10000}})
	if code != 502 || p["code"] != "engine_error" || hdr.Get("Retry-After") != "" {
		t.Errorf("engine died mid-search: %d %v (Retry-After %q), want 502 engine_error", code, p, hdr.Get("Retry-After"))
	}
}
