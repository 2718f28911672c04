package app

import (
	"context"
	"errors"
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
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/bridge"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/drill"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
)

// ExitFatal is the exit code the default Env.OnFatal exits with when the
// hub asks to be restarted by its supervisor (handlers that ignore their
// deadline piled up).
const ExitFatal = 3

// Env is what the application takes from the process that hosts it; nil
// means defaults.
type Env struct {
	// Getenv reads secrets named by the configuration and the audit key
	// override (default os.Getenv).
	Getenv func(string) string
	// Logger receives every component's log (default: info level on
	// stderr).
	Logger *zerolog.Logger
	// Executable is the edihub binary started as the sandbox worker,
	// `<Executable> sandbox ...` (default os.Executable()).
	Executable string
	// Stages run after the built-in parse stage.
	Stages []hub.Stage
	// OnFatal is called when the hub asks to be restarted (default: log
	// and exit with ExitFatal).
	OnFatal func(reason string)
	// Actor names this process in audit events (default $USER@edihub-serve).
	Actor string
}

// App is the assembled application: embedded NATS (unless nats.url),
// stores, ledger, partner profiles, cluster parts, the hub, the API and
// HTTP endpoints, the Kafka bridge and the sandbox worker. New opens them;
// Run runs them until its context ends and closes them.
type App struct {
	cfg Config
	env Env
	log zerolog.Logger

	closers []func() // in the order opened; close runs them backwards
	once    sync.Once
	ctx     context.Context // the side jobs' (partner reload, API warm-up)
	cancel  context.CancelFunc

	httpLn net.Listener
	apiOn  bool // api.tokens configured: the API and the console are served
	url    string
	auth   ejs.ClientAuth
	nc     *nats.Conn
	js     js.JetStream
	ledger *ledger.KVStore // nil: ledger disabled
	led    parse.Ledger    // the stage's (nil: disabled)
	ags    *partner.Registry
	// keyCreated: this start created the audit key (New writes the
	// keyed genesis event)
	keyCreated bool
	srv        *server.Server // the embedded server (nil: nats.url)
	inflight   *counter.InFlight
	limits     *ejs.LimitWatch // the server's limits, read again on reconnect
	shared     sharedParts
	hub        *hub.Hub
	handler    http.Handler
	bridge     *bridge.Bridge
}

// Errors of New carry one of these kinds (errors.Is), so that a CLI can
// tell the operator's mistakes from failures.
var (
	// ErrConfig: a setting that cannot work, a busy port, a data folder in
	// use.
	ErrConfig = errors.New("configuration refused")
	// ErrUnreachable: NATS cannot be reached or is not ready.
	ErrUnreachable = errors.New("NATS unreachable")
)

type kindError struct {
	kind, err error
}

func (e *kindError) Error() string        { return e.err.Error() }
func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind }

func configErr(err error) error      { return &kindError{kind: ErrConfig, err: err} }
func unreachableErr(err error) error { return &kindError{kind: ErrUnreachable, err: err} }

