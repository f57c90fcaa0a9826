package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/usid/usid/internal/fakeengine"
)

// (11) A broadcast: one search, many viewers (issue 38). One fake engine
// (mode stamped-info) prints a stamped line every bcInterval; N viewers
// watch the broadcast over GET /v1/broadcasts/{id}/ws, read by one epoll
// loop (rawws_linux.go). Measured over bcWindow: lines delivered against
// the lines the engine printed meanwhile (by their depth, which counts
// up), latency from the engine's stamp to the viewer's read, usid's CPU per
// delivered message (one info event to one viewer), and usid's RSS per
// viewer (over its RSS with the broadcast running and no viewer).
//
// Then the same with the viewers spread over three usid sharing one
// redis-server, behind a round-robin TCP proxy (haproxy): the search runs
// on the first, its lines reach the others over Redis pub/sub. CPU is the three usid's together (the proxy's
// is shown apart), RSS per viewer is the three's growth over all viewers.

func benchBroadcast(ctx context.Context, b *bench) (err error) {
	maxV := slices.Max(b.bcViewers)
	// The tool holds a descriptor per viewer, a proxy two per viewer it
	// carries: with a hard limit below that, the viewers are spread over
	// several proxy processes (each round-robin over the three usid).
	limit, lerr := raiseNoFile(uint64(2*maxV) + 1024)
	if limit < uint64(maxV)+256 {
		return fmt.Errorf("open-file limit %d is too low for %d viewers (%v)", limit, maxV, lerr)
	}
	proxies := int((2*uint64(maxV))/(limit-512)) + 1
	perProxy := int((limit - 512) / 2)
	rs, err := b.startRedis()
	if err != nil {
		return err
	}
	defer rs.stop()
	mode := fakeengine.StampedInfo + "=" + b.bcInterval.String()
	config := func(redis string) usidConfig {
		c := newConfig(b.fakeEngine("stamp", mode, 1))
		c.Access.Redis = redis
		c.Broadcast = &struct {
			MaxViewersPerClient int `yaml:"max_viewers_per_client"`
			MaxViewers          int `yaml:"max_viewers"`
		}{1 << 20, 1 << 20}
		return c
	}
	b.rep.note("(11) fake engine (mode %s): one info line every %v, multipv 1; %v measured after every viewer had a line; viewers read by one epoll loop in the tool; machine: %d cores shared by usid, the engine, redis, the proxy and the viewers.",
		fakeengine.StampedInfo, b.bcInterval, b.bcWindow, runtimeCPUs())

	// The floor first, each viewer count: what one write(2) per viewer costs.
	if err := b.measureFanFloor(ctx); err != nil {
		return err
	}

	one, err := b.startUsid(ctx, "bc-one", config(""))
	if err != nil {
		return err
	}
	var p99one []time.Duration
	for _, n := range b.bcViewers {
		r, err := b.broadcastRun(ctx, []*usidProc{one}, []string{one.addr}, n, nil)
		if err != nil {
			stopUsid(one, &err)
			return fmt.Errorf("one usid, %d viewers: %w", n, err)
		}
		p99one = append(p99one, r.p99)
		b.addBroadcastRow(fmt.Sprintf("broadcast, %d viewers of one search, one usid", n), r, n == b.bcTarget, -1)
	}
	if err := one.stop(); err != nil {
		return err
	}

	var pods []*usidProc
	defer func() {
		for _, u := range pods {
			stopUsid(u, &err)
		}
	}()
	for i := range 3 {
		u, err := b.startUsid(ctx, fmt.Sprintf("bc-pod%d", i+1), config(rs.url()))
		if err != nil {
			return err
		}
		pods = append(pods, u)
	}
	var addrs []string
	var procs []*exec.Cmd
	for range proxies {
		proxy, err := b.startProxy(pods, perProxy)
		if err != nil {
			return err
		}
		defer proxy.stop()
		addrs, procs = append(addrs, proxy.addr), append(procs, proxy.cmd)
	}
	if proxies > 1 {
		b.rep.note("(11) the open-file limit (%d) holds %d proxy connections at most: the viewers are spread over %d proxy processes, each round-robin over the three usid.", limit, (limit-512)/2, proxies)
	}
	// The same three usid with the viewers spread over them by the tool
	// itself (each viewer dials the next usid): usid's part without the
	// proxy's, which copies every message once more in user space.
	podAddrs := []string{pods[0].addr, pods[1].addr, pods[2].addr}
	for i, n := range b.bcViewers {
		r, err := b.broadcastRun(ctx, pods, podAddrs, n, nil)
		if err != nil {
			return fmt.Errorf("three usid, %d viewers, no proxy: %w", n, err)
		}
		b.addBroadcastRow(fmt.Sprintf("broadcast, %d viewers of one search, three usid on one redis-server, viewers dialing them in turn (no proxy)", n), r, n == b.bcTarget, p99one[i])
	}
	for i, n := range b.bcViewers {
		r, err := b.broadcastRun(ctx, pods, addrs, n, procs)
		if err != nil {
			return fmt.Errorf("three usid, %d viewers: %w", n, err)
		}
		b.addBroadcastRow(fmt.Sprintf("broadcast, %d viewers of one search, three usid on one redis-server behind a round-robin proxy", n), r, n == b.bcTarget, p99one[i])
	}
	return nil
}

