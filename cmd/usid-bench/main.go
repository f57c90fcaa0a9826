// Command usid-bench measures usid side by side with the engines driven
// directly and with websocketd, in one run on one machine, and prints a
// markdown table with the project's targets (issue 10, BENCHMARKS.md):
//
//  1. REST /v1/analyze with small limits against the same engine over its pipes
//  2. engine info line -> WebSocket client latency at 1, 50, 200 and 500
//     sessions, five windows each: lines delivered against expected, and the
//     CPU share of usid, the engines and the clients (infolatency.go)
//  3. session start (connect -> first info) against websocketd
//  4. searches per second with k = 1, 2 engines against the engines directly
//  5. memory per idle WebSocket connection at 1k, 5k and 10k connections
//  6. /v1/validate requests per second and the in-process validation rate
//  7. whole-game analysis: positions per second through a game analysis job
//     against REST /v1/analyze, and an interactive first info during one
//  8. games sharing an opening analysed with the evaluation cache, cold and
//     warm: positions per second, searches saved (games.go)
//  9. fair sharing of one engine: a light client's wait among four heavy
//     clients (fair.go)
//  10. REST /v1/analyze on stockfish (UCI) against stockfish over its pipes
//  11. a broadcast: N viewers of one search on one usid, and on three usid
//     sharing one redis-server behind a round-robin TCP proxy: lines
//     delivered against expected, latency engine line -> viewer, usid CPU per
//     delivered message, RSS per viewer (broadcast.go)
//
// usage:
//
//	go run ./cmd/usid-bench [-short] [-out FILE] [-usid BIN] [-run 1,2,...]
//	    [-sessions 200,500] [-repeat 5] [-engines hub|process] [-profile DIR [-trace]]
//
// usid runs as a child process (so that its memory is its own), on
// 127.0.0.1 with a configuration file the tool writes in usid's format. By
// default the child is this binary running usid's packages wired as
// cmd/usid wires them; -usid measures a built usid binary instead, and
// -profile DIR has that child write CPU, mutex, block and heap profiles (and
// with -trace a runtime/trace) into DIR. The fake engines of (2) are this
// binary too (internal/fakeengine, modes stamp-hub and stamped-info), and so
// is their stamp hub.
// Linux only: it reads /proc and raises RLIMIT_NOFILE.
//
// -short is the CI smoke test (go test ./cmd/usid-bench runs it): tiny
// counts, 100 idle connections, fairy-stockfish only in (3), and websocketd
// skipped (and said so) if it is not installed. Its numbers mean nothing.
// A full run takes about two minutes and needs fairy-stockfish, gpsusi and
// websocketd (Debian packages fairy-stockfish, gpsshogi, websocketd).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/usid/usid/internal/fakeengine"
)

