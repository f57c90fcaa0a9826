package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.yaml.in/yaml/v3"

	"github.com/usid/usid"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/server"
	"github.com/usid/usid/session"
	"github.com/usid/usid/web"
)

// serveChild is usid serving HTTP, as `usid --addr A --config F` does, for
// the settings in usidConfig: the same packages wired the same way as
// cmd/usid's Main.Run, so that the tool needs no separate build (go test
// runs it in CI). Run with -usid to measure the real binary instead.
func serveChild(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("usid", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("config", "", "configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
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
	// The engines in pool's own type; the rest as the tool wrote it.
	var c usidConfig
	var e struct {
		Engines []pool.EngineConfig `yaml:"engines"`
	}
	if err := errors.Join(yaml.Unmarshal(raw, &c), yaml.Unmarshal(raw, &e)); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p, err := pool.New(e.Engines, pool.Options{Logger: log.With("component", "pool"), Registerer: reg})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.Server.ShutdownGrace)
		defer cancel()
		p.Close(ctx)
	}()
	svc := session.NewService(session.Config{Pool: p, QueueTimeout: c.Session.QueueTimeout,
		AcquireTimeout: c.Session.AcquireTimeout, Logger: log.With("component", "session")})
	srv := server.New(server.Config{Service: svc, Pool: p, Gatherer: reg, Registerer: reg,
		Web: web.Handler(), OpenAPI: usid.OpenAPI, Logger: log.With("component", "server"),
		Access: &server.Access{Anonymous: true, MaxSessions: c.Access.MaxSessions, AnonymousQuota: c.Access.AnonymousQuota}})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("usid listening", "addr", ln.Addr().String(), "engines", p.Engines())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	// Drain as usid does: sessions end, then the HTTP server, then the pool (deferred).
	sctx, cancel := context.WithTimeout(context.Background(), c.Server.ShutdownGrace)
	defer cancel()
	srv.Drain(sctx)
	err = hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
	}
	if e := <-served; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}
