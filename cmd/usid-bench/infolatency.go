package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/session"
)

// (2) Latency from an engine writing an info line to a WebSocket client
// reading it, with n sessions each analysing until stop on its own engine
// (instances = sessions). The engine stamps each line with its wall clock
// ("string t=<unix ns>") and numbers it (depth = nodes = 1, 2, ...); the
// client, on the same machine and clock, subtracts the stamp from the time
// it read the message, and counts the lines delivered against the numbers.
//
// What the row must show is usid's cost, so the harness keeps its own small
// and measured:
//
//   - The engines: by default (-engines hub) one hub process prints every
//     session's lines into the engines' stdout pipes; each of the n engine
//     processes only answers the USI conversation and sleeps in read(2)
//     (internal/fakeengine, mode stamp-hub). -engines process runs one
//     printing engine process per session instead (mode stamped-info), as
//     the tool did before: n Go runtimes waking 50 times a second each.
//   - The clients: plain sockets read by one epoll loop on one thread
//     (rawws_linux.go), in this process.
//   - Each run reports the CPU time of usid, of the engines (the hub plus
//     usid's children) and of the clients (this process) during the window,
//     from /proc, and the load average when it started.
//
// Lines expected: a session's engine printed last − first + 1 lines between
// the first and the last one its client read in the window. usid coalesces
// on purpose when a client would get more than InfoRate batches a second
// (burst InfoBurst; session.Config): at most rate × window + burst per
// session are expected. At 50 lines a second and the default 60 batches a
// second nothing should be coalesced; every line short of that was late
// enough to be merged into the next one.
func benchInfoLatency(ctx context.Context, b *bench) error {
	var verdicts []string
	for _, n := range b.infoSessions {
		runs, err := b.infoRuns(ctx, n)
		if err != nil {
			return fmt.Errorf("%d sessions: %w", n, err)
		}
		worstP99, worstShare := time.Duration(0), 2.0
		var p99s, perLine []string
		for i, r := range runs {
			b.rep.add(fmt.Sprintf("info latency, %d session(s), run %d/%d", n, i+1, len(runs)), r.String(), "", "")
			worstP99 = max(worstP99, r.p99)
			worstShare = min(worstShare, r.share())
			p99s = append(p99s, ms(r.p99))
			perLine = append(perLine, us(r.perLine()))
		}
		what := fmt.Sprintf("info latency, %d session(s), %d run(s)", n, len(runs))
		summary := fmt.Sprintf("p99 %s; worst p99 %s; lines delivered ≥ %.1f%% of expected in every run; usid CPU per delivered line %s",
			strings.Join(p99s, ", "), ms(worstP99), 100*worstShare, strings.Join(perLine, ", "))
		switch n {
		case b.infoTarget:
			ok := worstP99 <= 2*time.Millisecond
			b.rep.add(what, summary, "p99 ≤ 2 ms in every run", verdict(ok))
			verdicts = append(verdicts, verdict(ok))
		case b.infoTarget200:
			ok := worstP99 <= 10*time.Millisecond && worstShare >= .95
			b.rep.add(what, summary, "p99 ≤ 10 ms and lines ≥ 95% in every run", verdict(ok))
		default:
			b.rep.add(what, summary, "", "")
		}
	}
	engines := "one hub process printed every session's lines into the engines' pipes (mode " + fakeengine.StampHub + "; the engine processes only answer the USI conversation)"
	if b.engines == "process" {
		engines = "one printing engine process per session (mode " + fakeengine.StampedInfo + ")"
	}
	b.rep.note("(2) engines: %s, one info line every %v per session; %v measured after a %v warm-up, each run with fresh connections to the same usid; clients: one epoll loop on one thread in usid-bench. CPU: the share of the machine's %d cores each side used during the window (/proc/PID/stat), engines = the hub plus usid's children. Expected lines: what the engines printed between the first and last line each client read in the window, less usid's intended coalescing to %v batches a second (burst %d).",
		engines, b.stampInterval, b.infoWindow, b.infoWarm(), runtime.NumCPU(), infoRate, infoBurst)
	return nil
}

// The session package's defaults, which the benchmark configuration keeps.
var infoRate, infoBurst = func() (float64, int) {
	svc := session.NewService(session.Config{})
	return svc.InfoRate, svc.InfoBurst
}()

func (b *bench) infoWarm() time.Duration {
	if b.short {
		return 200 * time.Millisecond
	}
	return max(time.Second, b.infoWindow/5)
}

// infoRun is one measured window.
type infoRun struct {
	sessions            int
	window              time.Duration
	p50, p99, pmax      time.Duration
	delivered, printed  int
	expected            int
	usid, engines, bcpu time.Duration
	load                string
}

// share is the part of the expected lines that were delivered.
func (r *infoRun) share() float64 {
	if r.expected == 0 {
		return 0
	}
	return float64(r.delivered) / float64(r.expected)
}

