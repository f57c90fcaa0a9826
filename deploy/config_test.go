package deploy_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/app"
	"github.com/usid/usid/pool"
)

// usidConfig is usid's configuration file, read by usid's own strict parser
// (internal/app), with what the manifests derive from it.
type usidConfig struct {
	*app.Config
}

// parseConfig reads a ConfigMap's usid.yaml as usid does: laid over the
// built-in one, each engine with the pool's defaults filled in.
func parseConfig(b []byte) (*usidConfig, error) {
	c, err := app.ParseConfig(usid.DefaultConfig, b)
	if err != nil {
		return nil, err
	}
	if len(c.Engines) == 0 {
		return nil, fmt.Errorf("no engines")
	}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for i, e := range c.Engines {
		if e.Path == self {
			e.Path = imageUsid // "@self", resolved to this test binary: the image's usid
		}
		if c.Engines[i], err = e.WithDefaults(); err != nil {
			return nil, err
		}
	}
	return &usidConfig{c}, nil
}

// imageUsid is usid's binary in the image: what an engine path "@self"
// (usid's own engines, such as its othello engine) is there.
const imageUsid = "/usr/local/bin/usid"

// watchdogMargin is session.Caps.WatchdogMargin's default, which usid does
// not read from the file: a search may overrun its limit by this much.
const watchdogMargin = 5 * time.Second

// probeAllowance is what a new pod's first start spends learning its engines'
// profiles (package probe) before any engine serves: about 10s for gpsusi on
// an idle machine; allowed six times that.
const probeAllowance = time.Minute

// longestSearch is the longest a search that usid has accepted can take:
// the slowest cap plus the watchdog margin, after which usid stops it and
// waits for the engine's bestmove (Timeouts.Stop) before killing it.
func (c *usidConfig) longestSearch() time.Duration {
	caps := c.Session.Caps
	var stop time.Duration
	for _, e := range c.Engines {
		stop = max(stop, e.Timeouts.Stop)
	}
	return max(caps.MaxAnalysis, caps.MaxMoveTime, caps.MaxMateTime) + watchdogMargin + stop
}

// longestWait is how long a request accepted before SIGTERM may still wait
// for an engine during the drain (a WebSocket request's queue_timeout, a REST
// request's acquire_timeout).
func (c *usidConfig) longestWait() time.Duration {
	return max(c.Session.QueueTimeout, c.Session.AcquireTimeout)
}

func (c *usidConfig) longestQuit() time.Duration {
	var q time.Duration
	for _, e := range c.Engines {
		q = max(q, e.Timeouts.Quit)
	}
	return q
}

// usidOwnMiB is the memory usid itself is given: its RSS is ~17MiB idle and
// grows with what clients hold, within the configured bounds (usidStateMB).
const usidOwnMiB = 128

// What clients can make usid hold, per item, as measured (SECURITY.md,
// "Memory", has the sources).
const (
	usidAtRestMB = 17.5 // RSS of an idle usid with its engines started (BENCHMARKS.md (5))
	sessionKB    = 10.4 // an idle WebSocket session (BENCHMARKS.md, issue 18: 118.6 MB RSS at 10k)
	// an identity or address entry (BenchmarkForgedIdentities: 32.3 MB of
	// heap in use for 50,000 after 800,000 forged addresses) with its
	// engine-time balance in memory (117 B)
	identityKB = 0.77
	ticketsMB  = 8.3  // used WebSocket tickets: at most 100,000, 83 B each
	gamesMB    = 0.25 // the games Manager's own tables, beyond games.max_mb
	// The Go heap grows to twice its live size before it is collected
	// (GOGC=100), so state counts twice.
	gcFactor = 2
)