// New checks cfg (nil: DefaultConfig) as serve does and opens everything
// the application runs on, in an order that says a refusal before it
// creates anything: the data folder's lock, the ports, then the audit key,
// the stores and NATS. ctx bounds the opening (a cluster electing its
// leaders gets a minute within it). On error nothing stays open.
func New(ctx context.Context, cfg *Config, env *Env) (_ *App, err error) {
	a := &App{cfg: DefaultConfig()}
	if cfg != nil {
		a.cfg = *cfg
	}
	if env != nil {
		a.env = *env
	}
	if a.env.Getenv == nil {
		a.env.Getenv = os.Getenv
	}
	if a.env.Logger != nil {
		a.log = *a.env.Logger
	} else {
		a.log = zerolog.New(os.Stderr).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	}
	if a.env.Actor == "" {
		a.env.Actor = ActorName("edihub-serve")
	}
	if err := a.cfg.Complete(); err != nil {
		return nil, configErr(err)
	}
	for _, d := range a.cfg.deprecated {
		a.log.Warn().Str("component", "config").Msg(d)
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.closers = append(a.closers, a.cancel)
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := a.open(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// open is New after the configuration was checked.
func (a *App) open(ctx context.Context) error {
	cfg, log, getenv := &a.cfg, a.log, a.env.Getenv
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	// Before anything else is opened: a second serve on the same folder
	// would share the in-flight table, the counter store and the
	// JetStream store of the first.
	lock, err := LockDataDir(cfg.DataDir)
	if err != nil {
		var inUse *DataInUseError
		if errors.As(err, &inUse) {
			return configErr(err)
		}
		return err
	}
	a.onClose(func() { lock.Close() })
	// Busy ports are said at once, before the stores open.
	a.httpLn, err = net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return configErr(portErr("HTTP address", cfg.HTTP.Listen, err))
	}
	a.onClose(func() { a.httpLn.Close() }) // closed already once the HTTP server ran
	if cfg.NATS.URL == "" {
		if err := checkPortFree("NATS listen address", cfg.NATS.Listen); err != nil {
			return configErr(err)
		}
	}
	if abs, err := filepath.Abs(cfg.DataDir); err == nil {
		cfg.DataDir = abs // the sandbox worker is told where the key is
	}
	created, err := audit.EnsureKeyFile(cfg.DataDir, getenv)
	if err != nil {
		return err
	}
	keys, err := audit.LoadKeyring(cfg.DataDir, getenv)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	if created {
		log.Info().Str("component", "serve").Str("file", filepath.Join(cfg.DataDir, audit.KeyFile)).Str("kid", keys.CurrentID()).
			Msg("audit key created: back it up; without it the audit trail cannot be authenticated")
	}
	stageCount := 1 + len(a.env.Stages) // the built-in parse stage and the embedder's
	inflight, suspects, err := counter.OpenInFlight(filepath.Join(cfg.DataDir, "inflight.map"), hub.Slots(cfg.Hub, stageCount))
	if err != nil {
		return err
	}
	a.onClose(func() { inflight.Close() })
	a.inflight = inflight
	if len(suspects) > 0 {
		log.Warn().Str("component", "serve").Int("suspects", len(suspects)).
			Msg("the previous hub died while running messages: they run alone first, so that one that kills the process is found")
	}
	if err := a.connect(ctx); err != nil {
		return err
	}
	// A cluster that is still electing its leaders answers "temporarily
	// unavailable" for a while after start, and creating a replicated
	// bucket can take longer than one request's default timeout: the
	// buckets below are opened within this minute too.
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := ejs.WaitReady(wctx, a.js); err != nil {
		return unreachableErr(err)
	}
	if err := ejs.CheckReplicas(a.nc, cfg.NATS.Replicas); err != nil {
		return configErr(err)
	}
	// ...and, on a cluster, before it can place replicated streams.
	if err := ejs.WaitStream(wctx, a.js, readyzStreamConfig(cfg.NATS.Replicas)); err != nil {
		return unreachableErr(err)
	}
	if a.limits, err = watchServerLimits(wctx, a.nc, a.js, cfg, log); err != nil {
		if errors.Is(err, ejs.ErrLimitsUnread) {
			return unreachableErr(err)
		}
		return configErr(err)
	}
	a.keyCreated = created
	return a.assemble(wctx, keys, inflight, suspects)
}

// connect starts the embedded server (unless nats.url) and connects to it.
func (a *App) connect(ctx context.Context) error {
	cfg, log := &a.cfg, a.log
	a.url = cfg.NATS.URL
	a.auth = cfg.NATS.ClientAuth(a.env.Getenv)
	if a.url == "" {
		users, self, err := cfg.NATS.serverUsers(a.env.Getenv)
		if err != nil {
			return configErr(err)
		}
		a.auth = self
		names := ejs.AuthNames{Ingest: cfg.Hub.Streams.Ingest, Parsed: cfg.Hub.Streams.Parsed, DLQ: cfg.Hub.Streams.DLQ,
			Parking: cfg.Hub.Streams.Parking, Poison: cfg.Hub.Streams.Poison, Audit: cfg.Hub.Streams.Audit,
			Tickets: cfg.Sandbox.TicketBucket, Forensic: cfg.Sandbox.Bucket, Ledger: cfg.Ledger.Bucket,
			Attempts: cfg.Counter.Bucket, Leases: cfg.Cluster.LeaseBucket, AlertLimits: cfg.Cluster.AlertBucket,
			Payloads: cfg.Hub.ClaimCheck.Bucket, Uploads: cfg.Hub.ClaimCheck.UploadStream, Paused: cfg.Hub.Bulkhead.Bucket}
		var srv *server.Server
		srv, err = ejs.StartServer(&ejs.ServerOptions{DataDir: cfg.DataDir, Listen: cfg.NATS.Listen, MaxPayload: cfg.NATS.MaxPayload, Logger: &log,
			Users: users, AuthNames: names, Name: cfg.NATS.ServerName, Cluster: cfg.NATS.Cluster})
		if err != nil {
			return err
		}
		a.onClose(func() {
			srv.Shutdown()
			srv.WaitForShutdown()
		})
		a.url = srv.ClientURL()
		a.srv = srv
		log.Info().Str("component", "serve").Str("nats", a.url).Int("users", len(users)).Str("store", filepath.Join(cfg.DataDir, "jetstream")).Msg("embedded NATS with JetStream started")
	}
	var err error
	a.nc, a.js, err = a.dial("edihub-serve", "serve")
	if err != nil {
		return unreachableErr(err)
	}
	a.onClose(a.nc.Close)
	return nil
}

// dial opens a connection of this application to its NATS server.
func (a *App) dial(name, component string) (*nats.Conn, js.JetStream, error) {
	opts, err := a.auth.Options()
	if err != nil {
		return nil, nil, err
	}
	log := a.log
	return ejs.Connect(a.url, name, append(opts, nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
		if err != nil {
			log.Warn().Str("component", component).Err(err).Msg("disconnected from NATS; reconnecting")
		}
	}))...)
}