func (r *infoRun) String() string {
	cpu := func(d time.Duration) string {
		return fmt.Sprintf("%.0f%%", 100*d.Seconds()/(r.window.Seconds()*float64(runtime.NumCPU())))
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s; lines %d of %d expected (%.1f%%; engines printed %d); CPU usid %s (%s per delivered line), engines %s, clients %s; load %s",
		ms(r.p50), ms(r.p99), ms(r.pmax), r.delivered, r.expected, 100*r.share(), r.printed,
		cpu(r.usid), us(r.perLine()), cpu(r.engines), cpu(r.bcpu), r.load)
}

// perLine is usid's CPU time in the window per line delivered to a client:
// what the per-session path costs (issue 38: ≤ 15 µs).
func (r *infoRun) perLine() time.Duration {
	if r.delivered == 0 {
		return 0
	}
	return r.usid / time.Duration(r.delivered)
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }

// infoRuns starts usid with n engines and measures b.infoRepeat windows.
func (b *bench) infoRuns(ctx context.Context, n int) (runs []*infoRun, err error) {
	// usid takes at most 256 instances of an engine: more sessions than
	// that use several engine entries of the same kind (stamp-1, stamp-2...).
	kinds := (n + 255) / 256
	mode := fakeengine.StampedInfo + "=" + b.stampInterval.String()
	var env []string
	var hub *exec.Cmd
	if b.engines != "process" {
		var sock string
		hub, sock, err = b.startHub()
		if err != nil {
			return nil, err
		}
		defer func() {
			hub.Process.Kill()
			hub.Wait()
		}()
		mode, env = fakeengine.StampHub, []string{fakeengine.EnvHub + "=" + sock}
	}
	var engines []engineConfig
	for k := range kinds {
		e := b.fakeEngine("stamp-"+strconv.Itoa(k+1), mode, n/kinds+btoi(k < n%kinds))
		e.Env = append(e.Env, env...)
		engines = append(engines, e)
	}
	u, err := b.startUsid(ctx, fmt.Sprintf("info-%d", n), newConfig(engines...))
	if err != nil {
		return nil, err
	}
	defer stopUsid(u, &err)
	for i := range b.infoRepeat {
		b.log.Printf("      %d sessions, run %d/%d", n, i+1, b.infoRepeat)
		if err := u.waitIdle(ctx, "", time.Minute); err != nil {
			return nil, err
		}
		r, err := b.infoRun(ctx, u, hub, n, kinds)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// startHub starts the stamp hub as a child process of this binary (so that
// its CPU time is its own), listening on a socket in the scratch directory.
func (b *bench) startHub() (*exec.Cmd, string, error) {
	sock := filepath.Join(b.tmp, fmt.Sprintf("hub-%d.sock", time.Now().UnixNano()))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, "", err
	}
	ln.SetUnlinkOnClose(false) // the child serves it
	defer ln.Close()           // the child has its own descriptor
	f, err := ln.File()
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	cmd := exec.Command(b.self)
	cmd.Env = append(os.Environ(), envHub+"="+b.stampInterval.String())
	cmd.ExtraFiles = []*os.File{f} // descriptor 3
	cmd.Stderr = os.Stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	return cmd, sock, nil
}

// envHub makes this binary the stamp hub (hubChild), with the interval.
const envHub = "USID_BENCH_HUB"

// hubChild serves the stamp hub on descriptor 3 until killed.
func hubChild(interval string) int {
	d, err := time.ParseDuration(interval)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usid-bench hub:", err)
		return 2
	}
	l, err := net.FileListener(os.NewFile(3, "hub"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "usid-bench hub:", err)
		return 2
	}
	if err := fakeengine.ServeHub(l.(*net.UnixListener), d); err != nil {
		fmt.Fprintln(os.Stderr, "usid-bench hub:", err)
		return 1
	}
	return 0
}

// sessionStats is what one client saw in the window.
type sessionStats struct {
	lat                   []time.Duration
	firstDepth, lastDepth int
	delivered             int
	started, stopped      bool
	warm                  bool // had its first line: the window may open
	ended                 bool
	err                   error
}

var (
	stampKey  = []byte(`"string":"t=`)
	depthKey  = []byte(`"depth":`)
	typeInfo  = []byte(`"type":"info"`)
	typeBest  = []byte(`"type":"bestmove"`)
	typeError = []byte(`"type":"error"`)
	stopStmp  = []byte(`{"type":"stop","id":"a1"}`)
)

