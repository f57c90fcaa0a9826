package app

import (
	"strings"
	"testing"

	"github.com/usid/usid"
)

// TestUnknownKeys: a key the configuration does not have is refused with
// its line, its path, the keys valid at that place and the key probably
// meant, at every depth, never with a Go type dump. Every unknown key of a
// file is reported, not only the first.
func TestUnknownKeys(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string // each a whole line of the error
	}{
		{"top", "lisen: \":80\"\n", []string{
			`config: line 1: unknown key lisen (did you mean "listen"?); valid keys at the top level: access, broadcast, cache, engines, games, listen, matches, play, profile_dir, server, session`}},
		{"engine entry", "engines:\n  - name: a\n    path: /bin/true\n    instance: 2\n", []string{
			`config: line 4: unknown key engines[0].instance (did you mean "instances"?); valid keys at engines[0]: args, capabilities, client_options, cooldown, dir, disabled, env, failure_window, health_interval, instances, max_age, max_failures, max_leases, name, options, path, protocol, queue, timeouts`}},
		{"engine timeouts", "engines:\n  - {name: a, path: /bin/true}\n  - name: b\n    path: /bin/true\n    timeouts:\n      start: 5s\n      stopp: 1s\n", []string{
			`config: line 7: unknown key engines[1].timeouts.stopp (did you mean "stop"?); valid keys at engines[1].timeouts: quit, ready, start, stop`}},
		{"client option rule", "engines:\n  - name: a\n    path: /bin/true\n    client_options:\n      Skill Level: {mn: 0, max: 20}\n", []string{
			`config: line 5: unknown key engines[0].client_options["Skill Level"].mn (did you mean "min"?); valid keys at engines[0].client_options["Skill Level"]: allow_text, max, min, values`}},
		{"session caps", "session:\n  caps:\n    max_node: 100\n", []string{
			`config: line 3: unknown key session.caps.max_node (did you mean "max_nodes"?); valid keys at session.caps: max_analysis, max_depth, max_mate_time, max_moves, max_movetime, max_multipv, max_nodes`}},
		{"keyed quota, no close key", "access:\n  keyed: {rate: 3, weekly: 9}\n", []string{
			`config: line 2: unknown key access.keyed.weekly; valid keys at access.keyed: burst, engine_time, leases, messages, rate, reads, sessions`}},
		{"several at once", "server:\n  hostz: [x]\n  max_bodyy: 10\ncache:\n  redis_tll: 1h\n", []string{
			`config: line 2: unknown key server.hostz (did you mean "hosts"?); valid keys at server: hosts, max_body, max_message, origins, shutdown_grace`,
			`line 3: unknown key server.max_bodyy (did you mean "max_body"?); valid keys at server: hosts, max_body, max_message, origins, shutdown_grace`,
			`line 5: unknown key cache.redis_tll (did you mean "redis_ttl"?); valid keys at cache: enabled, file, max_entries, max_mb, redis, redis_prefix, redis_ttl, redis_url_file, timeout`}},
		{"merge key", "base: &b {idle_release: 1s, idel: 2s}\nsession:\n  <<: *b\n", []string{
			`config: line 1: unknown key base; valid keys at the top level: access, broadcast, cache, engines, games, listen, matches, play, profile_dir, server, session`,
			`line 1: unknown key session.idel; valid keys at session: acquire_timeout, caps, idle_release, max_lease, queue_timeout`}},
		{"a scalar for a section", "session:\n  caps: 5\n", []string{
			`config: line 2: session.caps: want a mapping of keys (max_analysis, max_depth, max_mate_time, max_moves, max_movetime, max_multipv, max_nodes), not a scalar`}},
		{"a mapping for a list", "engines:\n  - {name: a, path: /bin/true, env: {A: b}}\n", []string{
			`config: line 2: engines[0].env: want a list, not a mapping`}},
		{"a list for the file", "- listen\n", []string{
			`config: line 1: the top level: want a mapping of keys (access, broadcast, cache, engines, games, listen, matches, play, profile_dir, server, session), not a list`}},
	} {
		_, err := ParseConfig(usid.DefaultConfig, []byte(tt.yaml))
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
		}
		for _, dump := range []string{"not found in type", "app.Config", "struct {", "yaml:\\\""} {
			if strings.Contains(err.Error(), dump) {
				t.Errorf("%s: a Go type dump: %v", tt.name, err)
			}
		}
	}
	// The built-in layer's errors say so; free keys (options, client_options
	// names) are free.
	if _, err := ParseConfig([]byte("lisen: x\n"), nil); err == nil || !strings.HasPrefix(err.Error(), "built-in config: line 1: unknown key lisen") {
		t.Errorf("a bad built-in layer: %v", err)
	}
	if _, err := ParseConfig(usid.DefaultConfig, []byte("engines:\n  - name: a\n    path: /bin/true\n    options: {Any Name: \"1\", USI_Hash: \"16\"}\n    client_options: {Whatever: {min: 1}}\n    env: [A=b]\n")); err != nil {
		t.Errorf("free keys refused: %v", err)
	}
}

// TestEditDistance: the "did you mean" rule.
func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"stop", "stop", 0}, {"stopp", "stop", 1}, {"rat", "rate", 1}, {"hostz", "hosts", 1}, {"max_node", "max_nodes", 1}, {"abc", "", 3}, {"kitten", "sitting", 3}} {
		if d := editDistance(tt.a, tt.b); d != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
	for _, tt := range []struct{ s, want string }{
		{"x", ""}, // a one-letter key is no typo of a two-letter one
		{"Stop", "stop"}, {"stopp", "stop"}, {"qit", "quit"},
		{"base", ""}, // as near to cache as to games
	} {
		if got := closest(tt.s, []string{"cache", "checkmate", "games", "go", "quit", "start", "stop"}); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// FuzzParseConfig: any bytes, alone or laid over the built-in file, give a
// configuration or an error, never a panic or a hang.
func FuzzParseConfig(f *testing.F) {
	f.Add(usid.DefaultConfig)
	for _, s := range []string{
		"", "lisen: x\n", "access:\n  keyed: {rat: 3}\n", "engines:\n  - {name: a, path: /bin/true, timeouts: {stopp: 1s}}\n",
		"a: &a [*a]\n", "x: &x {listen: y}\n<<: *x\n", "session: {<<: [{caps: {max_nodes: 1}}, {idle_release: 1s}]}\n",
		"? [a]\n: 1\n", "--- \n...\n", "engines: [{client_options: {\"\": {mn: 1}}}]\n", "%TAG ! tag:x,2000:\n--- !foo\nx: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if (c == nil) == (err == nil) {
			t.Fatalf("config %v and error %v", c, err)
		}
		c, err = ParseConfig(usid.DefaultConfig, b)
		if (c == nil) == (err == nil) {
			t.Fatalf("config %v and error %v", c, err)
		}
	})
}
