package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/usid/usid/internal/app"
)

// serveChild is usid serving HTTP, as `usid --addr A --config F` does, for
// the settings in usidConfig: internal/app, the wiring the usid command
// runs, so that the tool needs no separate build (go test runs it in CI).
// Run with -usid to measure the real binary instead.
func serveChild(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("usid", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("config", "", "configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if prefix := os.Getenv(envProfile); prefix != "" {
		stop, err := startProfiles(prefix, os.Getenv(envTrace) != "")
		if err != nil {
			log.Error("profiles", "err", err)
			return 1
		}
		defer stop()
	}
	if err := serveUsid(*addr, *file, log); err != nil {
		log.Error("usid", "err", err)
		return 1
	}
	return 0
}

func serveUsid(addr, file string, log *slog.Logger) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	cfg, err := app.ParseConfig(raw)
	if err != nil {
		return err
	}
	m := &app.Main{Config: cfg, Addr: addr, Logger: log}
	if err := m.Run(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-m.Served():
		log.Error("server failed", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace)
	defer cancel()
	return m.Close(sctx)
}

// envProfile makes the usid child profile itself: a file name prefix
// (-profile DIR gives DIR/<config name>). envTrace adds a runtime/trace.
const (
	envProfile = "USID_BENCH_PROFILE"
	envTrace   = "USID_BENCH_TRACE"
)

// startProfiles turns on the CPU profile (and the trace) for the child's
// whole life, and samples mutex contention and blocking; stop writes
// PREFIX.cpu.pprof, .mutex.pprof, .block.pprof, .heap.pprof (and .trace).
// Analyse with `go tool pprof -top BINARY PREFIX.cpu.pprof`.
func startProfiles(prefix string, withTrace bool) (stop func(), err error) {
	cpu, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, err
	}
	runtime.SetMutexProfileFraction(10)
	runtime.SetBlockProfileRate(int(100 * time.Microsecond)) // blocking of 100µs and more, sampled
	var tr *os.File
	if withTrace {
		if tr, err = os.Create(prefix + ".trace"); err != nil {
			return nil, err
		}
		if err := trace.Start(tr); err != nil {
			return nil, err
		}
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		if tr != nil {
			trace.Stop()
			tr.Close()
		}
		for _, name := range []string{"mutex", "block", "heap"} {
			if f, err := os.Create(prefix + "." + name + ".pprof"); err == nil {
				pprof.Lookup(name).WriteTo(f, 0)
				f.Close()
			}
		}
	}, nil
}
