package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/bridge"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/hub/audit"
	"github.com/edihub/edihub/hub/console"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/hub/parse"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "serve", summary: "run the hub (embedded NATS, data in ./data)", run: runServe})
}

// exitFatal is the exit code when the hub asks to be restarted by its
// supervisor (handlers that ignore their deadline piled up).
const exitFatal = 3

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
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return usageErr("%v", err)
	}
	applyServeFlags(&cfg, fs, *dataDir, *listen, *httpAddr, *natsURL, *logLevel, *drill)
	applyAuthFlags(&cfg.NATS, fs, &auth)
	if cfg.Bridge.Enabled() {
		// SASL secrets may come from the environment, as for `edihub bridge`.
		cfg.Bridge.ApplyEnv(e.getenv)
	}
	log, err := newLogger(e.stderr, cfg.Log.Level, cfg.Log.Format)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := cfg.complete(); err != nil {
		return usageErr("%v", err)
	}
	log.Info().Str("component", "serve").Str("runtime", cfg.Runtime.apply(e.getenv)).Msg("garbage collector set")
	return serveWithStoreBackoff(ctx, log, func(ctx context.Context) error { return serve(ctx, cfg, log) })
}

func applyServeFlags(cfg *fileConfig, fs *flag.FlagSet, dataDir, listen, httpAddr, natsURL, logLevel string, drill bool) {
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

// serve runs everything until ctx is done: the embedded server (unless an
// external one is configured), the HTTP endpoints and the hub.
func serve(ctx context.Context, cfg fileConfig, log zerolog.Logger) error {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return failedErr("data folder: %v", err)
	}
	// Before anything else is opened: a second serve on the same folder
	// would share the in-flight table, the counter store and the
	// JetStream store of the first.
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		var inUse *errDataInUse
		if errors.As(err, &inUse) {
			return usageErr("%v", err)
		}
		return failedErr("%v", err)
	}
	defer lock.Close()
	// Busy ports are said at once, before the stores open.
	httpLn, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return usageErr("%v", portErr("HTTP address", cfg.HTTP.Listen, err))
	}
	defer httpLn.Close() // closed already once the HTTP server ran
	if cfg.NATS.URL == "" {
		if err := checkPortFree("NATS listen address", cfg.NATS.Listen); err != nil {
			return usageErr("%v", err)
		}
	}
	if abs, err := filepath.Abs(cfg.DataDir); err == nil {
		cfg.DataDir = abs // the sandbox worker is told where the key is
	}
	created, err := audit.EnsureKeyFile(cfg.DataDir, os.Getenv)
	if err != nil {
		return failedErr("%v", err)
	}
	keys, err := audit.LoadKeyring(cfg.DataDir, os.Getenv)
	if err != nil {
		return failedErr("refusing to start: %v", err)
	}
	if created {
		log.Info().Str("component", "serve").Str("file", filepath.Join(cfg.DataDir, audit.KeyFile)).Str("kid", keys.CurrentID()).
			Msg("audit key created: back it up; without it the audit trail cannot be authenticated")
	}
	const stageCount = 1 // the built-in parse stage
	inflight, suspects, err := counter.OpenInFlight(filepath.Join(cfg.DataDir, "inflight.map"), hub.Slots(cfg.Hub, stageCount))
	if err != nil {
		return failedErr("%v", err)
	}
	defer inflight.Close()
	stopped := make(chan struct{})
	defer close(stopped)
	go boundShutdown(ctx, cfg.ShutdownTimeout, stopped, inflight, log)
	if len(suspects) > 0 {
		log.Warn().Str("component", "serve").Int("suspects", len(suspects)).
			Msg("the previous hub died while running messages: they run alone first, so that one that kills the process is found")
	}
	url := cfg.NATS.URL
	auth := cfg.NATS.clientAuth(os.Getenv)
	var srv *server.Server
	if url == "" {
		users, self, err := cfg.NATS.serverUsers(os.Getenv)
		if err != nil {
			return usageErr("%v", err)
		}
		auth = self
		names := ejs.AuthNames{Ingest: cfg.Hub.Streams.Ingest, Parsed: cfg.Hub.Streams.Parsed, DLQ: cfg.Hub.Streams.DLQ,
			Parking: cfg.Hub.Streams.Parking, Poison: cfg.Hub.Streams.Poison, Audit: cfg.Hub.Streams.Audit,
			Tickets: cfg.Sandbox.TicketBucket, Forensic: cfg.Sandbox.Bucket, Ledger: cfg.Ledger.Bucket,
			Attempts: cfg.Counter.Bucket, Leases: cfg.Cluster.LeaseBucket, AlertLimits: cfg.Cluster.AlertBucket}
		srv, err = ejs.StartServer(&ejs.ServerOptions{DataDir: cfg.DataDir, Listen: cfg.NATS.Listen, MaxPayload: cfg.NATS.MaxPayload, Logger: &log,
			Users: users, AuthNames: names, Name: cfg.NATS.ServerName, Cluster: cfg.NATS.Cluster})
		if err != nil {
			return failedErr("%v", err)
		}
		defer func() {
			srv.Shutdown()
			srv.WaitForShutdown()
		}()
		url = srv.ClientURL()
		log.Info().Str("component", "serve").Str("nats", url).Int("users", len(users)).Str("store", filepath.Join(cfg.DataDir, "jetstream")).Msg("embedded NATS with JetStream started")
	}
	nc, j, err := connectWith(url, "edihub-serve", auth, nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
		if err != nil {
			log.Warn().Str("component", "serve").Err(err).Msg("disconnected from NATS; reconnecting")
		}
	}))
	if err != nil {
		return unreachableErr(err)
	}
	defer nc.Close()
	// A cluster that is still electing its leaders answers "temporarily
	// unavailable" for a while after start, and creating a replicated
	// bucket can take longer than one request's default timeout: the
	// buckets below are opened within this minute too.
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := ejs.WaitReady(wctx, j); err != nil {
		return unreachableErr(err)
	}
	if err := ejs.CheckReplicas(nc, cfg.NATS.Replicas); err != nil {
		return usageErr("%v", err)
	}
	// ...and, on a cluster, before it can place replicated streams.
	if err := ejs.WaitStream(wctx, j, readyzStreamConfig(cfg.NATS.Replicas)); err != nil {
		return unreachableErr(err)
	}

	// The ledger gets a connection of its own: on the hub's, its batch
	// entries and their acks queued behind the outputs, in the client's
	// write buffer and in the server's read loop for that connection (the
	// parse bench, ledger on / plain: 0.68-0.74 shared, 0.81-0.82 apart).
	lnc, lj, err := connectWith(url, "edihub-serve-ledger", auth, nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
		if err != nil {
			log.Warn().Str("component", "ledger").Err(err).Msg("disconnected from NATS; reconnecting")
		}
	}))
	if err != nil {
		return unreachableErr(err)
	}
	defer lnc.Close()
	led, err := openLedger(wctx, lj, cfg, log)
	if err != nil {
		return failedErr("%v", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ags, err := startPartners(ctx, cfg, j, log, reg)
	if err != nil {
		return failedErr("%v", err)
	}
	stages := []hub.Stage{parse.StageWith(cfg.Hub.EDIFACT, led, ags)}

	store, err := openAttemptStore(wctx, j, cfg)
	if err != nil {
		return failedErr("%v", err)
	}
	defer store.Close()
	shared, err := openShared(wctx, j, cfg, log)
	if err != nil {
		return failedErr("%v", err)
	}
	var forget func([]string)
	if ls, ok := led.(*ledger.KVStore); ok {
		forget = func(partners []string) { ls.Forget(partners...) }
		registerLedgerMetrics(reg, ls)
	}

	shared.register(reg, cfg.Hub.Partitions)
	reg.MustRegister(ejs.StoreFaults.Collectors()...)
	if lim, src, err := ejs.StoreLimit(wctx, j, srv); err == nil {
		cfg.Hub.StoreLimit, cfg.Hub.StoreLimitSource = lim, src
	}
	h, err := hub.New(hub.Options{
		Config: cfg.Hub, Conn: nc, Store: store, Stages: stages, InFlight: inflight, Suspects: suspects,
		Logger: log, Registry: reg, Actor: actorName("edihub-serve"), Keyring: keys,
		Singletons: shared.singletons, AlertLimiter: shared.limiter, ForgetPartners: forget, Owners: shared.hubOwners(),
		OnFatal: func(reason string) {
			log.Error().Str("component", "serve").Msg("exiting for a restart: " + reason)
			os.Exit(exitFatal)
		},
	})
	if err != nil {
		return usageErr("%v", err)
	}

	var apiHandler http.Handler
	tokens, err := cfg.API.Resolve(os.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	if len(tokens) > 0 {
		oo := ops.OpsOptions{JS: j, Streams: h.Config().Streams, Auditor: h.Auditor(), Actor: "api",
			EDIFACT: cfg.Hub.EDIFACT, Logger: log, Replicas: cfg.NATS.Replicas}
		// A poison message replayed through the API notes it on its ticket,
		// as `dlq replay` does.
		oo.Replayed = notePoisonReplays(j, cfg.Sandbox, "api", func(err error) {
			log.Warn().Err(err).Msg("poison replay not noted on its ticket")
		})
		if ls, ok := led.(*ledger.KVStore); ok {
			oo.Grants = ls
		}
		o, err := ops.NewOps(oo)
		if err != nil {
			return failedErr("%v", err)
		}
		apiHandler = api.NewWithOptions(api.Options{Ops: o, Tokens: tokens, Logger: log, Auditor: h.Auditor(),
			JS: j, Streams: h.Config().Streams, Forensics: &cfg.Sandbox, Status: h.Status, WarmUp: ctx})
	}
	httpSrv := startHTTP(httpLn, reg, h.Ready, nc, newJSWriteCheck(j, cfg.NATS.Replicas), apiHandler, log)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(sctx)
	}()

	// Side jobs stop with the hub: cancel, then wait, before NATS goes
	// away (the bridge flushes and commits first).
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Add(1)
	go func() { defer wg.Done(); shared.run(ctx) }()
	if srv != nil {
		wg.Add(1)
		go func() { defer wg.Done(); watchEmbeddedStore(ctx, srv, log) }()
	}
	if cfg.Bridge.Enabled() {
		b, err := bridge.New(&cfg.Bridge, nc, j, log, reg)
		if err != nil {
			return usageErr("bridge: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Run(ctx); err != nil {
				log.Error().Str("component", "bridge").Err(err).Msg("bridge stopped")
			}
		}()
		log.Info().Str("component", "serve").Int("inbound", len(cfg.Bridge.Inbound)).Int("outbound", len(cfg.Bridge.Outbound)).Msg("Kafka bridge started")
	}

	waitSandbox, err := startSandboxChild(ctx, cfg.Sandbox, url, auth, cfg.path, cfg.DataDir, log)
	if err != nil {
		return failedErr("%v", err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); <-ctx.Done(); waitSandbox() }()

	log.Info().Str("component", "serve").Str("http", cfg.HTTP.Listen).Str("nats", ejs.RedactURL(url)).
		Msg("starting the pipeline: publish interchanges to edi.ingest.<partner>; Ctrl-C stops")
	if err := h.Run(ctx); err != nil {
		return failedErr("%v", err)
	}
	log.Info().Str("component", "serve").Msg("stopped cleanly")
	return nil
}

// startHTTP serves /metrics, /healthz (the process lives) and /readyz (see
// readyzHandler) on ln.
func startHTTP(ln net.Listener, reg *prometheus.Registry, ready func() bool, nc *nats.Conn, wc *jsWriteCheck, apiHandler http.Handler, log zerolog.Logger) *http.Server {
	mux := http.NewServeMux()
	if apiHandler != nil {
		mux.Handle(api.Prefix, apiHandler)
		mux.Handle(console.Prefix, console.Handler()) // the web console: static files over the API
		mux.Handle("GET /console", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("/readyz", readyzHandler(nc, ready, wc))
	srv := newHTTPServer(mux)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Str("component", "http").Err(err).Msg("http server stopped")
		}
	}()
	return srv
}

// HTTP server timeouts: a client that sends its headers or body slowly, or
// never reads the answer, or keeps an idle connection, holds a connection
// and a goroutine for at most this long. The write timeout leaves room for
// a bulk replay through the API.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpWriteTimeout      = 2 * time.Minute
	httpIdleTimeout       = 2 * time.Minute
)