// assemble opens the ledger, partners, stores and cluster parts and builds
// the hub, the API and the bridge on them.
func (a *App) assemble(ctx context.Context, keys *audit.Keyring, inflight *counter.InFlight, suspects []counter.Suspect) error {
	cfg, log := &a.cfg, a.log
	// The ledger gets a connection of its own: on the hub's, its batch
	// entries and their acks queued behind the outputs, in the client's
	// write buffer and in the server's read loop for that connection (the
	// parse bench, ledger on / plain: 0.68-0.74 shared, 0.81-0.82 apart).
	lnc, lj, err := a.dial("edihub-serve-ledger", "ledger")
	if err != nil {
		return unreachableErr(err)
	}
	a.onClose(lnc.Close)
	a.ledger, err = openLedger(ctx, lj, cfg, log)
	if err != nil {
		return err
	}
	if a.ledger != nil {
		a.onClose(func() { _ = a.ledger.Close() }) // its index file
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ags, err := startPartners(a.ctx, cfg, a.js, log, reg)
	if err != nil {
		return err
	}
	var led parse.Ledger
	var forget func([]string)
	if a.ledger != nil {
		led = a.ledger
		forget = func(partners []string) { a.ledger.Forget(partners...) }
		registerLedgerMetrics(reg, a.ledger)
	}
	a.ags, a.led = ags, led
	stages := append([]hub.Stage{parse.New(cfg.Parse, &parse.Options{Ledger: led, Agreements: ags, JS: a.js, Logger: log, Keys: keys, Registry: reg})}, a.env.Stages...)
	if cfg.Hub.Drill {
		stages[0].Handle = drill.Middleware(log)(stages[0].Handle)
		log.Warn().Msg("DRILL MODE: messages with header x-drill can panic, hang, kill this process or fail on purpose")
	}
	store, err := openAttemptStore(ctx, a.js, cfg)
	if err != nil {
		return err
	}
	a.onClose(func() { store.Close() })
	a.shared, err = openShared(ctx, a.js, cfg, log)
	if err != nil {
		return err
	}
	a.shared.register(reg, cfg.Hub.Partitions)
	onFatal := a.env.OnFatal
	if onFatal == nil {
		onFatal = func(reason string) {
			log.Error().Str("component", "serve").Msg("exiting for a restart: " + reason)
			os.Exit(ExitFatal)
		}
	}
	reg.MustRegister(ejs.StoreFaults.Collectors()...)
	// stream reservations sized from the store (the embedded server's
	// disk, an account's limit)
	if lim, src, err := ejs.StoreLimit(ctx, a.js, a.srv); err == nil {
		cfg.Hub.StoreLimit, cfg.Hub.StoreLimitSource = lim, src
	}
	var checker hub.ClaimChecker
	if cfg.Hub.ClaimCheck.On() {
		claim, err := openClaimCheck(ctx, a.js, cfg)
		if err != nil {
			return err
		}
		checker = claim
		uploads, err := openUploads(ctx, a.js, claim, cfg)
		if err != nil {
			return err
		}
		// outermost: every stage (the drill too) sees the uploaded bytes
		maxSize := func(partner string) int64 { return cfg.Parse.Options(partner).MaxSize }
		stages[0].Handle = uploadMiddleware(uploads, maxSize, log)(stages[0].Handle)
	}
	a.hub, err = hub.New(hub.Options{
		Config: cfg.Hub, Conn: a.nc, Store: store, Stages: stages, InFlight: inflight, Suspects: suspects,
		Logger: log, Registry: reg, Actor: a.env.Actor, Keyring: keys,
		Singletons: a.shared.singletons, AlertLimiter: a.shared.limiter, ForgetPartners: forget, Owners: a.shared.hubOwners(),
		OnFatal: onFatal, ClaimCheck: checker,
	})
	if err != nil {
		return configErr(err)
	}
	if a.keyCreated { // the keyed genesis event: no unkeyed event after it verifies as legacy
		if err := a.hub.Provision(ctx); err != nil {
			return err
		}
		if err := a.hub.Auditor().Genesis(ctx, a.env.Actor); err != nil {
			return err
		}
	}
	apiHandler, err := a.apiHandler()
	if err != nil {
		return err
	}
	a.apiOn = apiHandler != nil
	a.handler = newMux(reg, a.notReady, a.nc, newJSWriteCheck(a.js, cfg.NATS.Replicas), apiHandler)
	if cfg.Bridge.Enabled() {
		if keys != nil { // signs and checks the bridge's x-kafka-* (x-kafka-mac)
			cfg.Bridge.Keys = keys
		}
		cfg.Bridge.DefaultInstanceID(cfg.DataDir) // static membership: a restart resumes at once
		if a.bridge, err = bridge.New(&cfg.Bridge, a.nc, a.js, log, reg); err != nil {
			return configErr(fmt.Errorf("bridge: %w", err))
		}
	}
	return nil
}

// notReady says why the application is not ready ("" when it is): the
// hub's reason, or that the server reconnected to cannot take the
// configured interchanges (or its limits are not read yet).
func (a *App) notReady() string {
	if r := a.hub.NotReady(); r != "" {
		return r
	}
	if err := a.limits.Err(); err != nil {
		return "the NATS server's limits: " + err.Error()
	}
	return ""
}

// apiHandler is the JSON API when api tokens are configured, else nil.
func (a *App) apiHandler() (http.Handler, error) {
	cfg := &a.cfg
	tokens, err := cfg.API.Resolve(a.env.Getenv)
	if err != nil {
		return nil, configErr(err)
	}
	if len(tokens) == 0 {
		return nil, nil
	}
	log := a.log
	oo := &OpsOptions{Actor: "api", Auditor: a.hub.Auditor(), Logger: &log, Warn: func(err error) {
		log.Warn().Err(err).Msg("poison replay not noted on its ticket")
	}}
	if a.ledger != nil {
		oo.Grants = a.ledger
	}
	oo.Agreements, oo.Ledger = a.ags, a.led
	o, err := OpenOps(a.ctx, a.js, cfg, oo)
	if err != nil {
		return nil, err
	}
	return api.NewWithOptions(api.Options{Ops: o, Tokens: tokens, Logger: log, Auditor: a.hub.Auditor(),
		JS: a.js, Streams: a.hub.Config().Streams, Forensics: &cfg.Sandbox, Status: a.hub.Status, WarmUp: a.ctx,
		PauseBucket: a.hub.Config().Bulkhead.Bucket}), nil
}

// Run runs the hub, the HTTP endpoints, the cluster membership, the bridge
// and the sandbox worker until ctx is done, then stops them and closes
// everything New opened.
func (a *App) Run(ctx context.Context) error {
	// Closed after everything Run and close stop: until then a stop that
	// outlasts shutdown_timeout ends the process (boundShutdown).
	stopped := make(chan struct{})
	defer close(stopped)
	defer a.close()
	cfg, log := &a.cfg, a.log
	go boundShutdown(ctx, cfg.ShutdownTimeout, stopped, a.inflight, log)
	httpSrv := startHTTP(a.httpLn, a.handler, log)
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
	go func() { defer wg.Done(); a.shared.run(ctx) }()
	if a.srv != nil {
		wg.Add(1)
		go func() { defer wg.Done(); watchEmbeddedStore(ctx, a.srv, log) }()
	}
	if a.ledger != nil {
		wg.Add(1)
		go func() { defer wg.Done(); checkpointLedger(ctx, a.ledger, log) }()
	}
	if a.bridge != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.bridge.Run(ctx); err != nil {
				log.Error().Str("component", "bridge").Err(err).Msg("bridge stopped")
			}
		}()
		log.Info().Str("component", "serve").Int("inbound", len(cfg.Bridge.Inbound)).Int("outbound", len(cfg.Bridge.Outbound)).Msg("Kafka bridge started")
	}
	waitSandbox, err := startSandboxChild(ctx, cfg.Sandbox, a.env.Executable, a.url, a.auth, cfg.Path, cfg.DataDir, log)
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() { defer wg.Done(); <-ctx.Done(); waitSandbox() }()

	log.Info().Str("component", "serve").Str("http", a.httpLn.Addr().String()).Str("nats", ejs.RedactURL(a.url)).
		Str("console", consoleURL(a.httpLn.Addr(), a.apiOn)).
		Msg("starting the pipeline: publish interchanges to edi.ingest.<partner>; Ctrl-C stops")
	if err := a.hub.Run(ctx); err != nil {
		return err
	}
	log.Info().Str("component", "serve").Msg("stopped cleanly")
	return nil
}

