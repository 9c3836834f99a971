package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"interviewd/jobs"
	"interviewd/kv"
	"interviewd/plugins"
	"interviewd/server"
)

// shutdownGrace bounds how long in-flight requests may finish after a stop signal.
const shutdownGrace = 10 * time.Second

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) (string, bool)) error {
	fs := newFlagSet("serve", env)
	addr := fs.str("addr", ":8080", "listen address")
	data := fs.str("data", "./data", "data folder")
	baseURL := fs.str("base-url", "http://localhost:8080", "public base URL every returned link derives from")
	level := fs.str("log-level", "info", "log level: debug, info, warn, error")
	format := fs.str("log-format", "json", "log format: json or console")
	limitsFlag := fs.str("rate-limits", "default", "default | off | read=120,write=20,org_read=600,org_write=60")
	modelURL := fs.str("model-url", "", "OpenAI-compatible endpoint (e.g. http://host/v1); empty uses the built-in engine")
	modelKey := fs.str("model-key", "", "API key for --model-url")
	modelName := fs.str("model", "", "model name for --model-url")
	if err := fs.parse(args); err != nil {
		return err
	}
	limits, err := server.ParseRateLimits(*limitsFlag)
	if err != nil {
		return fmt.Errorf("--rate-limits: %w", err)
	}
	engine, err := newModerator(*modelURL, *modelKey, *modelName)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *level, *format)
	if err != nil {
		return err
	}
	db, err := kv.Open(*data, kv.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		return err
	}
	defer db.Close()
	if empty, err := db.Empty(ctx); err == nil && empty {
		log.Info().Msgf("no organisation yet: create one with `interviewd setup --data %s --org NAME --email EMAIL`, then a key with `interviewd keys create`", *data)
	}
	host, err := plugins.NewHost(ctx, plugins.Config{CacheDir: filepath.Join(*data, "cache")})
	if err != nil {
		return fmt.Errorf("plugin host: %w", err)
	}
	// Plugins compile on first use (from DATA/cache when it holds them), so an idle
	// server stays small, and Close cancels a compile in flight rather than wait.
	defer host.Close(context.Background())
	runner := jobs.NewRunner(jobs.Config{DB: db, Moderator: engine, Log: log, Plugins: host})
	if err := runner.Start(ctx); err != nil {
		return err
	}
	srv := server.New(server.Config{DB: db, Jobs: runner, Log: log, BaseURL: *baseURL, AccessLog: true, RateLimits: &limits})
	go srv.Maintain(ctx)
	go runner.Maintain(ctx)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	log.Info().Str("addr", ln.Addr().String()).Str("base_url", *baseURL).Str("data", *data).Msg("listening")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	<-served
	if err := runner.Close(sctx); err != nil {
		log.Warn().Err(err).Msg("jobs still running at shutdown were left for the next start")
	}
	log.Info().Msg("stopped")
	return nil
}

func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, NoColor: w != os.Stderr, TimeFormat: time.RFC3339}
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format %q: want json or console", format)
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// newModerator picks the engine: an OpenAI-compatible endpoint when a URL is set,
// otherwise the built-in offline engine.
func newModerator(url, key, model string) (jobs.Moderator, error) {
	if url == "" {
		return jobs.NewBuiltin(), nil
	}
	m, err := jobs.NewOpenAI(jobs.OpenAIConfig{URL: url, Key: key, Model: model})
	if err != nil {
		return nil, fmt.Errorf("--model-url: %w", err)
	}
	return m, nil
}
