// Package apptest runs the whole edihub application in-process for tests,
// as `edihub serve` runs it (app.New, then Run): embedded NATS on a free
// port, HTTP on a free port, data in t.TempDir(), without the sandbox
// worker (a test starts forensics itself if it needs it). No mocks.
//
//	a := apptest.Run(t, nil, nil)
//	nc, _ := nats.Connect(a.NATSURL()) // publish to edi.ingest.ACME ...
//
// hub/hubtest stays the kit of the rooms below app (their tests cannot
// import app: it imports them).
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Run starts the application with mod's changes to the test configuration
// and env (nil: defaults, the log at error level into the test log, no
// environment variables) and stops it when the test ends. The hub is
// ready when it returns.
func Run(tb testing.TB, mod func(*app.Config), env *app.Env) *app.App {
	tb.Helper()
	cfg := app.DefaultConfig()
	cfg.DataDir = tb.TempDir()
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = "127.0.0.1:0"
	off := false
	cfg.Sandbox.Enabled = &off
	if mod != nil {
		mod(&cfg)
	}
	var e app.Env
	if env != nil {
		e = *env
	}
	if e.Logger == nil {
		log := zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.ErrorLevel)
		e.Logger = &log
	}
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.OnFatal == nil {
		e.OnFatal = func(reason string) { tb.Errorf("apptest: the hub asked for a restart: %s", reason) }
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, &cfg, &e)
	if err != nil {
		tb.Fatalf("apptest: %v", err)
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(rctx) }()
	tb.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("apptest: app stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Errorf("apptest: app did not stop within 30s")
		}
	})
	jetstreamtest.Eventually(tb, 10*time.Second, a.Hub().Ready, "apptest: hub not ready")
	return a
}
