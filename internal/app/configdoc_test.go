package app

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/usid/usid"
	"github.com/usid/usid/broadcast"
	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/match"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"github.com/usid/usid/server"
	"github.com/usid/usid/session"
)

// typeKeyPaths lists every key path the configuration type takes, as
// docs/configuration.md writes them: "session.caps.max_nodes", "engines[].timeouts.stop",
// "engines[].client_options.<name>.min" (a map's keys are free; its name
// is the path of the map itself).
func typeKeyPaths(t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		keys := structKeys(t)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			*out = append(*out, p)
			typeKeyPaths(keys[k], p, out)
		}
	case reflect.Slice, reflect.Array:
		typeKeyPaths(t.Elem(), path+"[]", out)
	case reflect.Map:
		typeKeyPaths(t.Elem(), path+".<name>", out)
	}
}

func configKeyPaths() []string {
	var paths []string
	typeKeyPaths(reflect.TypeFor[Config](), "", &paths)
	return paths
}

// yamlKeyPaths lists the key paths a YAML document sets, in the same form;
// a map's keys (say client_options') are told by the type.
func yamlKeyPaths(n *yaml.Node, t reflect.Type, path string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		yamlKeyPaths(n.Content[0], t, path, out)
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		keys := structKeys(t)
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i].Value
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[p] = true
			if ft, ok := keys[k]; ok {
				yamlKeyPaths(n.Content[i+1], ft, p, out)
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for _, e := range n.Content {
			yamlKeyPaths(e, t.Elem(), path+"[]", out)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			yamlKeyPaths(n.Content[i], t.Elem(), path+".<name>", out)
		}
	}
}

// TestBuiltinConfigListsEveryKey: every key the configuration takes is in
// the built-in usid.yaml (an engine key in at least one engine entry), so
// that the file an operator copies from shows them all.
func TestBuiltinConfigListsEveryKey(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(usid.DefaultConfig, &doc); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	yamlKeyPaths(&doc, reflect.TypeFor[Config](), "", set)
	paths := configKeyPaths()
	if len(paths) < 80 || !slices.Contains(paths, "engines[].timeouts.quit") || !slices.Contains(paths, "engines[].client_options.<name>.allow_text") {
		t.Fatalf("the walk of Config found only %d keys: %v", len(paths), paths)
	}
	for _, p := range paths {
		if !set[p] {
			t.Errorf("usid.yaml does not list %s", p)
		}
	}
}

// TestConfigDocDocumentsEveryKey: docs/configuration.md names every key
// path (as `session.caps.max_nodes`, `engines[].timeouts.stop`).
func TestConfigDocDocumentsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("# Configuration\n")) {
		t.Fatal("docs/configuration.md does not start with its # Configuration heading")
	}
	for _, p := range configKeyPaths() {
		if !bytes.Contains(b, []byte("`"+p+"`")) {
			t.Errorf("docs/configuration.md does not document `%s`", p)
		}
	}
}

