package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/app"
)

func runServe(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("usid", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "listen address (default: the config's listen, else :8080)")
	configPath := fs.String("config", "", "configuration file, laid over the built-in usid.yaml")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	layers := [][]byte{usid.DefaultConfig}
	if *configPath != "" {
		b, err := os.ReadFile(*configPath)
		if err != nil {
			log.Error("reading config", "err", err)
			return 1
		}
		layers = append(layers, b)
	}
	cfg, err := app.ParseConfig(layers...)
	if err != nil {
		log.Error("bad config", "err", err)
		return 1
	}
	m := &app.Main{Config: cfg, Addr: *addr, Logger: log}
	if err := m.Run(); err != nil {
		log.Error("starting", "err", err)
		return 1
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down", "grace", cfg.Server.ShutdownGrace)
	case err := <-m.Served():
		log.Error("server failed", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace)
	defer cancel()
	if err := m.Close(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	log.Info("stopped")
	return 0
}
