package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
)

// envServe makes this binary a usid server (serveChild) instead of the tool.
const envServe = "USID_BENCH_SERVE"

// usidConfig is a configuration file in usid's own format (usid.yaml), so
// that a usid binary given with -usid reads it as well as serveChild does.
// Only what the benchmarks need is set.
type usidConfig struct {
	Engines []engineConfig `yaml:"engines"`
	Session struct {
		QueueTimeout   time.Duration `yaml:"queue_timeout,omitempty"`
		AcquireTimeout time.Duration `yaml:"acquire_timeout,omitempty"`
	} `yaml:"session"`
	Server struct {
		ShutdownGrace time.Duration `yaml:"shutdown_grace"`
	} `yaml:"server"`
	Access struct {
		KeysFile       string      `yaml:"keys_file,omitempty"`
		Keyed          *benchQuota `yaml:"keyed,omitempty"`
		MaxSessions    int         `yaml:"max_sessions"`
		MaxPerAddress  int         `yaml:"max_sessions_per_address"`
		AnonymousQuota benchQuota  `yaml:"anonymous_quota"`
		Redis          string      `yaml:"redis,omitempty"`
	} `yaml:"access"`
	// Broadcast is set by (11) only.
	Broadcast *struct {
		MaxViewersPerClient int `yaml:"max_viewers_per_client"`
		MaxViewers          int `yaml:"max_viewers"`
	} `yaml:"broadcast,omitempty"`
	// Cache is off in these benchmarks: they repeat positions on purpose to
	// time searches, which the evaluation cache would answer instead.
	Cache struct {
		Enabled bool `yaml:"enabled"`
	} `yaml:"cache"`
}

// benchQuota is server.Quota with no engine-time budget, written so that a
// usid from before budgets (a -usid baseline) reads it too.
type benchQuota struct {
	EngineTime *quota.Budget `yaml:"engine_time,omitempty"`
	Rate       float64       `yaml:"rate"`
	Burst      int           `yaml:"burst"`
	Sessions   int           `yaml:"sessions"`
	Leases     int           `yaml:"leases"`
	Messages   float64       `yaml:"messages"`
}

// noLimits is a quota out of a benchmark's way.
func noLimits() *benchQuota {
	return &benchQuota{EngineTime: unlimited, Rate: 1e9, Burst: 1 << 30, Sessions: 1 << 20, Leases: 1 << 20, Messages: 1e9}
}

// unlimited is an engine-time budget with no limit; nil when the tool
// measures a usid binary that predates budgets (USID_BENCH_NO_BUDGETS=1).
var unlimited = func() *quota.Budget {
	if os.Getenv("USID_BENCH_NO_BUDGETS") != "" {
		return nil
	}
	return &quota.Budget{Seconds: -1}
}()

// engineConfig is pool.EngineConfig's YAML form, with empty fields left out
// so that usid applies its defaults (an empty capabilities list would mean
// "supports nothing").
type engineConfig struct {
	Name         string             `yaml:"name"`
	Path         string             `yaml:"path"`
	Env          []string           `yaml:"env,omitempty"`
	Instances    int                `yaml:"instances"`
	Queue        int                `yaml:"queue,omitempty"`
	Options      map[string]string  `yaml:"options,omitempty"`
	Capabilities *pool.Capabilities `yaml:"capabilities,omitempty"`
	Timeouts     *pool.Timeouts     `yaml:"timeouts,omitempty"`
}

// newConfig is a configuration for the engines, with quotas out of the way:
// every benchmark client comes from 127.0.0.1, which usid would otherwise
// hold to one anonymous client's quota (4 sessions, 5 searches a second).
func newConfig(engines ...engineConfig) usidConfig {
	var c usidConfig
	c.Engines = engines
	c.Session.QueueTimeout = 2 * time.Minute
	c.Session.AcquireTimeout = time.Minute
	c.Server.ShutdownGrace = 10 * time.Second
	c.Access.MaxSessions = 1 << 20
	c.Access.MaxPerAddress = 1 << 20 // usid.yaml's 500 would stop (5) at 500
	c.Access.AnonymousQuota = *noLimits()
	return c
}

// The engines, with minimal entries as usid.yaml has them: usid learns the
// rest (its profile).
func (b *bench) fairyEngine(n int) engineConfig {
	return engineConfig{Name: "fairy", Path: b.fairy, Instances: n, Queue: 1024}
}

func (b *bench) gpsEngine(n int) engineConfig {
	return engineConfig{Name: "gps", Path: b.gps, Instances: n, Queue: 1024}
}

// fakeEngine is this binary as internal/fakeengine in mode.
func (b *bench) fakeEngine(name, mode string, n int) engineConfig {
	return engineConfig{Name: name, Path: b.self, Env: []string{fakeengine.EnvMode + "=" + mode}, Instances: n, Queue: 1024}
}

// usidProc is a running usid child process.
type usidProc struct {
	cmd     *exec.Cmd
	addr    string // host:port
	http    *http.Client
	stderr  *tail
	exited  chan struct{}
	waitErr error
}