// TestBuiltinConfigDefaults: the values usid.yaml writes are the defaults
// the code applies when a key is left out (pool.EngineConfig.WithDefaults,
// session.NewService, games, server, evalcache, this package), so the file
// cannot tell an operator a default that is not one.
func TestBuiltinConfigDefaults(t *testing.T) {
	got, err := ParseConfig(usid.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	engines := got.Engines
	got.Engines = nil

	var want Config
	want.Listen = DefaultListen
	svc := session.NewService(session.Config{})
	want.Session.IdleRelease, want.Session.QueueTimeout = svc.IdleRelease, svc.QueueTimeout
	want.Session.AcquireTimeout, want.Session.MaxLease = svc.AcquireTimeout, svc.MaxLease
	caps := &want.Session.Caps
	caps.MaxMoveTime, caps.MaxAnalysis, caps.MaxMateTime = svc.Caps.MaxMoveTime, svc.Caps.MaxAnalysis, svc.Caps.MaxMateTime
	caps.MaxDepth, caps.MaxNodes, caps.MaxMultiPV, caps.MaxMoves = svc.Caps.MaxDepth, svc.Caps.MaxNodes, svc.Caps.MaxMultiPV, svc.Caps.MaxMoves
	g := review.Config{}.WithDefaults()
	want.Games.MaxPerClient, want.Games.MaxJobs, want.Games.MaxRunning = g.MaxPerClient, g.MaxJobs, g.MaxRunning
	want.Games.MaxParallel, want.Games.Keep, want.Games.MaxKept = g.MaxParallel, g.Keep, g.MaxKept
	want.Games.DefaultMoveTime, want.Games.FollowGrace = g.DefaultMoveTime, g.FollowGrace
	gr := review.RedisConfig{}.WithDefaults(review.RedisPrefix)
	want.Games.RedisPrefix, want.Games.Lease = gr.Prefix, gr.Lease
	want.Games.MaxKBClient, want.Games.MaxMB = g.MaxBytesPerClient>>10, g.MaxBytes>>20
	pl := play.Config{}.WithDefaults()
	want.Play.Grace, want.Play.Keep, want.Play.Lag, want.Play.EngineMargin = pl.Grace, pl.Keep, pl.Lag, pl.EngineMargin
	want.Play.MaxPerClient, want.Play.MaxGames, want.Play.MaxKept, want.Play.MaxPlies = pl.MaxPerClient, pl.MaxGames, pl.MaxKept, pl.MaxPlies
	want.Play.Idle, want.Play.MaxPerNetwork = pl.Idle, pl.MaxPerNetwork
	pr := play.RedisConfig{}.WithDefaults(play.RedisPrefix)
	want.Play.RedisPrefix, want.Play.Lease = pr.Prefix, pr.Lease
	if g.MaxBytesPerClient%(1<<10) != 0 || g.MaxBytes%(1<<20) != 0 {
		t.Errorf("games' default byte bounds %d, %d are no whole number of KiB, MiB", g.MaxBytesPerClient, g.MaxBytes)
	}
	bc := broadcast.Config{}.WithDefaults()
	want.Broadcast.MaxPerClient, want.Broadcast.MaxBroadcasts = bc.MaxPerClient, bc.MaxBroadcasts
	want.Broadcast.MaxPerNetwork, want.Broadcast.MaxViewersPerNetwork = bc.MaxPerNetwork, bc.MaxViewersPerNetwork
	want.Broadcast.MaxViewersPerClient, want.Broadcast.MaxViewers, want.Broadcast.Keep = bc.MaxViewersPerClient, bc.MaxViewers, bc.Keep
	want.Broadcast.Idle = bc.Idle
	want.Broadcast.RedisPrefix, want.Broadcast.Lease, want.Broadcast.Check = broadcast.RedisPrefix, bc.Lease, bc.Check
	mc := match.Config{}.WithDefaults()
	want.Matches.MaxPerClient, want.Matches.MaxMatches, want.Matches.MaxRunning = mc.MaxPerClient, mc.MaxMatches, mc.MaxRunning
	want.Matches.MaxGames, want.Matches.MaxConcurrency, want.Matches.MaxOpenings = mc.MaxGames, mc.MaxConcurrency, mc.MaxOpenings
	want.Matches.MaxPlies, want.Matches.MaxClock, want.Matches.Keep, want.Matches.MaxKept = mc.MaxPlies, mc.MaxClock, mc.Keep, mc.MaxKept
	want.Matches.Lag, want.Matches.EngineMargin = mc.Lag, mc.EngineMargin
	mr := match.RedisConfig{}.WithDefaults(match.RedisPrefix)
	want.Matches.RedisPrefix, want.Matches.Lease = mr.Prefix, mr.Lease
	s := server.Config{}.WithDefaults()
	want.Server.ShutdownGrace, want.Server.MaxBody, want.Server.MaxMessage = DefaultShutdownGrace, s.MaxBody, s.MaxMessage
	a := (&server.Access{Anonymous: true}).WithDefaults()
	want.Access.Anonymous = &a.Anonymous
	want.Access.MaxSessions, want.Access.MaxPerAddress, want.Access.MaxClients = a.MaxSessions, a.MaxSessionsPerAddress, a.MaxClients
	want.Access.MaxPerNetwork = a.MaxSessionsPerNetwork
	want.Access.Keyed, want.Access.AnonymousQuota = a.Keyed, a.AnonymousQuota
	want.Access.RedisPrefix = quota.RedisConfig{}.WithDefaults().Prefix
	e := evalcache.Config{}.WithDefaults()
	enabled := true // openCache: on unless enabled is false
	want.Cache = CacheConfig{Enabled: &enabled, MaxEntries: e.MaxEntries, MaxMB: e.MaxBytes >> 20,
		RedisPrefix: e.RedisPrefix, RedisTTL: e.TTL, Timeout: e.Timeout}
	if e.MaxBytes%(1<<20) != 0 {
		t.Errorf("evalcache's default MaxBytes %d is no whole number of MB", e.MaxBytes)
	}
	zeroEmpty(reflect.ValueOf(got).Elem())
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("usid.yaml's values are not the code's defaults:\n got %+v\nwant %+v", *got, want)
	}

	// Engine entries: a key an entry writes (other than what describes this
	// engine: name, path, instances, options, client_options; past the
	// first entry, which lists every key, also args and protocol) holds
	// what WithDefaults fills in for an entry without it.
	var doc yaml.Node
	yaml.Unmarshal(usid.DefaultConfig, &doc)
	var entries []*yaml.Node
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		if doc.Content[0].Content[i].Value == "engines" {
			entries = doc.Content[0].Content[i+1].Content
		}
	}
	site := []string{"name", "path", "instances", "options", "client_options"}
	checked := map[string]bool{}
	et := reflect.TypeFor[pool.EngineConfig]()
	for i, e := range engines {
		d, err := pool.EngineConfig{Name: e.Name, Path: e.Path, Instances: e.Instances, Options: e.Options, ClientOptions: e.ClientOptions}.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		ev, dv := reflect.ValueOf(&e).Elem(), reflect.ValueOf(&d).Elem()
		zeroEmpty(ev)
		zeroEmpty(dv)
		written := map[string]bool{}
		for j := 0; j < len(entries[i].Content); j += 2 {
			written[entries[i].Content[j].Value] = true
		}
		for f := 0; f < et.NumField(); f++ {
			key, _, _ := strings.Cut(et.Field(f).Tag.Get("yaml"), ",")
			if !written[key] || slices.Contains(site, key) || (i > 0 && (key == "args" || key == "protocol")) {
				continue
			}
			checked[key] = true
			if !reflect.DeepEqual(ev.Field(f).Interface(), dv.Field(f).Interface()) {
				t.Errorf("engines[%d].%s is %+v in usid.yaml, but the default is %+v", i, key, ev.Field(f).Interface(), dv.Field(f).Interface())
			}
		}
	}
	if len(checked) < 12 {
		t.Errorf("only %d engine keys checked: %v", len(checked), checked)
	}
}

// zeroEmpty turns empty slices and maps within v into nil ("origins: []"
// and a key left out mean the same).
func zeroEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				zeroEmpty(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 && !v.IsNil() && v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
		}
		if v.Kind() == reflect.Slice {
			for i := 0; i < v.Len(); i++ {
				zeroEmpty(v.Index(i))
			}
		}
	}
}