func main() {
	// This binary is also the fake engine and the usid child: see childMain.
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// childMain runs this process as one of the children the tool starts, when
// the environment asks for it: a fake engine (internal/fakeengine) or a usid
// server (envServe). ok is false for a normal start.
func childMain() (code int, ok bool) {
	fakeengine.RunIfRequested() // exits when it is a fake engine
	if path := os.Getenv(envFloor); path != "" {
		return floorChild(path, os.Stderr), true
	}
	if spec := os.Getenv(envFanFloor); spec != "" {
		return fanFloorChild(spec), true
	}
	if iv := os.Getenv(envHub); iv != "" {
		return hubChild(iv), true
	}
	if os.Getenv(envServe) != "" {
		os.Unsetenv(envServe) // not for the engines it starts
		return serveChild(os.Args[1:], os.Stderr), true
	}
	return 0, false
}

// plan is how much each measurement does: the full run or -short.
type plan struct {
	restRuns       int           // (1) searches per limit on each side
	infoSessions   []int         // (2) concurrent sessions, one usid each
	infoRepeat     int           // (2) measured windows per session count
	infoTarget     int           // (2) the session count the 2 ms p99 target applies to
	infoTarget200  int           // (2) the session count the 10 ms p99 and 95% lines target applies to
	infoWindow     time.Duration // (2) measured time per run
	stampInterval  time.Duration // (2) the fake engine's info interval
	startRuns      int           // (3) session starts per engine and bridge (gpsusi: half)
	tputWindow     time.Duration // (4) time per engine count and side
	idleConns      []int         // (5) idle connection counts, reached in turn
	idleTarget     int           // (5) the count the memory target applies to
	validateWindow time.Duration // (6) time per rate
	bcViewers      []int         // (11) viewers of one broadcast
	bcTarget       int           // (11) the viewer count the targets apply to
	bcInterval     time.Duration // (11) the fake engine's info interval
	bcWindow       time.Duration // (11) measured time per run
}

var (
	fullPlan = plan{
		restRuns: 200, infoSessions: []int{1, 50, 200, 500}, infoRepeat: 5, infoTarget: 50, infoTarget200: 200, infoWindow: 5 * time.Second,
		// 50 lines a second per session: below usid's per-client info rate
		// (60 batches/s), so no line waits for the rate limiter.
		stampInterval: 20 * time.Millisecond,
		startRuns:     20, tputWindow: 5 * time.Second,
		idleConns: []int{1000, 5000, 10000}, idleTarget: 10000, validateWindow: 3 * time.Second,
		bcViewers: []int{1000, 10000}, bcTarget: 10000, bcInterval: 100 * time.Millisecond, bcWindow: 5 * time.Second,
	}
	shortPlan = plan{
		restRuns: 5, infoSessions: []int{1, 4}, infoRepeat: 2, infoTarget: 4, infoTarget200: -1, infoWindow: 300 * time.Millisecond,
		stampInterval: 20 * time.Millisecond,
		startRuns:     2, tputWindow: 300 * time.Millisecond,
		idleConns: []int{100}, idleTarget: 100, validateWindow: 300 * time.Millisecond,
		bcViewers: []int{30}, bcTarget: 30, bcInterval: 50 * time.Millisecond, bcWindow: 500 * time.Millisecond,
	}
)

// bench is one run of the tool.
type bench struct {
	plan
	short      bool
	self       string // this executable: fake engine and default usid child
	usidBin    string // -usid: a usid binary to measure instead
	fairy, gps string
	stockfish  string // (10) a UCI engine
	websocketd string // "" when missing (allowed only with -short)
	engines    string // (2) "hub" or "process": how the fake engines print
	profile    string // -profile: where the usid child writes its profiles
	trace      bool   // -trace: the child writes a runtime/trace too
	tmp        string
	log        *log.Logger
	// floorPerMsg is (11)'s floor: CPU per delivered message by viewer count.
	floorPerMsg map[int]time.Duration
	http        *http.Client
	rep         report
}

// measurement is one of the six; run adds rows to b.rep.
type measurement struct {
	title string
	run   func(ctx context.Context, b *bench) error
}

var measurements = []measurement{
	{"REST /v1/analyze vs the engine over its pipes", benchREST},
	{"info line latency, engine to WebSocket client", benchInfoLatency},
	{"session start, usid vs websocketd", benchSessionStart},
	{"throughput with k engines", benchThroughput},
	{"memory per idle WebSocket connection", benchIdleMemory},
	{"position validation rate", benchValidate},
	{"whole-game analysis", benchGames},
	{"whole-game analysis with the evaluation cache, cold and warm", benchGameCache},
	{"fair sharing: a light client among heavy ones on one engine", benchFair},
	{"REST /v1/analyze on stockfish (UCI) vs stockfish over its pipes", benchRESTChess},
	{"broadcast: one search, many viewers, on one usid and on three behind a proxy", benchBroadcast},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("usid-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "quick smoke run for CI (tiny counts; numbers mean nothing)")
	out := fs.String("out", "", "also write the report as a markdown file (BENCHMARKS.md's shape)")
	usidBin := fs.String("usid", "", "usid binary to measure (default: usid's packages in a child process of this binary)")
	only := fs.String("run", "", "measurements to run, as in 1,3,5 (default: all)")
	fairy := fs.String("fairy", "/usr/games/fairy-stockfish", "fairy-stockfish binary")
	gps := fs.String("gps", "/usr/games/gpsusi", "gpsusi binary")
	stockfish := fs.String("stockfish", "/usr/games/stockfish", "stockfish binary (a UCI chess engine)")
	wsd := fs.String("websocketd", "websocketd", "websocketd binary (Debian package websocketd)")
	repeat := fs.Int("repeat", 0, "(2) measured windows per session count (default 5; -short 2)")
	sessions := fs.String("sessions", "", "(2) session counts, as in 200,500 (default 1,50,200,500)")
	engines := fs.String("engines", "hub", "(2) fake engines: hub (one process prints every session's lines) or process (one printing process per session)")
	profile := fs.String("profile", "", "directory for the usid child's CPU, mutex, block and heap profiles (not with -usid)")
	trace := fs.Bool("trace", false, "with -profile: a runtime/trace of the usid child too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	b := &bench{plan: fullPlan, short: *short, fairy: *fairy, gps: *gps, stockfish: *stockfish, engines: *engines, trace: *trace,
		log: log.New(stderr, "usid-bench: ", log.Ltime|log.Lmsgprefix)}
	if *short {
		b.plan = shortPlan
	}
	if *repeat > 0 {
		b.infoRepeat = *repeat
	}
	if *sessions != "" {
		b.infoSessions = nil
		for f := range strings.SplitSeq(*sessions, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "usid-bench: -sessions: %q: want positive numbers\n", f)
				return 2
			}
			b.infoSessions = append(b.infoSessions, n)
		}
	}
	if b.engines != "hub" && b.engines != "process" {
		fmt.Fprintln(stderr, "usid-bench: -engines: want hub or process")
		return 2
	}
	if *profile != "" {
		if *usidBin != "" {
			fmt.Fprintln(stderr, "usid-bench: -profile profiles the usid child of this binary: leave out -usid")
			return 2
		}
		abs, err := filepath.Abs(*profile)
		if err == nil {
			b.profile, err = abs, os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			fmt.Fprintln(stderr, "usid-bench: -profile:", err)
			return 2
		}
	}
	selected, err := parseRun(*only)
	if err != nil {
		fmt.Fprintln(stderr, "usid-bench: -run:", err)
		return 2
	}
	if err := b.setup(*usidBin, *wsd); err != nil {
		fmt.Fprintln(stderr, "usid-bench:", err)
		return 1
	}
	defer os.RemoveAll(b.tmp)
	defer b.http.CloseIdleConnections()

	b.rep.started = time.Now()
	b.rep.load[0] = loadavg()
	b.rep.command = "usid-bench " + strings.Join(args, " ")
	failed := false
	for i, m := range measurements {
		if !selected(i + 1) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		b.log.Printf("[%d/%d] %s", i+1, len(measurements), m.title)
		b.rep.section = strconv.Itoa(i + 1)
		if err := m.run(ctx, b); err != nil {
			failed = true
			b.log.Printf("[%d/%d] failed: %v", i+1, len(measurements), err)
			b.rep.add(m.title, "ERROR: "+oneLine(err.Error()), "", "")
		}
	}
	b.rep.took = time.Since(b.rep.started)
	b.rep.load[1] = loadavg()
	md := b.rep.markdown(b)
	fmt.Fprint(stdout, md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fmt.Fprintln(stderr, "usid-bench:", err)
			return 1
		}
	}
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

