package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid/usi"
)

// (3) Session start: from WebSocket connect to the first info line with a
// score or pv, for usid with a warm pool against websocketd, which starts
// one engine process per connection. Both analyse outOfBook (from startpos
// gpsusi plays a book move without any info line).
func benchSessionStart(ctx context.Context, b *bench) (err error) {
	cfg := newConfig(b.fairyEngine(1), b.gpsEngine(1))
	if b.short {
		cfg = newConfig(b.fairyEngine(1))
	}
	u, err := b.startUsid(ctx, "start", cfg)
	if err != nil {
		return err
	}
	defer stopUsid(u, &err)
	engines := []struct {
		name, usid, path string
		options          map[string]string // as usid sets them
		runs             int
	}{
		{"fairy-stockfish", "fairy", b.fairy, map[string]string{"Hash": "64", "Threads": "1"}, b.startRuns},
		{"gpsusi", "gps", b.gps, map[string]string{"Thread": "1"}, max(1, b.startRuns/2)}, // about 2 s per websocketd start
	}
	if b.short {
		// gpsusi takes seconds to load, in usid's pool and under websocketd
		// alike; the same code path is proven with fairy-stockfish.
		engines = engines[:1]
		b.rep.note("(3) the short run measures fairy-stockfish only (gpsusi takes seconds to start).")
	}
	for _, e := range engines {
		b.log.Printf("      %s", e.name)
		var viaUsid, viaWsd []time.Duration
		for range e.runs {
			// A warm pool: the engine the last session released is reset.
			if err := u.waitIdle(ctx, e.usid, time.Minute); err != nil {
				return err
			}
			d, err := usidSessionStart(ctx, u.wsURL("/v1/ws"), e.usid)
			if err != nil {
				return fmt.Errorf("usid, %s: %w", e.name, err)
			}
			viaUsid = append(viaUsid, d)
		}
		// What no bridge can take away: the engine's own time from go to
		// its first scored line, warm, over its pipes.
		alone, err := b.firstInfoDirect(ctx, e.path, e.options, e.runs)
		if err != nil {
			return fmt.Errorf("%s alone: %w", e.name, err)
		}
		what := fmt.Sprintf("session start (connect → first info with score/pv), %s, %d runs", e.name, e.runs)
		res := fmt.Sprintf("usid p50 %s, p99 %s (the engine alone, go → first info: p50 %s)",
			ms(pct(viaUsid, .5)), ms(pct(viaUsid, .99)), ms(pct(alone, .5)))
		if b.websocketd == "" {
			b.rep.add(what, res+"; websocketd not installed: skipped", "≥ 10× faster than websocketd", "")
			continue
		}
		w, err := b.startWebsocketd(ctx, e.path)
		if err != nil {
			return err
		}
		for range e.runs {
			d, err := websocketdSessionStart(ctx, w.url)
			if err != nil {
				w.stop()
				return fmt.Errorf("websocketd, %s: %w", e.name, err)
			}
			viaWsd = append(viaWsd, d)
		}
		if err := w.stop(); err != nil {
			return err
		}
		speedup := float64(pct(viaWsd, .5)) / float64(pct(viaUsid, .5))
		res += fmt.Sprintf("; websocketd p50 %s, p99 %s; usid %.1f× faster (p50)", ms(pct(viaWsd, .5)), ms(pct(viaWsd, .99)), speedup)
		b.rep.add(what, res, "≥ 10× faster than websocketd", verdict(speedup >= 10))
	}
	b.rep.note("(3) usid: a warm pool (every instance idle before each connect), request `analyze` without limits. websocketd: `websocketd --port P <engine>`, a new engine process per connection; the client sends `usi`, waits for `usiok`, sends `isready`, waits for `readyok` (gpsusi ignores a `go` that arrives while it loads), then `position` and `go infinite`. Engines at their default options under websocketd.")
	return nil
}