// infoRun opens n sessions, each analysing until the window's end, and
// reads them all in one epoll loop. It looks for the stamp and the depth in
// the raw JSON rather than decoding every message, to keep the client's own
// CPU time small.
func (b *bench) infoRun(ctx context.Context, u *usidProc, hub *exec.Cmd, n, kinds int) (*infoRun, error) {
	conns, err := dialRawMany(u.addr, "/v1/ws", n, 32)
	if err != nil {
		return nil, err
	}
	defer closeRaw(conns)
	r := &infoRun{sessions: n, window: b.infoWindow, load: loadavg()}
	if f := strings.Fields(r.load); len(f) > 0 {
		r.load = f[0]
	}
	for i, c := range conns {
		analyze := fmt.Appendf(nil, `{"type":"analyze","id":"a1","engine":"stamp-%d","position":{"sfen":"startpos","moves":[]}}`, i%kinds+1)
		if err := c.send(1, analyze); err != nil {
			return nil, err
		}
	}
	// The window opens infoWarm after the requests, and not before every
	// session has had its first line: on a busy machine engines take a
	// while to be leased and start.
	warmUntil := time.Now().Add(b.infoWarm())
	never := warmUntil.Add(time.Hour)
	start, end := never, never
	stats := make([]sessionStats, n)
	ended, warmed := 0, 0

	// CPU time at the window's edges.
	type cpuAt struct{ usid, engines, self time.Duration }
	sample := func() cpuAt {
		var c cpuAt
		c.usid = cpuOf(u.pid())
		for _, t := range childrenCPU(u.pid()) {
			c.engines += t
		}
		if hub != nil {
			c.engines += cpuOf(hub.Process.Pid)
		}
		c.self = cpuOf(os.Getpid())
		return c
	}
	var cpu0, cpu1 cpuAt
	sampled := 0
	everyDelivered := func() bool {
		for i := range stats {
			if stats[i].delivered == 0 && !stats[i].ended {
				return false
			}
		}
		return true
	}

	onFrame := func(i int, now time.Time, op byte, msg []byte) {
		s := &stats[i]
		if s.ended {
			return
		}
		if op == 8 {
			s.ended, s.err = true, fmt.Errorf("connection closed before bestmove")
			ended++
			return
		}
		switch {
		case bytes.Contains(msg, typeError):
			s.ended, s.err = true, fmt.Errorf("usid: %s", msg)
			ended++
			return
		case bytes.Contains(msg, typeBest):
			s.ended = true
			ended++
			return
		case !bytes.Contains(msg, typeInfo):
			return
		case !s.warm:
			s.warm = true
			if warmed++; warmed == n {
				start = now
				if start.Before(warmUntil) {
					start = warmUntil
				}
				end = start.Add(b.infoWindow)
			}
			return
		case now.Before(start) || sampled == 2: // before or after the window
			return
		}
		stamp, ok1 := intAfter(msg, stampKey)
		depth, ok2 := intAfter(msg, depthKey)
		if !ok1 || !ok2 {
			s.ended, s.err = true, fmt.Errorf("info without stamp or depth: %s", msg)
			ended++
			return
		}
		s.lat = append(s.lat, now.Sub(time.Unix(0, int64(stamp))))
		if s.delivered == 0 {
			s.firstDepth = depth
		}
		s.lastDepth = depth
		s.delivered++
	}
	tick := func(now time.Time) {
		if sampled == 0 && !now.Before(start) {
			cpu0, sampled = sample(), 1
		}
		// The window closes once its time has passed and every session has
		// had a line in it: on a busy machine a session can go a short
		// window (-short: 300 ms) without one, which says nothing of usid.
		if sampled == 1 && !now.Before(end) && everyDelivered() {
			end = now
			r.window = end.Sub(start)
			cpu1, sampled = sample(), 2
			for i, c := range conns {
				if !stats[i].ended && !stats[i].stopped {
					stats[i].stopped = true
					c.send(1, stopStmp)
				}
			}
		}
	}
	if err := epollLoop(conns, warmUntil.Add(b.infoWindow+3*time.Minute), onFrame, tick, func() bool { return ended == n || ctx.Err() != nil }); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if sampled < 2 {
		return nil, fmt.Errorf("the sessions ended before the window did")
	}
	r.usid, r.engines, r.bcpu = cpu1.usid-cpu0.usid, cpu1.engines-cpu0.engines, cpu1.self-cpu0.self
	var lat []time.Duration
	maxPerSession := int(infoRate*r.window.Seconds()) + infoBurst
	for i := range stats {
		s := &stats[i]
		if s.err != nil {
			return nil, fmt.Errorf("session %d of %d: %w", i+1, n, s.err)
		}
		if s.delivered == 0 {
			return nil, fmt.Errorf("session %d of %d got no info line in the window", i+1, n)
		}
		lat = append(lat, s.lat...)
		printed := s.lastDepth - s.firstDepth + 1
		r.printed += printed
		r.expected += min(printed, maxPerSession)
		r.delivered += s.delivered
	}
	slices.Sort(lat)
	r.p50, r.p99, r.pmax = pct(lat, .5), pct(lat, .99), pct(lat, 1)
	return r, nil
}

// intAfter parses the decimal number right after key in msg.
func intAfter(msg, key []byte) (int, bool) {
	i := bytes.Index(msg, key)
	if i < 0 {
		return 0, false
	}
	d := msg[i+len(key):]
	j := 0
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	v, err := strconv.Atoi(string(d[:j]))
	return v, err == nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
