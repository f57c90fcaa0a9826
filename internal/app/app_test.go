package app

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid"
)

// TestDefaultConfig: the shipped usid.yaml parses strictly and names an
// engine for each game: the shogi and chess engines Debian installs, and
// usid's own othello engine, this binary ("@self", resolved at load).
func TestDefaultConfig(t *testing.T) {
	c, err := ParseConfig(usid.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	self, err := executable()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range c.Engines {
		names = append(names, e.Name+"="+e.Path+" "+strings.Join(e.Args, " ")+" "+e.Protocol)
	}
	want := "fairy=/usr/games/fairy-stockfish  |gps=/usr/games/gpsusi  |stockfish=/usr/games/stockfish  uci|othello=" + self + " othello-engine usix"
	if got := strings.Join(names, "|"); got != want {
		t.Errorf("engines\n%s\nwant\n%s", got, want)
	}
	if _, err := ParseConfig([]byte("engines: []\nlisen: x\n")); err == nil {
		t.Error("a misspelt key was accepted")
	}
}

func TestAccessConfig(t *testing.T) {
	dir := t.TempDir()
	keys := dir + "/keys"
	os.WriteFile(keys, []byte("# team keys\nalice: 0123456789abcdef0123\n\nbob:fedcba9876543210fedc\n"), 0o600)
	c, err := ParseConfig([]byte("access:\n  keys_file: " + keys + "\n  anonymous: false\n  trusted_proxies: [10.0.0.0/8]\n  keyed: {rate: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.ServerAccess(func(k string) string {
		if k == "USID_API_KEYS" {
			return "carol:carolcarolcarolcarol"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Keys) != 3 || a.Keys["bob"] != "fedcba9876543210fedc" || a.Anonymous || len(a.TrustedProxies) != 1 || a.Keyed.Rate != 3 {
		t.Errorf("access: %+v", a)
	}
	for _, bad := range []string{"access:\n  trusted_proxies: [nonsense]\n", "access:\n  keys_file: /nonexistent\n"} {
		c, err := ParseConfig([]byte(bad))
		if err == nil {
			_, err = c.ServerAccess(func(string) string { return "" })
		}
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c, _ = ParseConfig([]byte("engines: []\n"))
	if _, err := c.ServerAccess(func(string) string { return "short:key" }); err == nil {
		t.Error("a short key was accepted")
	}
}

// TestClosedServiceNeedsKeys: with anonymous false, an empty or missing keys
// file or an empty USID_API_KEYS refuses to start (before any engine starts)
// instead of serving everyone.
func TestClosedServiceNeedsKeys(t *testing.T) {
	dir := t.TempDir()
	empty, comments := dir+"/empty", dir+"/comments"
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(comments, []byte("# no keys yet\n\n"), 0o600)
	for _, tt := range []struct{ name, yaml, env string }{
		{"no keys at all", "access:\n  anonymous: false\n", ""},
		{"empty keys file", "access:\n  anonymous: false\n  keys_file: " + empty + "\n", ""},
		{"keys file of comments", "access:\n  anonymous: false\n  keys_file: " + comments + "\n", ""},
		{"missing keys file", "access:\n  anonymous: false\n  keys_file: " + dir + "/missing\n", ""},
		{"empty USID_API_KEYS", "access:\n  anonymous: false\n", " "},
	} {
		c, err := ParseConfig([]byte("engines: [{name: e, path: /nonexistent}]\n" + tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("USID_API_KEYS", tt.env)
		m := &Main{Config: c, Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
		err = m.Run()
		if err == nil {
			m.Close(t.Context())
			t.Errorf("%s: a closed service without keys started", tt.name)
			continue
		}
		if tt.name != "missing keys file" && !strings.Contains(err.Error(), "no API key") {
			t.Errorf("%s: %v, want a clear 'no API key' error", tt.name, err)
		}
	}
	// With a key it is accepted; anonymous services need none.
	c, _ := ParseConfig([]byte("access:\n  anonymous: false\n"))
	if _, err := c.ServerAccess(func(string) string { return "ops:0123456789abcdef" }); err != nil {
		t.Errorf("closed service with a key: %v", err)
	}
	c, _ = ParseConfig([]byte("engines: []\n"))
	if _, err := c.ServerAccess(func(string) string { return "" }); err != nil {
		t.Errorf("anonymous service without keys: %v", err)
	}
}

// TestShortTicketSecret: a ticket secret under 32 bytes refuses to start.
func TestShortTicketSecret(t *testing.T) {
	f := t.TempDir() + "/secret"
	os.WriteFile(f, []byte("x\n"), 0o600)
	c, _ := ParseConfig([]byte("access:\n  ticket_secret_file: " + f + "\n"))
	if _, err := c.ServerAccess(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a 1-byte ticket secret: %v", err)
	}
}

// TestConfigLayers: a --config file is laid over the built-in usid.yaml: a
// file holding only one section changes that section and keeps the rest.
func TestConfigLayers(t *testing.T) {
	base, err := ParseConfig(usid.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(usid.DefaultConfig, []byte("server:\n  hosts: [usid.example]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Engines) != len(base.Engines) || c.Engines[0].Path != base.Engines[0].Path {
		t.Errorf("a file with only server: changed the engines: %+v", c.Engines)
	}
	if len(c.Server.Hosts) != 1 || c.Server.Hosts[0] != "usid.example" || c.Server.ShutdownGrace != base.Server.ShutdownGrace {
		t.Errorf("server: hosts %v grace %v, want [usid.example] and the built-in %v", c.Server.Hosts, c.Server.ShutdownGrace, base.Server.ShutdownGrace)
	}
	if (c.Access.Anonymous == nil) != (base.Access.Anonymous == nil) || c.Access.AnonymousQuota != base.Access.AnonymousQuota {
		t.Errorf("access changed by a file without access:")
	}
	if _, err := ParseConfig(usid.DefaultConfig, nil); err != nil {
		t.Errorf("an empty file: %v", err)
	}
	if _, err := ParseConfig(usid.DefaultConfig, []byte("server:\n  hostz: [x]\n")); err == nil {
		t.Error("a misspelt key in the file was accepted")
	}
}

// TestRedisURLFile: a Redis URL may come from a file (a mounted Secret)
// when the configuration gives none; an empty or missing file is an error.
func TestRedisURLFile(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/url"
	os.WriteFile(f, []byte("redis://:secret@redis:6379/0\n"), 0o600)
	for _, tc := range []struct {
		url, file, want string
		fails           bool
	}{
		{"", "", "", false},
		{"redis://a:1/0", f, "redis://a:1/0", false}, // the configuration's own wins
		{"", f, "redis://:secret@redis:6379/0", false},
		{"", dir + "/missing", "", true},
	} {
		got, err := redisURL(tc.url, tc.file)
		if got != tc.want || (err != nil) != tc.fails {
			t.Errorf("redisURL(%q, %q) = %q, %v; want %q (error: %v)", tc.url, tc.file, got, err, tc.want, tc.fails)
		}
	}
	os.WriteFile(f, []byte("\n"), 0o600)
	if _, err := redisURL("", f); err == nil {
		t.Error("an empty file is accepted")
	}
}

// TestCacheFileDamaged: a damaged cache.file does not stop usid (before:
// "cache: invalid database" and no start): it is moved aside and replaced.
func TestCacheFileDamaged(t *testing.T) {
	f := t.TempDir() + "/eval.db"
	os.WriteFile(f, bytes.Repeat([]byte("not a bbolt file "), 4096), 0o600)
	c, err := openCache(&CacheConfig{File: f}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("a damaged cache file stops usid: %v", err)
	}
	c.Close()
	if _, err := os.Stat(f + ".broken"); err != nil {
		t.Errorf("the damaged file was not kept aside: %v", err)
	}
}

// TestConfigAddsEngines (issue 37): a file's engines add to the built-in
// ones. The documented chess entry (docs/engines.md) alone in a file replaced the whole list: every
// shogi analysis got 422 (engine stockfish plays chess), and a file that
// listed fairy again lost its client_options (the play panel's levels).
// Now an entry adds an engine, or sets only its own keys on the built-in
// engine of its name, and disabled: true removes one.
func TestConfigAddsEngines(t *testing.T) {
	names := func(c *Config) (out []string) {
		for _, e := range c.Engines {
			out = append(out, e.Name)
		}
		return out
	}
	base, err := ParseConfig(usid.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	fairy := base.Engines[0]
	if fairy.Name != "fairy" || fairy.ClientOptions["Skill Level"].Min == nil {
		t.Fatalf("the built-in fairy: %+v", fairy)
	}
	c, err := ParseConfig(usid.DefaultConfig, []byte("engines:\n  - name: sf16\n    path: /usr/local/bin/stockfish\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(c), " "); got != "fairy gps stockfish othello sf16" {
		t.Errorf("a file with sf16 only: engines %s, want fairy gps stockfish othello sf16", got)
	}
	if r := c.Engines[0].ClientOptions["Skill Level"]; r.Min == nil || *r.Min != -20 || len(c.Engines[0].ClientOptions) != len(fairy.ClientOptions) {
		t.Errorf("a file with sf16 only: fairy's client_options %+v, want the built-in %+v", c.Engines[0].ClientOptions, fairy.ClientOptions)
	}
	// fairy restated with some keys: those replace the built-in's (a map
	// as a whole, timeouts key by key), the rest stay.
	c, err = ParseConfig(usid.DefaultConfig, []byte("engines:\n  - {name: fairy, instances: 1, options: {USI_Hash: 16}, timeouts: {stop: 5s}}\n  - {name: gps, disabled: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(c), " "); got != "fairy stockfish othello" {
		t.Errorf("gps disabled: engines %s, want fairy stockfish othello", got)
	}
	f := c.Engines[0]
	if f.Path != fairy.Path || f.Instances != 1 || len(f.Options) != 1 || f.Options["USI_Hash"] != "16" || len(f.ClientOptions) != len(fairy.ClientOptions) ||
		f.Timeouts.Stop != 5*time.Second || f.Timeouts.Start != fairy.Timeouts.Start || f.Queue != fairy.Queue {
		t.Errorf("fairy laid over: %+v, from the built-in %+v", f, fairy)
	}
	c, err = ParseConfig(usid.DefaultConfig, []byte("engines:\n  - {name: fairy, client_options: {Contempt: {min: 0, max: 10}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if co := c.Engines[0].ClientOptions; len(co) != 1 || *co["Contempt"].Max != 10 {
		t.Errorf("fairy's client_options set in a file: %+v, want the file's alone", co)
	}
	if base.Engines[0].ClientOptions["Contempt"].Max == nil || *base.Engines[0].ClientOptions["Contempt"].Max != 100 {
		t.Errorf("laying a file changed an earlier config: %+v", base.Engines[0].ClientOptions)
	}
	if _, err := ParseConfig(usid.DefaultConfig, []byte("engines:\n  - {name: gsp, disabled: true}\n")); err == nil || !strings.Contains(err.Error(), `"gsp" is disabled`) {
		t.Errorf("disabling an engine nobody configured: %v", err)
	}
	// A lone layer (no built-in below) is a list of its own.
	c, err = ParseConfig([]byte("engines:\n  - {name: only, path: /bin/true}\n"))
	if err != nil || strings.Join(names(c), " ") != "only" {
		t.Errorf("a lone layer: %v %v", names(c), err)
	}
}