func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: httpReadHeaderTimeout, ReadTimeout: httpReadTimeout,
		WriteTimeout: httpWriteTimeout, IdleTimeout: httpIdleTimeout, MaxHeaderBytes: 64 << 10}
}

// readyzHandler reports ready while NATS is connected, the hub runs and
// JetStream takes writes. A full store (disk or limits) makes every copy,
// dead letter and ingest publish fail, so the hub is not ready then; the
// write check runs again on later requests, so readiness returns by
// itself once space is freed.
func readyzHandler(nc *nats.Conn, ready func() bool, wc *jsWriteCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !nc.IsConnected():
			http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
		case !ready():
			http.Error(w, "hub not running", http.StatusServiceUnavailable)
		case storeRefusing():
			_, last := ejs.StoreFaults.Unavailable(time.Now())
			http.Error(w, "JetStream store refuses writes: "+escape.Text(oneLine(last)), http.StatusServiceUnavailable)
		default:
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := wc.check(ctx); err != nil {
				http.Error(w, "JetStream refuses writes: "+escape.Text(oneLine(err.Error())), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ready")
		}
	})
}

// storeRefusing is /readyz's storage condition: a write of any hub stream
// or of the attempt store was refused in the last seconds (ejs.StoreFaults).
func storeRefusing() bool {
	u, _ := ejs.StoreFaults.Unavailable(time.Now())
	return u
}