// measureFanFloor runs the fan-out floor for each viewer count and keeps
// its CPU per message (b.floorPerMsg) for usid's rows.
func (b *bench) measureFanFloor(ctx context.Context) error {
	floor, err := b.startFanFloor()
	if err != nil {
		return err
	}
	defer func() {
		floor.cmd.Process.Kill()
		floor.cmd.Wait()
	}()
	b.floorPerMsg = map[int]time.Duration{}
	for _, n := range b.bcViewers {
		r, err := b.broadcastRun(ctx, []*usidProc{floor}, []string{floor.addr}, n, nil)
		if err != nil {
			return fmt.Errorf("the fan-out floor, %d viewers: %w", n, err)
		}
		b.floorPerMsg[n] = r.usidCPU / time.Duration(max(r.delivered, 1))
		b.rep.add(fmt.Sprintf("broadcast floor, %d viewers: one process writing one frame to each socket (no usid)", n), r.summary("the floor"), "", "")
	}
	return nil
}

func runtimeCPUs() int {
	n, _ := strconv.Atoi(strings.TrimSpace(string(must(exec.Command("nproc").Output()))))
	return n
}

func must(b []byte, _ error) []byte { return b }

type bcRun struct {
	viewers             int
	printed, delivered  int
	p50, p99, pmax      time.Duration
	usidCPU, proxyCPU   time.Duration
	window              time.Duration
	rssPerViewer        float64 // bytes
	rssBase, rssViewers int64
	// unsent: lines of the window that no viewer got (merged before the
	// fan-out: the search's outbox keeps the latest line of a multipv);
	// partial: lines some viewers got and others not.
	unsent, partial int
}

// summary is a run's figures; who is whose CPU and RSS they are.
func (r *bcRun) summary(who string) string {
	share := float64(r.delivered) / float64(max(r.printed, 1))
	perMsg := r.usidCPU / time.Duration(max(r.delivered, 1))
	res := fmt.Sprintf("%d of %d lines delivered (%.3f%%); p50 %s, p99 %s, max %s; %s CPU %s per delivered message (%.0f%% of a core); RSS %.1f KB per viewer (%s with viewers over %s)",
		r.delivered, r.printed, 100*share, ms(r.p50), ms(r.p99), ms(r.pmax), who, perMsg, 100*r.usidCPU.Seconds()/r.window.Seconds(),
		r.rssPerViewer/1024, mb(r.rssViewers), mb(r.rssBase))
	if r.unsent > 0 || r.partial > 0 {
		res += fmt.Sprintf("; of the lines printed, %d reached no viewer and %d only some", r.unsent, r.partial)
	}
	if r.proxyCPU > 0 {
		res += fmt.Sprintf("; the proxy %.0f%% of a core", 100*r.proxyCPU.Seconds()/r.window.Seconds())
	}
	return res
}