// setup finds the binaries and makes the scratch directory.
func (b *bench) setup(usidBin, wsd string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b.self = self
	for _, p := range []string{b.fairy, b.gps} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w (apt-get install fairy-stockfish gpsshogi)", err)
		}
	}
	if usidBin != "" {
		if b.usidBin, err = filepath.Abs(usidBin); err != nil {
			return err
		}
	}
	if p, err := lookPath(wsd); err == nil {
		b.websocketd = p
	} else if !b.short {
		return fmt.Errorf("websocketd not found (apt-get install websocketd); only -short may skip it: %w", err)
	} else {
		b.rep.note("websocketd is not installed: the short run skipped the websocketd side of (3).")
	}
	if b.tmp, err = os.MkdirTemp("", "usid-bench-"); err != nil {
		return err
	}
	b.http = &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}}
	return nil
}

// parseRun reads -run: a comma-separated list of measurement numbers.
func parseRun(s string) (func(int) bool, error) {
	if s == "" {
		return func(int) bool { return true }, nil
	}
	var want []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(measurements) {
			return nil, fmt.Errorf("%q: want numbers 1 to %d", f, len(measurements))
		}
		want = append(want, n)
	}
	return func(i int) bool { return slices.Contains(want, i) }, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// machine describes where the numbers come from.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(string(b), "MemTotal: %d kB", &kb)
		mem = fmt.Sprintf(", %.0f GB RAM", float64(kb)/(1<<20))
	}
	return fmt.Sprintf("%d cores (%s)%s, %s/%s, %s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
