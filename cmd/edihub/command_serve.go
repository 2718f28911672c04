package main

import (
	"context"
	"errors"
	"flag"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/app"
)

func init() {
	register(command{name: "serve", summary: "run the hub (embedded NATS, data in ./data)", run: runServe})
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "[flags]")
	configPath := fs.String("config", "", "YAML config file (see configs/edihub.yaml)")
	dataDir := fs.String("data", "", "data folder (default ./data)")
	listen := fs.String("listen", "", "embedded NATS listen address (default 127.0.0.1:4222)")
	httpAddr := fs.String("http", "", "HTTP address for /metrics, /healthz, /readyz (default 127.0.0.1:8080)")
	natsURL := fs.String("nats-url", "", "use this external NATS server or cluster instead of the embedded one")
	drill := fs.Bool("drill", false, "enable the drill stage (x-drill: panic|hang|exit|error); never in production")
	logLevel := fs.String("log-level", "", "trace, debug, info, warn, error (default info)")
	var auth authFlags // overrides nats.creds, nkey, user, password_file, tls
	auth.register(fs, e)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := app.LoadConfig(*configPath)
	if err != nil {
		return usageErr("%v", err)
	}
	applyServeFlags(cfg, fs, *dataDir, *listen, *httpAddr, *natsURL, *logLevel, *drill)
	applyAuthFlags(&cfg.NATS, fs, &auth)
	if cfg.Bridge.Enabled() {
		// SASL secrets may come from the environment, as for `edihub bridge`.
		cfg.Bridge.ApplyEnv(e.getenv)
	}
	log, err := newLogger(e.stderr, cfg.Log.Level, cfg.Log.Format)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := cfg.Complete(); err != nil {
		return usageErr("%v", err)
	}
	log.Info().Str("component", "serve").Str("runtime", cfg.Runtime.Apply(e.getenv)).Msg("garbage collector set")
	return serve(ctx, cfg, log)
}

func applyServeFlags(cfg *app.Config, fs *flag.FlagSet, dataDir, listen, httpAddr, natsURL, logLevel string, drill bool) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["data"] {
		cfg.DataDir = dataDir
	}
	if set["listen"] {
		cfg.NATS.Listen = listen
	}
	if set["http"] {
		cfg.HTTP.Listen = httpAddr
	}
	if set["nats-url"] {
		cfg.NATS.URL = natsURL
	}
	if set["log-level"] {
		cfg.Log.Level = logLevel
	}
	if drill {
		cfg.Hub.Drill = true
	}
}

// serve runs the application until ctx is done; its errors get the
// CLI's exit codes.
// A store that cannot be used at start is waited for (serve_backoff.go).
func serve(ctx context.Context, cfg *app.Config, log zerolog.Logger) error {
	started := false
	err := serveWithStoreBackoff(ctx, log, func(ctx context.Context) error {
		a, err := app.New(ctx, cfg, &app.Env{Logger: &log})
		if err != nil {
			return err
		}
		started = true
		return a.Run(ctx)
	})
	switch {
	case err == nil:
		return nil
	case !started:
		return appErr(err)
	}
	return failedErr("%v", err)
}

// appErr maps an error of app.New to the exit codes scripts rely on.
func appErr(err error) error {
	switch {
	case errors.Is(err, app.ErrConfig):
		return usageErr("%v", err)
	case errors.Is(err, app.ErrUnreachable):
		return unreachableErr(err)
	}
	return failedErr("%v", err)
}
