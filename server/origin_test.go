package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestCrossSite: DNS rebinding (Host and Origin both the attacker's) no
// longer opens a WebSocket; REST takes JSON only and refuses pages of other
// origins; with server.hosts set, other Hosts are refused; programs without
// Origin may use any Host (a load balancer's).
func TestCrossSite(t *testing.T) {
	hs := ownServer(t, func(c *Config) { c.OriginPatterns = []string{"board.example.com"} })

	req, _ := http.NewRequest("GET", hs.URL+"/v1/ws", nil)
	req.Host = "evil.example"
	for k, v := range map[string]string{"Origin": "http://evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("DNS rebinding (Host = Origin = evil.example): %d, want 403", resp.StatusCode)
	}

	post := func(host, origin, ctype string) int {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/validate", strings.NewReader(`{}`))
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%d is not problem+json", resp.StatusCode)
		}
		return resp.StatusCode
	}
	for _, tt := range []struct {
		host, origin, ctype string
		want                int
	}{
		{"", "", "application/json", 200},
		{"", "", "application/json; charset=utf-8", 200},
		{"usid.internal.lb:8080", "", "application/json", 200}, // any Host without a browser Origin
		{"", "", "text/plain", 415},
		{"", "", "application/x-www-form-urlencoded", 415},
		{"", "", "", 415},
		{"", "https://board.example.com", "application/json", 200},
		{"", "https://evil.example", "text/plain", 403},
		{"evil.example", "http://evil.example", "application/json", 403},
		{"", "null", "application/json", 403},
	} {
		if got := post(tt.host, tt.origin, tt.ctype); got != tt.want {
			t.Errorf("Host %q Origin %q Content-Type %q: %d, want %d", tt.host, tt.origin, tt.ctype, got, tt.want)
		}
	}

	hs2 := ownServer(t, func(c *Config) {
		c.OriginPatterns, c.Hosts = []string{"board.example.com"}, []string{"usid.example.com"}
	})
	for host, want := range map[string]int{"usid.example.com": 200, "usid.example.com:443": 200, "evil.example": 421, "127.0.0.1:8080": 200} {
		req, _ := http.NewRequest("GET", hs2.URL+"/v1/engines", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("server.hosts set, Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