// The write check's stream: one file-stored message at most (each probe
// replaces the one before), on a subject inside edi.>, which the
// hub's NATS user may write.
const (
	readyzStream  = wire.ReadyzStream
	readyzSubject = wire.ReadyzSubject
)

// jsWriteCheck publishes to the probe stream and remembers the outcome for
// a second, so a busy prober costs at most one write a second. It is a real
// write to the file store, so it fails as the hub's own publishes do when
// JetStream is out of space (server or account limits, a full disk), and
// succeeds again once there is room.
type jsWriteCheck struct {
	js       js.JetStream
	every    time.Duration
	replicas int

	mu      sync.Mutex
	at      time.Time
	err     error
	created bool
}

func newJSWriteCheck(j js.JetStream, replicas int) *jsWriteCheck {
	return &jsWriteCheck{js: j, every: time.Second, replicas: replicas}
}

func (c *jsWriteCheck) check(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < c.every {
		return c.err
	}
	c.err = c.probe(ctx)
	c.at = time.Now()
	return c.err
}

func (c *jsWriteCheck) probe(ctx context.Context) error {
	if !c.created {
		_, err := ejs.EnsureStream(ctx, c.js, readyzStreamConfig(c.replicas))
		if err != nil {
			return fmt.Errorf("probe stream %s: %w", readyzStream, err)
		}
		c.created = true
	}
	if _, err := c.js.Publish(ctx, readyzSubject, nil); err != nil {
		if errors.Is(err, js.ErrNoStreamResponse) || errors.Is(err, js.ErrStreamNotFound) {
			c.created = false // deleted behind our back: create it again next time
		}
		return err
	}
	return nil
}