// usidStateMB is the most usid holds with every bound reached: WebSocket
// sessions (access.max_sessions), identities and their balances
// (access.max_clients), used tickets, and game jobs (games.max_mb).
func (c *usidConfig) usidStateMB() float64 {
	state := float64(c.Access.MaxSessions)*sessionKB/1e3 + float64(c.Access.MaxClients)*identityKB/1e3 +
		ticketsMB + float64(c.Games.MaxMB)*1.048576 + gamesMB
	return usidAtRestMB + gcFactor*state
}

// engineOverheadMiB is what an engine uses beyond its hash table, by
// executable. Measured for fairy-stockfish 11.1 (Debian bookworm): RSS is
// 65MiB with Hash 1, 130MiB with Hash 64, 326MiB with Hash 256, 147MiB with
// Hash 64 after a 20 s search, 343MiB with Hash 256 after a MultiPV search:
// up to ~90MiB beyond the hash, budgeted with headroom (the memory limit
// equals the request; going over is an OOM kill). An executable missing here
// must either be added with a measured overhead or run under prlimit --as.
var engineOverheadMiB = map[string]int64{
	"fairy-stockfish": 128,
}

// engineRun is what one configured engine really executes and how large it is.
type engineRun struct {
	exe       string // the engine's own executable (after a prlimit wrapper)
	wrapper   string // the wrapper's executable, if any
	asLimit   int64  // prlimit --as, bytes; 0: none
	threads   int64
	hashMiB   int64
	memoryMiB int64 // per instance
}

// resolveEngine works out an engine's executable, threads and memory from its
// configuration. An engine runs either directly, with its memory its hash
// (USI_Hash or Hash, MiB) plus a measured overhead, or under
// `prlimit --as=BYTES -- ENGINE ARGS`, which caps its whole address space and
// so its memory at BYTES (gpsusi must: it has no hash option and sizes its
// tables from the node's /proc/meminfo, not from the pod's limit).
func resolveEngine(e pool.EngineConfig) (engineRun, error) {
	r := engineRun{exe: e.Path, threads: 1}
	if path.Base(e.Path) == "prlimit" {
		r.wrapper = e.Path
		args := e.Args
		for len(args) > 0 {
			a := args[0]
			args = args[1:]
			if a == "--" {
				break
			}
			if v, ok := strings.CutPrefix(a, "--as="); ok {
				soft, _, _ := strings.Cut(v, ":")
				n, err := strconv.ParseInt(soft, 10, 64)
				if err != nil || n <= 0 {
					return r, fmt.Errorf("engine %s: prlimit %s: want --as=BYTES", e.Name, a)
				}
				r.asLimit = n
				continue
			}
			if !strings.HasPrefix(a, "-") {
				args = append([]string{a}, args...)
				break
			}
		}
		if len(args) == 0 {
			return r, fmt.Errorf("engine %s: prlimit without a command", e.Name)
		}
		if r.asLimit == 0 {
			return r, fmt.Errorf("engine %s: prlimit without --as=BYTES caps nothing", e.Name)
		}
		r.exe = args[0]
	}
	for _, name := range []string{"Threads", "Thread"} {
		if v, ok := e.Options[name]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return r, fmt.Errorf("engine %s: %s %q: want a positive number", e.Name, name, v)
			}
			r.threads = n
		}
	}
	for _, name := range []string{"USI_Hash", "Hash"} {
		if v, ok := e.Options[name]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return r, fmt.Errorf("engine %s: %s %q: want MiB", e.Name, name, v)
			}
			r.hashMiB = n
		}
	}
	switch overhead, known := engineOverheadMiB[path.Base(r.exe)]; {
	case r.asLimit > 0:
		r.memoryMiB = (r.asLimit + 1<<20 - 1) >> 20
	case known:
		r.memoryMiB = r.hashMiB + overhead
	default:
		return r, fmt.Errorf("engine %s: %s: no measured memory overhead in engineOverheadMiB, and no prlimit --as cap", e.Name, r.exe)
	}
	return r, nil
}

func instances(e pool.EngineConfig) int64 {
	if e.Instances == 0 {
		return 1
	}
	return int64(e.Instances)
}