// firstInfoDirect times go -> first info with a score or pv on one warm
// engine driven over its pipes, as usid's pool keeps it.
func (b *bench) firstInfoDirect(ctx context.Context, path string, options map[string]string, runs int) ([]time.Duration, error) {
	e, err := usi.Start(ctx, usi.Config{Path: path, ReadyOKTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	for name, v := range options {
		if err := e.SetOption(name, v); err != nil {
			return nil, err
		}
	}
	if err := e.IsReady(ctx); err != nil {
		return nil, err
	}
	var took []time.Duration
	for range runs {
		start := time.Now()
		s, err := e.Go(ctx, usi.Position{SFEN: outOfBook}, usi.Go{Infinite: true})
		if err != nil {
			return nil, err
		}
		for {
			in, ok := s.Next(ctx)
			if !ok {
				_, err := s.Wait(ctx)
				return nil, fmt.Errorf("search ended before a scored info: %v", err)
			}
			if in.Has(usi.InfoScore) || in.Has(usi.InfoPV) {
				took = append(took, time.Since(start))
				break
			}
		}
		s.Stop()
		if _, err := s.Wait(ctx); err != nil {
			return nil, err
		}
	}
	return took, nil
}

// usidSessionStart connects and analyses until the first info with a score
// or pv, then disconnects (usid stops the search and resets the engine).
func usidSessionStart(ctx context.Context, url, engine string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"type": "analyze", "id": "s1", "engine": engine,
		"position": position{SFEN: outOfBook, Moves: []string{}}})
	start := time.Now()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return 0, err
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, req); err != nil {
		return 0, err
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return 0, err
		}
		var ev struct {
			Type    string          `json:"type"`
			Score   json.RawMessage `json:"score"`
			PV      []string        `json:"pv"`
			Message string          `json:"message"`
		}
		if err := json.Unmarshal(msg, &ev); err != nil {
			return 0, err
		}
		switch {
		case ev.Type == "info" && (ev.Score != nil || len(ev.PV) > 0):
			took := time.Since(start)
			c.Close(websocket.StatusNormalClosure, "")
			return took, nil
		case ev.Type == "error" || ev.Type == "bestmove":
			return 0, fmt.Errorf("before any info: %s", msg)
		}
	}
}

// websocketdSessionStart speaks USI through websocketd until the first info
// line with a score or pv, then quits the engine and waits for websocketd
// to close the connection (the engine process has exited), so that a dying
// engine does not compete with the next run.
func websocketdSessionStart(ctx context.Context, url string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return 0, err
	}
	defer c.CloseNow()
	send := func(lines ...string) error {
		for _, l := range lines {
			if err := c.Write(ctx, websocket.MessageText, []byte(l)); err != nil {
				return err
			}
		}
		return nil
	}
	// until reads engine lines until one satisfies ok.
	until := func(ok func(string) bool) error {
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return err
			}
			if l := strings.TrimSpace(string(msg)); ok(l) {
				return nil
			} else if strings.HasPrefix(l, "bestmove") {
				return fmt.Errorf("bestmove before any info: %s", l)
			}
		}
	}
	is := func(w string) func(string) bool { return func(l string) bool { return l == w } }
	scored := func(l string) bool {
		return strings.HasPrefix(l, "info ") && (strings.Contains(l, " score ") || strings.Contains(l, " pv "))
	}
	if err := send("usi"); err != nil {
		return 0, err
	}
	if err := until(is("usiok")); err != nil {
		return 0, fmt.Errorf("waiting for usiok: %w", err)
	}
	if err := send("isready"); err != nil {
		return 0, err
	}
	if err := until(is("readyok")); err != nil {
		return 0, fmt.Errorf("waiting for readyok: %w", err)
	}
	if err := send("position sfen "+outOfBook, "go infinite"); err != nil {
		return 0, err
	}
	if err := until(scored); err != nil {
		return 0, fmt.Errorf("waiting for info: %w", err)
	}
	took := time.Since(start)
	send("stop", "quit")
	for {
		if _, _, err := c.Read(ctx); err != nil {
			break // closed: the engine has exited
		}
	}
	return took, nil
}

// websocketd is a running websocketd serving one engine.
type websocketd struct {
	cmd    *exec.Cmd
	url    string
	exited chan error
}

// startWebsocketd runs websocketd for engine on a free port of 127.0.0.1,
// in its own process group (with the engines it starts), and waits until
// it accepts connections.
func (b *bench) startWebsocketd(ctx context.Context, engine string) (*websocketd, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.websocketd, "--port", strconv.Itoa(port), "--address", "127.0.0.1", "--loglevel", "error", engine)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &websocketd{cmd: cmd, url: fmt.Sprintf("ws://127.0.0.1:%d/", port), exited: make(chan error, 1)}
	go func() { w.exited <- cmd.Wait() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return w, nil
		}
		select {
		case err := <-w.exited:
			return nil, fmt.Errorf("websocketd exited: %v", err)
		case <-ctx.Done():
			w.stop()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, fmt.Errorf("websocketd did not listen on %s", addr)
		}
	}
}

// stop ends websocketd and anything left in its process group.
func (w *websocketd) stop() error {
	pgid := w.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-w.exited
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // engines that outlived it, if any
	return nil
}

// freePort asks the kernel for a port that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