// Close releases what New opened, for an App that is not Run (Run closes
// by itself). Safe to call twice.
func (a *App) Close() error { a.close(); return nil }

func (a *App) onClose(f func()) { a.closers = append(a.closers, f) }

func (a *App) close() {
	a.once.Do(func() {
		for i := len(a.closers) - 1; i >= 0; i-- {
			a.closers[i]()
		}
	})
}

// Handler is the application's HTTP handler (what Run serves on
// http.listen): /metrics, /healthz, /readyz and, with API tokens, /api/v1/
// and the web console.
func (a *App) Handler() http.Handler { return a.handler }

// Hub is the running pipeline.
func (a *App) Hub() *hub.Hub { return a.hub }

// NATSURL is the URL of the NATS server the application runs on (the
// embedded one's, with a port chosen for -1).
func (a *App) NATSURL() string { return a.url }

// HTTPAddr is the address Run serves Handler on (a port chosen for :0).
func (a *App) HTTPAddr() string { return a.httpLn.Addr().String() }

// Config is the configuration in force, defaults filled in.
func (a *App) Config() Config { return a.cfg }

// Ledger is the interchange ledger (nil when ledger.disabled).
func (a *App) Ledger() *ledger.KVStore { return a.ledger }

// ActorName is the OS user for audit events, or def.
func ActorName(def string) string {
	if u := os.Getenv("USER"); u != "" {
		return u + "@" + def
	}
	return def
}