// wantResources derives the pod's requests from the engine configuration:
// CPU = engine threads in all; memory = usid + its in-memory evaluation
// cache (cache.max_mb) + instances x (hash + overhead).
func (c *usidConfig) wantResources() (cpuMilli, memMiB int64, err error) {
	memMiB = usidOwnMiB
	if c.Cache.Enabled == nil || *c.Cache.Enabled {
		memMiB += c.Cache.MaxMB
	}
	for _, e := range c.Engines {
		r, err := resolveEngine(e)
		if err != nil {
			return 0, 0, err
		}
		cpuMilli += instances(e) * r.threads * 1000
		memMiB += instances(e) * r.memoryMiB
	}
	return cpuMilli, memMiB, nil
}

// configOf returns the usid.yaml that r's Deployment mounts, parsed, and the
// file's text: the ConfigMap named by the config volume, key usid.yaml.
func configOf(t *testing.T, r *rendered) (*usidConfig, []byte) {
	t.Helper()
	d := usidDeployment(t, r)
	var cmName string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	for _, cm := range byKind[*corev1.ConfigMap](r) {
		if cm.Name != cmName {
			continue
		}
		text, ok := cm.Data["usid.yaml"]
		if !ok {
			t.Fatalf("ConfigMap %s has no usid.yaml (keys: %v)", cm.Name, keys(cm.Data))
		}
		c, err := parseConfig([]byte(text))
		if err != nil {
			t.Fatalf("ConfigMap %s usid.yaml: %v", cm.Name, err)
		}
		return c, []byte(text)
	}
	t.Fatalf("%s: the Deployment mounts ConfigMap %q, which is not rendered", r.dir, cmName)
	return nil, nil
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestResolveEngine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		e       pool.EngineConfig
		want    engineRun
		wantErr string
	}{
		{"fairy", pool.EngineConfig{Name: "f", Path: "/usr/games/fairy-stockfish", Options: map[string]string{"USI_Hash": "256", "Threads": "2"}},
			engineRun{exe: "/usr/games/fairy-stockfish", threads: 2, hashMiB: 256, memoryMiB: 384}, ""},
		{"fairy default threads", pool.EngineConfig{Name: "f", Path: "/usr/games/fairy-stockfish", Options: map[string]string{"Hash": "16"}},
			engineRun{exe: "/usr/games/fairy-stockfish", threads: 1, hashMiB: 16, memoryMiB: 144}, ""},
		{"gps under prlimit", pool.EngineConfig{Name: "g", Path: "/usr/bin/prlimit", Args: []string{"--as=1073741824", "--", "/usr/games/gpsusi"}, Options: map[string]string{"Thread": "3"}},
			engineRun{exe: "/usr/games/gpsusi", wrapper: "/usr/bin/prlimit", asLimit: 1 << 30, threads: 3, memoryMiB: 1024}, ""},
		{"prlimit soft:hard, no --", pool.EngineConfig{Name: "g", Path: "/usr/bin/prlimit", Args: []string{"--as=536870912:536870912", "/usr/games/gpsusi"}},
			engineRun{exe: "/usr/games/gpsusi", wrapper: "/usr/bin/prlimit", asLimit: 512 << 20, threads: 1, memoryMiB: 512}, ""},
		{"gps unbounded", pool.EngineConfig{Name: "g", Path: "/usr/games/gpsusi"}, engineRun{}, "no measured memory overhead"},
		{"prlimit without --as", pool.EngineConfig{Name: "g", Path: "/usr/bin/prlimit", Args: []string{"--nofile=10", "--", "/usr/games/gpsusi"}}, engineRun{}, "caps nothing"},
		{"bad threads", pool.EngineConfig{Name: "f", Path: "/usr/games/fairy-stockfish", Options: map[string]string{"Threads": "many", "Hash": "1"}}, engineRun{}, "want a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveEngine(tc.e)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