// startUsid writes cfg, starts usid on 127.0.0.1 with it, and returns once
// every engine instance is warm (idle in the pool).
func (b *bench) startUsid(ctx context.Context, name string, cfg usidConfig) (*usidProc, error) {
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(b.tmp, name+".yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		return nil, err
	}
	args := []string{"--addr", "127.0.0.1:0", "--config", file}
	cmd := exec.Command(b.self, args...)
	cmd.Env = append(os.Environ(), envServe+"=1")
	if b.profile != "" {
		cmd.Env = append(cmd.Env, envProfile+"="+filepath.Join(b.profile, name))
		if b.trace {
			cmd.Env = append(cmd.Env, envTrace+"=1")
		}
	}
	if b.usidBin != "" {
		cmd = exec.Command(b.usidBin, args...)
	}
	dieWithParent(cmd) // no orphaned server if the tool is killed
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	u := &usidProc{cmd: cmd, http: b.http, stderr: &tail{}, exited: make(chan struct{})}
	addrc := make(chan string, 1)
	logDone := make(chan struct{})
	go u.readLog(stderr, addrc, logDone)
	go func() {
		<-logDone // Wait closes the pipe: read it all first
		u.waitErr = cmd.Wait()
		close(u.exited)
	}()
	select {
	case u.addr = <-addrc:
	case <-u.exited:
		return nil, fmt.Errorf("usid exited before listening: %v\n%s", u.waitErr, u.stderr)
	case <-time.After(time.Minute):
		u.stop()
		return nil, fmt.Errorf("usid did not listen within a minute\n%s", u.stderr)
	case <-ctx.Done():
		u.stop()
		return nil, ctx.Err()
	}
	if err := u.waitIdle(ctx, "", 2*time.Minute); err != nil {
		u.stop()
		return nil, err
	}
	return u, nil
}

// readLog keeps the tail of usid's log and finds the listening address in
// its "usid listening" line.
func (u *usidProc) readLog(r io.Reader, addrc chan<- string, done chan<- struct{}) {
	defer close(done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		u.stderr.add(line)
		if !found && strings.Contains(line, "usid listening") {
			for _, f := range strings.Fields(line) {
				if a, ok := strings.CutPrefix(f, "addr="); ok {
					found = true
					addrc <- a
				}
			}
		}
	}
	io.Copy(io.Discard, r)
}

func (u *usidProc) url(path string) string   { return "http://" + u.addr + path }
func (u *usidProc) wsURL(path string) string { return "ws://" + u.addr + path }
func (u *usidProc) pid() int                 { return u.cmd.Process.Pid }

// engineStatus is one entry of GET /v1/engines.
type engineStatus struct {
	Name      string `json:"name"`
	Instances int    `json:"instances"`
	Idle      int    `json:"idle"`
}

func (u *usidProc) engines(ctx context.Context) ([]engineStatus, error) {
	var resp struct {
		Engines []engineStatus `json:"engines"`
	}
	err := u.getJSON(ctx, "/v1/engines", &resp)
	return resp.Engines, err
}

// waitIdle waits until every instance of engine is idle: a warm pool, with
// no reset from an earlier lease in progress.
func (u *usidProc) waitIdle(ctx context.Context, engine string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		es, err := u.engines(ctx)
		if err == nil {
			all := true
			for _, e := range es {
				if (engine == "" || e.Name == engine) && e.Idle < e.Instances {
					all = false
				}
			}
			if all {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engines not idle within %v (last: %+v, %v)\n%s", within, es, err, u.stderr)
		case <-u.exited:
			return fmt.Errorf("usid exited: %v\n%s", u.waitErr, u.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (u *usidProc) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url(path), nil)
	if err != nil {
		return err
	}
	resp, err := u.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// metric reads one unlabelled value from /metrics.
func (u *usidProc) metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url("/metrics"), nil)
	if err != nil {
		return 0, err
	}
	resp, err := u.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			return f, err
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

// stop shuts usid down as an operator would (SIGTERM: drain, quit the
// engines) and kills it if that takes too long. A non-zero exit, a race
// report for instance, is an error.
func (u *usidProc) stop() error {
	select {
	case <-u.exited:
	default:
		u.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-u.exited:
		case <-time.After(30 * time.Second):
			u.cmd.Process.Kill()
			<-u.exited
			return fmt.Errorf("usid did not stop within 30s of SIGTERM\n%s", u.stderr)
		}
	}
	if u.waitErr != nil {
		return fmt.Errorf("usid: %v\n%s", u.waitErr, u.stderr)
	}
	return nil
}

// tail keeps the last lines of a log, to show when something fails.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 40 {
		t.lines = t.lines[1:]
	}
	t.lines = append(t.lines, l)
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(usid logged nothing)"
	}
	return "usid log (last lines):\n  " + strings.Join(t.lines, "\n  ")
}

// stopUsid stops u, folding its error into err (for defers).
func stopUsid(u *usidProc, err *error) {
	if serr := u.stop(); serr != nil {
		*err = errors.Join(*err, serr)
	}
}