func (b *bench) addBroadcastRow(what string, r *bcRun, target bool, p99one time.Duration) {
	share := float64(r.delivered) / float64(max(r.printed, 1))
	perMsg := r.usidCPU / time.Duration(max(r.delivered, 1))
	res := r.summary("usid")
	if f := b.floorPerMsg[r.viewers]; f > 0 {
		res += fmt.Sprintf("; CPU per message %.2f× the floor's (%s)", float64(perMsg)/float64(f), f)
	}
	if !target {
		b.rep.add(what, res, "", "")
		return
	}
	ok := share >= 0.999 && r.p99 <= 50*time.Millisecond && perMsg <= 5*time.Microsecond && r.rssPerViewer <= 12*1024
	t := "≥ 99.9% lines, p99 ≤ 50 ms, ≤ 5 µs CPU per message, ≤ 12 KB per viewer"
	if p99one >= 0 {
		t += ", p99 within 10 ms of one usid's"
		ok = ok && r.p99-p99one <= 10*time.Millisecond
	}
	b.rep.add(what, res, t, verdict(ok))
}

// broadcastRun creates a broadcast on pods[0], has n viewers watch it
// through addr, and measures one window.
func (b *bench) broadcastRun(ctx context.Context, pods []*usidProc, addrs []string, n int, proxies []*exec.Cmd) (*bcRun, error) {
	body := []byte(`{"engine":"stamp","position":{"sfen":"startpos","moves":[]}}`)
	status, raw, err := post(ctx, b.http, pods[0].url("/v1/broadcasts"), body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusCreated {
		return nil, fmt.Errorf("POST /v1/broadcasts: %d %s", status, raw)
	}
	var v struct{ ID string }
	json.Unmarshal(raw, &v)
	defer func() {
		req, _ := http.NewRequest(http.MethodDelete, pods[0].url("/v1/broadcasts/"+v.ID), nil)
		if resp, err := b.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	rss := func() int64 {
		time.Sleep(500 * time.Millisecond)
		var t int64
		for _, u := range pods {
			r, _ := rssOf(u.pid())
			t += r
		}
		return t
	}
	r := &bcRun{viewers: n, rssBase: rss()}
	var conns []*rawWS
	defer func() { closeRaw(conns) }()
	for i, addr := range addrs {
		k := n/len(addrs) + btoi(i < n%len(addrs))
		cs, err := dialRawMany(addr, "/v1/broadcasts/"+v.ID+"/ws", k, 64)
		if err != nil {
			return nil, err
		}
		conns = append(conns, cs...)
	}
	r.rssViewers = rss()
	r.rssPerViewer = float64(r.rssViewers-r.rssBase) / float64(n)

	// The window's lines are those printed after its start and before its
	// end, by their depth (it counts up): from the depth after the highest
	// any viewer had seen at the start to the highest seen at the end.
	// Each viewer's lines of that range are counted whenever they come
	// (3 s are waited for the late ones), their latency taken.
	stats := make([]sessionStats, n)
	warmed := 0
	never := time.Now().Add(time.Hour)
	start, end := never, never
	sampled := 0
	seen, from, to := 0, 0, -1
	got := map[int]int{} // deliveries per depth in the window
	var cpu0, cpu1, pcpu0, pcpu1 time.Duration
	cpu := func() (t time.Duration) {
		for _, u := range pods {
			t += cpuOf(u.pid())
		}
		return t
	}
	var failed error
	onFrame := func(i int, now time.Time, op byte, msg []byte) {
		s := &stats[i]
		if op == 8 {
			failed = fmt.Errorf("viewer %d of %d closed by usid", i+1, n)
			return
		}
		if !bytes.Contains(msg, typeInfo) {
			return
		}
		depth, ok := intAfter(msg, depthKey)
		if !ok {
			return
		}
		seen = max(seen, depth)
		if !s.warm {
			s.warm = true
			if warmed++; warmed == n {
				start = now.Add(200 * time.Millisecond)
				end = start.Add(b.bcWindow)
			}
		}
		if sampled == 0 || depth < from || (to >= 0 && depth > to) {
			return
		}
		stamp, ok := intAfter(msg, stampKey)
		if !ok {
			return
		}
		s.lat = append(s.lat, now.Sub(time.Unix(0, int64(stamp))))
		s.delivered++
		got[depth]++
	}
	tick := func(now time.Time) {
		if sampled == 0 && !now.Before(start) {
			cpu0, sampled, from = cpu(), 1, seen+1
			for _, p := range proxies {
				pcpu0 += cpuOf(p.Process.Pid)
			}
		}
		if sampled == 1 && !now.Before(end) {
			cpu1, sampled, to = cpu(), 2, seen
			for _, p := range proxies {
				pcpu1 += cpuOf(p.Process.Pid)
			}
			r.window = now.Sub(start)
			end = now.Add(3 * time.Second) // for the lines still on their way
		}
	}
	if err := epollLoop(conns, time.Now().Add(b.bcWindow+2*time.Minute), onFrame, tick,
		func() bool { return failed != nil || ctx.Err() != nil || (sampled == 2 && time.Now().After(end)) }); err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var lat []time.Duration
	for i := range stats {
		lat = append(lat, stats[i].lat...)
		r.delivered += stats[i].delivered
		r.printed += to - from + 1
	}
	for d := from; d <= to; d++ {
		switch got[d] {
		case 0:
			r.unsent++
		case n:
		default:
			r.partial++
		}
	}
	slices.Sort(lat)
	r.p50, r.p99, r.pmax = pct(lat, .5), pct(lat, .99), pct(lat, 1)
	r.usidCPU, r.proxyCPU = cpu1-cpu0, pcpu1-pcpu0
	return r, nil
}

func rssOf(pid int) (int64, error) { return rss(pid) }

// redisProc is a redis-server for (11).
type redisProc struct {
	cmd  *exec.Cmd
	addr string
}

func (r *redisProc) url() string { return "redis://" + r.addr + "/0" }

func (r *redisProc) stop() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

func (b *bench) startRedis() (*redisProc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is missing (apt-get install redis-server): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.tmp)
	if err := startServing(cmd, addr, "redis-server", func(c net.Conn) bool {
		fmt.Fprintf(c, "PING\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		return strings.HasPrefix(line, "+PONG")
	}); err != nil {
		return nil, err
	}
	return &redisProc{cmd: cmd, addr: addr}, nil
}

// startServing starts cmd, a server that will listen on addr, and waits
// up to 10 s until ready (nil: a connection is enough) says it answers;
// it kills cmd if not.
func startServing(cmd *exec.Cmd, addr, what string, ready func(net.Conn) bool) error {
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			ok := ready == nil || ready(c)
			c.Close()
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return fmt.Errorf("%s did not answer on %s within 10 s: %v", what, addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr is a loopback address whose port is free now.
func freeAddr() (string, error) {
	port, err := freePort()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), err
}

// proxyProc is the round-robin TCP proxy child.
type proxyProc struct {
	cmd  *exec.Cmd
	addr string
}

func (p *proxyProc) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// startProxy starts haproxy (Debian's haproxy: what a deployment puts in
// front of its pods), in TCP mode, round-robin over pods, in the
// foreground, for at most maxconn connections.
func (b *bench) startProxy(pods []*usidProc, maxconn int) (*proxyProc, error) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		return nil, fmt.Errorf("haproxy is missing (the round-robin proxy of (11)): apt-get install haproxy, or scripts/install-deps.sh --test")
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global\n  maxconn %d\n  nbthread 1\n", maxconn)
	// Connections live for the whole run; a viewer's data flows one way.
	cfg.WriteString("defaults\n  mode tcp\n  timeout connect 10s\n  timeout client 1h\n  timeout server 1h\n")
	fmt.Fprintf(&cfg, "frontend viewers\n  bind %s\n  maxconn %d\n  default_backend pods\n", addr, maxconn)
	cfg.WriteString("backend pods\n  balance roundrobin\n")
	for i, u := range pods {
		fmt.Fprintf(&cfg, "  server pod%d %s\n", i+1, u.addr)
	}
	file, err := os.CreateTemp(b.tmp, "haproxy-*.cfg")
	if err != nil {
		return nil, err
	}
	file.WriteString(cfg.String())
	file.Close()
	cmd := exec.Command(bin, "-db", "-f", file.Name())
	cmd.Stderr = os.Stderr
	if err := startServing(cmd, addr, "haproxy", nil); err != nil {
		return nil, err
	}
	return &proxyProc{cmd: cmd, addr: addr}, nil
}
