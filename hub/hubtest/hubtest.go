package hubtest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
)

// Options change the hub Run starts; nil means defaults.
type Options struct {
	// Config is the hub's configuration (nil: defaults).
	Config *hub.Config
	// Stages default to the built-in parse stage without a ledger.
	Stages []hub.Stage
	// URL runs the hub on an existing server; empty: a new one.
	URL string
	// Logger receives the hub's log (default: the test log at warn level).
	Logger *zerolog.Logger
	// Keyring signs the hub's audit events and copies (nil: unsigned).
	Keyring *audit.Keyring
}

// Env is a running hub and a client connection to its server.
type Env struct {
	URL      string
	NC       *nats.Conn
	JS       js.JetStream
	Hub      *hub.Hub
	Registry *prometheus.Registry
	// Stop stops the hub (also done at cleanup; safe to call twice).
	Stop func()
}

// Run starts a hub on a real embedded server with a bbolt attempt store in
// a temp dir, waits until it is ready and stops it when the test ends.
func Run(tb testing.TB, o *Options) *Env {
	tb.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.URL == "" {
		opts.URL = jetstreamtest.StartServer(tb, nil).URL
	}
	nc, j := jetstreamtest.Connect(tb, opts.URL)
	store, err := counter.Open(filepath.Join(tb.TempDir(), "counter.db"), nil)
	if err != nil {
		tb.Fatalf("hubtest: %v", err)
	}
	var c hub.Config
	if opts.Config != nil {
		c = *opts.Config
	}
	c.SetDefaults()
	if len(opts.Stages) == 0 {
		opts.Stages = []hub.Stage{parse.Stage(parse.Config{}, nil)}
	}
	log := zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.WarnLevel)
	if opts.Logger != nil {
		log = *opts.Logger
	}
	reg := prometheus.NewRegistry()
	h, err := hub.New(hub.Options{Config: c, Conn: nc, Store: store, Stages: opts.Stages, Logger: log, Registry: reg, Keyring: opts.Keyring})
	if err != nil {
		tb.Fatalf("hubtest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("hubtest: hub stopped with %v", err)
				}
			case <-time.After(30 * time.Second):
				tb.Errorf("hubtest: hub did not stop within 30s")
			}
			store.Close()
		})
	}
	tb.Cleanup(stop)
	jetstreamtest.Eventually(tb, 10*time.Second, h.Ready, "hubtest: hub not ready")
	return &Env{URL: opts.URL, NC: nc, JS: j, Hub: h, Registry: reg, Stop: stop}
}

// Start runs a hub until the test ends and returns its NATS URL. cfg may
// be nil (defaults); stages default to the built-in parse stage.
func Start(tb testing.TB, cfg *hub.Config, stages ...hub.Stage) string {
	tb.Helper()
	return Run(tb, &Options{Config: cfg, Stages: stages}).URL
}

// FastConfig shortens every wait so tests never sleep for real minutes.
func FastConfig() hub.Config {
	c := hub.Config{Partitions: 4}
	c.Attempts.Threshold = 3
	c.Attempts.Deadline = 2 * time.Second
	c.Attempts.AckWait = time.Second
	c.Attempts.BackoffBase = 20 * time.Millisecond
	c.Attempts.BackoffMax = 100 * time.Millisecond
	c.DuplicateWindow = time.Minute
	c.Alerts.Interval = time.Second
	c.LeakProbe.Interval = 200 * time.Millisecond
	return c
}
