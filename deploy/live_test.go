package deploy_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/usid/usid/internal/proc"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/pool"
)

// goTool is the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := "/usr/local/go/bin/go"; fileExists(p) {
		return p
	}
	t.Fatal("no go command on PATH to build usid")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// buildUsid builds the real usid binary, as the Dockerfile does.
func buildUsid(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "usid")
	cmd := exec.Command(goTool(t), "build", "-trimpath", "-o", bin, "github.com/usid/usid/cmd/usid")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build usid: %v\n%s", err, out)
	}
	return bin
}

// liveUsid is one usid process started on a ConfigMap's usid.yaml.
type liveUsid struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:NNNNN

	mu      sync.Mutex
	log     strings.Builder
	started map[int]string // engine pid -> pool engine name, every one ever started
	ready   map[int]string
	addr    chan string
	exited  chan struct{}
	waitErr error
}

var (
	listeningRe = regexp.MustCompile(`msg="usid listening" addr=(\S+)`)
	engineRe    = regexp.MustCompile(`msg="engine (started|ready)" .*?engine=(\S+) .*?pid=(\d+)`)
)

func startUsid(t *testing.T, bin, configPath string) *liveUsid {
	t.Helper()
	u := &liveUsid{started: map[int]string{}, ready: map[int]string{}, addr: make(chan string, 1), exited: make(chan struct{})}
	u.cmd = exec.Command(bin, "--addr", "127.0.0.1:0", "--config", configPath)
	// As in the image: HOME is the only writable place.
	u.cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stderr, err := u.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			u.mu.Lock()
			u.log.WriteString(line + "\n")
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				select {
				case u.addr <- m[1]:
				default:
				}
			}
			if m := engineRe.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[3])
				u.started[pid] = m[2]
				if m[1] == "ready" {
					u.ready[pid] = m[2]
				}
			}
			u.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
		err := u.cmd.Wait()
		u.mu.Lock()
		u.waitErr = err
		u.mu.Unlock()
		close(u.exited)
	}()
	// Whatever happens in the test: usid and every engine it started end.
	t.Cleanup(func() {
		select {
		case <-u.exited:
		default:
			u.cmd.Process.Kill()
			<-u.exited
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		for pid, name := range u.started {
			if alive(pid) {
				t.Errorf("engine %s (pid %d) outlived usid; killing it", name, pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("usid's log:\n%s", u.log.String())
		}
	})
	select {
	case a := <-u.addr:
		u.base = "http://" + a
	case <-u.exited:
		t.Fatalf("usid exited before listening: %v", u.waitErr)
	case <-time.After(30 * time.Second):
		t.Fatal("usid did not log `usid listening` within 30s")
	}
	return u
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

var client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, b
}

type engineOption struct {
	Name string `json:"name"`
}

type enginesDoc struct {
	Engines []struct {
		Name      string         `json:"name"`
		Instances int            `json:"instances"`
		Idle      int            `json:"idle"`
		Options   []engineOption `json:"options"`
	} `json:"engines"`
}

// metricSamples parses the Prometheus text exposition: name -> label sets.
func metricSamples(text string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, lbls := line, ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			name, lbls = line[:i], line[i:strings.LastIndexByte(line, '}')+1]
		} else {
			name, _, _ = strings.Cut(line, " ")
		}
		out[name] = append(out[name], lbls)
	}
	return out
}

func hasSample(samples map[string][]string, name, engine string) bool {
	return slices.ContainsFunc(samples[name], func(l string) bool { return strings.Contains(l, `engine="`+engine+`"`) })
}

func vmKiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// addressSpaceLimit reads the soft RLIMIT_AS of pid ("unlimited": -1).
func addressSpaceLimit(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Max address space"); ok {
			f := strings.Fields(rest)
			if f[0] == "unlimited" {
				return -1, nil
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no address space limit in /proc/%d/limits", pid)
}

// TestLiveUsid runs the real usid on each distinct ConfigMap's usid.yaml
// with the real engines and checks what the manifests assume: the probe
// paths answer as the probes expect, /metrics exports every metric (and
// engine label) the autoscalers use, the engines' options that size them are
// pinned, each engine stays within the memory the Deployment budgets for it
// (and gpsusi really runs under its address-space cap), and on SIGTERM usid
// exits and leaves no engine behind.
func TestLiveUsid(t *testing.T) {
	bin := buildUsid(t)
	type group struct {
		text     []byte
		overlays []*rendered
	}
	var groups []*group
	for _, ov := range overlays {
		r := renderDecoded(t, ov.dir)
		_, text := configOf(t, r)
		i := slices.IndexFunc(groups, func(g *group) bool { return string(g.text) == string(text) })
		if i < 0 {
			groups = append(groups, &group{text: text})
			i = len(groups) - 1
		}
		groups[i].overlays = append(groups[i].overlays, r)
	}
	for _, g := range groups {
		var names []string
		multi := false
		for _, r := range g.overlays {
			names = append(names, path.Base(r.dir))
			multi = multi || len(byKind[*autoscalingv2.HorizontalPodAutoscaler](r))+len(byKind[*scaledObject](r)) > 0
		}
		t.Run(strings.Join(names, "+"), func(t *testing.T) {
			t.Parallel()
			cfg, err := parseConfig(g.text)
			if err != nil {
				t.Fatal(err)
			}
			// The access files come from a Secret in the pod; here from a
			// temporary directory with a test key and ticket secret.
			text, key := string(g.text), ""
			secrets := t.TempDir()
			for _, f := range []string{cfg.Access.KeysFile, cfg.Access.TicketSecret} {
				if f == "" {
					continue
				}
				local := filepath.Join(secrets, path.Base(f))
				content := randomHex(t, 32)
				if f == cfg.Access.KeysFile {
					key = randomHex(t, 24)
					content = "deploytest: " + key + "\n"
				}
				if err := os.WriteFile(local, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				text = strings.ReplaceAll(text, f, local)
			}
			// The overlay's Redis, on its own redis.conf, where usid.yaml names one.
			text, rdb := redisForConfig(t, cfg, g.overlays, text)
			body := fmt.Sprintf(`{"engine":%q,"limits":{"depth":6}}`, cfg.Engines[0].Name)
			file := filepath.Join(t.TempDir(), "usid.yaml")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			a := startUsid(t, bin, file)
			checkLive(t, a, cfg, g.overlays)
			if rdb != nil {
				checkRedisUse(t, a, cfg, rdb, body)
			}
			var ticket string
			if multi {
				ticket = issueTicket(t, a, key)
			}
			stopUsid(t, a, cfg)
			if multi {
				// Another pod of the same Deployment (started after the
				// first stopped, to keep the machine's two cores for one set
				// of engines at a time) accepts the first pod's ticket.
				b := startUsid(t, bin, file)
				checkTicket(t, b, ticket)
				if rdb != nil {
					// Its memory tier is empty: the answer comes from the
					// first pod's search, through Redis.
					testwait.For(t, "second usid ready", 4*time.Minute, // readiness waits for every engine's probe (the startup probe allows 240 s)
						func() bool {
							st, _ := get(t, b.base+readinessPath)
							return st == http.StatusOK
						})
					if !analyze(t, b, body) {
						t.Errorf("a second usid on the same Redis searched again for %s: want the first one's result (cached)", body)
					}
				}
				stopUsid(t, b, cfg) // also: engines still starting are not left behind
			}
		})
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	buf := make([]byte, n/2)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(buf)
}

// issueTicket gets a WebSocket ticket from a pod, as an API key holder.
func issueTicket(t *testing.T, u *liveUsid, key string) string {
	t.Helper()
	if key == "" {
		t.Fatal("several pods but no API keys file: cannot check tickets across pods")
	}
	req, _ := http.NewRequest(http.MethodPost, u.base+"/v1/ws-ticket", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tk struct {
		Ticket string `json:"ticket"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tk)
	if resp.StatusCode != http.StatusOK || err != nil || tk.Ticket == "" {
		t.Fatalf("POST /v1/ws-ticket: status %d, %v, ticket %q", resp.StatusCode, err, tk.Ticket)
	}
	return tk.Ticket
}

// checkTicket: a WebSocket ticket that another pod issued opens a socket
// here (the shared access.ticket_secret_file), so clients need no sticky
// sessions; a forged one does not.
func checkTicket(t *testing.T, u *liveUsid, ticket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(u.base, "http") + wsPath + "?ticket="
	conn, _, err := websocket.Dial(ctx, wsURL+url.QueryEscape(ticket), &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("another pod's ticket: %v (is access.ticket_secret_file shared?)", err)
	}
	conn.Close(websocket.StatusNormalClosure, "")
	forged := "X" + ticket[1:] // another key name under the same MAC
	if conn, resp, err := websocket.Dial(ctx, wsURL+url.QueryEscape(forged), &websocket.DialOptions{HTTPClient: client}); err == nil {
		conn.Close(websocket.StatusNormalClosure, "")
		t.Error("a forged ticket opened a WebSocket")
	} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged ticket: %v, want 401", err)
	}
}

func checkLive(t *testing.T, u *liveUsid, cfg *usidConfig, rs []*rendered) {
	// The probes, as the kubelet would send them.
	d := usidDeployment(t, rs[0])
	c := usidContainer(t, d)
	if st, _ := get(t, u.base+c.LivenessProbe.HTTPGet.Path); st != http.StatusOK {
		t.Errorf("liveness %s: status %d, want 200 at once", c.LivenessProbe.HTTPGet.Path, st)
	}
	// Ready within what the kubelet allows a starting pod (readiness waits
	// for every engine's probe; gpsusi's restarts after each go it aborts
	// on take most of it on a loaded machine).
	sp := c.StartupProbe
	allowed := time.Duration(sp.InitialDelaySeconds+sp.FailureThreshold*sp.PeriodSeconds) * time.Second
	testwait.For(t, "readiness "+c.ReadinessProbe.HTTPGet.Path+" 200", allowed, func() bool {
		st, _ := get(t, u.base+c.ReadinessProbe.HTTPGet.Path)
		return st == http.StatusOK
	})
	if st, _ := get(t, u.base+c.StartupProbe.HTTPGet.Path); st != http.StatusOK {
		t.Errorf("startup probe %s: status %d, want 200 once ready", c.StartupProbe.HTTPGet.Path, st)
	}

	// Every engine warm, so that every instance's memory can be measured.
	var engines enginesDoc
	testwait.For(t, "every engine instance idle", 5*time.Minute, func() bool {
		_, b := get(t, u.base+"/v1/engines")
		engines = enginesDoc{}
		if err := json.Unmarshal(b, &engines); err != nil {
			t.Fatalf("/v1/engines: %v", err)
		}
		for _, e := range engines.Engines {
			if e.Idle < e.Instances {
				return false
			}
		}
		return len(engines.Engines) == len(cfg.Engines)
	})

	// The options that size an engine are pinned in usid.yaml, never left to
	// the engine's default (which the resources could not account for).
	for _, e := range engines.Engines {
		i := slices.IndexFunc(cfg.Engines, func(c2 pool.EngineConfig) bool { return c2.Name == e.Name })
		if i < 0 {
			t.Errorf("usid serves engine %s, not in usid.yaml", e.Name)
			continue
		}
		ec := cfg.Engines[i]
		for _, group := range [][]string{{"USI_Hash", "Hash"}, {"Threads", "Thread"}} {
			offers := slices.ContainsFunc(e.Options, func(o engineOption) bool { return slices.Contains(group, o.Name) })
			sets := slices.ContainsFunc(group, func(n string) bool { _, ok := ec.Options[n]; return ok })
			if offers && !sets {
				t.Errorf("engine %s has a %s option but usid.yaml does not set it: the resources depend on it", e.Name, group[len(group)-1])
			}
		}
	}

	// Every metric the autoscalers read, with every engine label they select.
	st, body := get(t, u.base+metricsPath)
	if st != http.StatusOK {
		t.Fatalf("%s: status %d", metricsPath, st)
	}
	samples := metricSamples(string(body))
	for _, r := range rs {
		for _, h := range byKind[*autoscalingv2.HorizontalPodAutoscaler](r) {
			for _, m := range h.Spec.Metrics {
				if m.Pods == nil {
					continue
				}
				if eng := m.Pods.Metric.Selector.MatchLabels["engine"]; !hasSample(samples, m.Pods.Metric.Name, eng) {
					t.Errorf("%s: HPA metric %s{engine=%q} is not in usid's /metrics", r.dir, m.Pods.Metric.Name, eng)
				}
			}
		}
		for _, so := range byKind[*scaledObject](r) {
			for _, tr := range so.Spec.Triggers {
				m := regexp.MustCompile(`^sum\((\w+)\{namespace="[^"]+",engine="([^"]+)"\}\)$`).FindStringSubmatch(tr.Metadata["query"])
				if m == nil || !hasSample(samples, m[1], m[2]) {
					t.Errorf("%s: ScaledObject query %q: its series is not in usid's /metrics", r.dir, tr.Metadata["query"])
				}
			}
		}
	}
	for _, rule := range loadAdapterRules(t).Rules.Custom {
		name, _, _ := strings.Cut(rule.SeriesQuery, "{")
		if _, ok := samples[name]; !ok {
			t.Errorf("prometheus adapter rule: series %s is not in usid's /metrics", name)
		}
	}

	// Memory: each engine within its share of the Deployment's request.
	u.mu.Lock()
	ready := maps2slice(u.ready)
	u.mu.Unlock()
	if len(ready) == 0 {
		t.Error("no `engine ready` line with a pid in usid's log")
	}
	for _, pe := range ready {
		i := slices.IndexFunc(cfg.Engines, func(c2 pool.EngineConfig) bool { return c2.Name == pe.name })
		if i < 0 {
			continue
		}
		run, err := resolveEngine(cfg.Engines[i])
		if err != nil {
			t.Error(err)
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pe.pid)); err != nil {
			continue // replaced since (health check, recycle)
		} else if filepath.Base(exe) != filepath.Base(run.exe) {
			t.Errorf("engine %s pid %d runs %s, want %s", pe.name, pe.pid, exe, run.exe)
		}
		rss, err := vmKiB(pe.pid, "VmRSS")
		if err != nil {
			continue
		}
		if rss > run.memoryMiB<<10 {
			t.Errorf("engine %s pid %d: RSS %d MiB > its budget %d MiB", pe.name, pe.pid, rss>>10, run.memoryMiB)
		}
		if run.asLimit > 0 {
			if lim, err := addressSpaceLimit(pe.pid); err != nil || lim != run.asLimit {
				t.Errorf("engine %s pid %d: address space limit %d (%v), want %d from prlimit", pe.name, pe.pid, lim, err, run.asLimit)
			}
		}
		t.Logf("engine %s pid %d: RSS %d MiB of %d MiB", pe.name, pe.pid, rss>>10, run.memoryMiB)
	}
	if rss, err := vmKiB(u.cmd.Process.Pid, "VmRSS"); err == nil && rss > usidOwnMiB<<10 {
		t.Errorf("usid RSS %d MiB > %d MiB", rss>>10, usidOwnMiB)
	}

}

// stopUsid sends SIGTERM, as the kubelet does after preStop: usid drains,
// quits its engines and exits 0 well within shutdown_grace (nothing is in
// flight), leaving no engine behind.
func stopUsid(t *testing.T, u *liveUsid, cfg *usidConfig) {
	t.Helper()
	// Every engine process usid runs (started or still starting): its
	// children, once all configured instances are there.
	var want int
	for _, e := range cfg.Engines {
		want += int(instances(e))
	}
	pid := u.cmd.Process.Pid
	testwait.For(t, fmt.Sprintf("%d engine processes", want), 30*time.Second, func() bool { return len(proc.Children(pid)) >= want })
	u.mu.Lock()
	for _, kid := range proc.Children(pid) {
		if _, ok := u.started[kid]; !ok {
			u.started[kid] = proc.Comm(kid)
		}
	}
	u.mu.Unlock()
	// SIGTERM, as the kubelet sends it after preStop: usid drains, quits its
	// engines and exits 0 well within shutdown_grace (nothing is in flight).
	start := time.Now()
	if err := u.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-u.exited:
	case <-time.After(cfg.Server.ShutdownGrace + cfg.longestQuit() + 5*time.Second):
		t.Fatalf("usid still running %v after SIGTERM", time.Since(start))
	}
	u.mu.Lock()
	err := u.waitErr
	started := maps2slice(u.started)
	u.mu.Unlock()
	if err != nil {
		t.Errorf("usid after SIGTERM: %v, want exit 0", err)
	}
	t.Logf("usid stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	for _, pe := range started {
		if alive(pe.pid) {
			t.Errorf("engine %s pid %d still running after usid exited", pe.name, pe.pid)
		}
	}
}

type pidEngine struct {
	pid  int
	name string
}

func maps2slice(m map[int]string) []pidEngine {
	var out []pidEngine
	for pid, name := range m {
		out = append(out, pidEngine{pid, name})
	}
	slices.SortFunc(out, func(a, b pidEngine) int { return a.pid - b.pid })
	return out
}