// readyzStreamConfig is the write check's stream.
func readyzStreamConfig(replicas int) js.StreamConfig {
	return js.StreamConfig{
		Name: readyzStream, Subjects: []string{readyzSubject}, Storage: js.FileStorage,
		MaxMsgs: 1, Discard: js.DiscardOld, MaxAge: time.Hour, Replicas: max(replicas, 1),
		Description: "edihub /readyz write check: one message, replaced on every check",
	}
}

// actorName is the OS user for audit events, or def.
func actorName(def string) string {
	if u := os.Getenv("USER"); u != "" {
		return u + "@" + def
	}
	return def
}

// registerLedgerMetrics shows how the ledger's group commit groups (the
// interchanges recorded and the batch entries they went into) and what
// its index holds.
func registerLedgerMetrics(reg prometheus.Registerer, ls *ledger.KVStore) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_ledger_recorded_interchanges_total",
			Help: "Interchanges recorded in the ledger by this process."},
			func() float64 { n, _ := ls.CommitStats(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_ledger_batch_entries_total",
			Help: "Batch entries the ledger wrote (one per group of interchanges committed together)."},
			func() float64 { _, g := ls.CommitStats(); return float64(g) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_ledger_index_interchanges",
			Help: "Interchanges the ledger's index holds in memory (~150 bytes each; expired ones until its next sweep)."},
			func() float64 { return float64(ls.Indexed()) }),
	)
}

// openLedger opens the interchange ledger on its KV bucket (entries expire
// by their own TTL: nothing to purge) and, once, moves the entries of a
// ledger.db from before into it. Nil when disabled.
func openLedger(ctx context.Context, j js.JetStream, cfg fileConfig, log zerolog.Logger) (parse.Ledger, error) {
	if cfg.Ledger.Disabled {
		return nil, nil
	}
	log = log.With().Str("component", "ledger").Logger()
	ls, err := ledger.OpenKV(ctx, j, &ledger.KVOptions{Bucket: cfg.Ledger.Bucket, TTL: cfg.Ledger.TTL, Replicas: cfg.Ledger.Replicas})
	if err != nil {
		return nil, err
	}
	old := filepath.Join(cfg.DataDir, "ledger.db")
	n, err := ledger.MigrateBolt(old, ls)
	if err != nil {
		return nil, fmt.Errorf("move %s into the ledger bucket (nothing was lost; the file stays and the move runs again at the next start): %w", old, err)
	}
	if n > 0 {
		log.Info().Int("interchanges", n).Str("from", old).Str("bucket", ls.Bucket()).Msg("ledger moved into its KV bucket; the file was renamed to ledger.db.migrated")
	}
	return ls, nil
}
