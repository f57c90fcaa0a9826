package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/usid/usid/usi"
)

// The floor: the least any HTTP bridge in front of an engine can cost. A
// child process (this binary, envFloor naming the engine) that holds one
// engine and answers POST /v1/analyze (usid's body, bestmove only) with
// nothing between the request and the engine: no validation, pool, queue,
// budget or cache. Beside usid and the engine driven directly, it splits
// REST's overhead into what the extra process costs on this machine (the
// request and the answer crossing loopback, two processes woken) and what
// usid itself adds.

const envFloor = "USID_BENCH_FLOOR"

// floorChild serves the floor bridge for the engine at path until killed.
func floorChild(path string, stderr io.Writer) int {
	ctx := context.Background()
	e, err := usi.Start(ctx, usi.Config{Path: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		err = prepareDirect(ctx, e)
	}
	if err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "floor:", err)
		return 1
	}
	fmt.Fprintf(stderr, "floor listening addr=%s\n", ln.Addr())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Position position `json:"position"`
			Limits   struct {
				Nodes    int64 `json:"nodes"`
				MoveTime int   `json:"movetime_ms"`
			} `json:"limits"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g := usi.Go{Nodes: req.Limits.Nodes, MoveTime: time.Duration(req.Limits.MoveTime) * time.Millisecond}
		s, err := e.Go(r.Context(), req.Position.usi(), g)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		res, err := s.Wait(r.Context())
		if err != nil || res.BestMove == nil {
			http.Error(w, fmt.Sprint("no bestmove: ", err), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"bestmove": res.BestMove.String()})
	})
	// SIGTERM (stop) ends the engine with the bridge: no orphan left.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go http.Serve(ln, h)
	<-term
	ln.Close()
	e.Close()
	return 0
}

// floorProc is a running floor child.
type floorProc struct {
	cmd  *exec.Cmd
	addr string
}

// startFloor starts the floor bridge for the engine at path and returns once
// it listens (its engine ready).
func (b *bench) startFloor(ctx context.Context, path string) (*floorProc, error) {
	cmd := exec.Command(b.self)
	cmd.Env = append(os.Environ(), envFloor+"="+path)
	dieWithParent(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var said []string
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "floor listening addr="); ok {
				addrc <- a
				io.Copy(io.Discard, stderr)
				return
			}
			said = append(said, sc.Text())
		}
		addrc <- "error: " + strings.Join(said, "; ")
	}()
	f := &floorProc{cmd: cmd}
	select {
	case a := <-addrc:
		if strings.HasPrefix(a, "error: ") {
			f.stop()
			return nil, fmt.Errorf("the floor bridge did not start: %s", a)
		}
		f.addr = a
		return f, nil
	case <-ctx.Done():
		f.stop()
		return nil, ctx.Err()
	}
}

func (f *floorProc) url(path string) string { return "http://" + f.addr + path }

// stop ends the bridge and its engine (SIGTERM; SIGKILL after 10 s).
func (f *floorProc) stop() {
	f.cmd.Process.Signal(syscall.SIGTERM)
	t := time.AfterFunc(10*time.Second, func() { f.cmd.Process.Kill() })
	f.cmd.Wait()
	t.Stop()
}
