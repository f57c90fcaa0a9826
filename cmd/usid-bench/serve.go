package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

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
