package hub

import (
	"context"
	"errors"
	"fmt"
	"github.com/edihub/edihub/hub/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// AttemptStore is what the hub needs of the counter package; a replicated
// store can replace the bbolt one.
type AttemptStore interface {
	Get(k counter.Key) (counter.Record, error)
	RecordFailure(k counter.Key, f counter.Failure) (counter.Record, error)
	MarkSolo(k counter.Key) (counter.Record, error)
	Delete(k counter.Key) error
	Purge() (int, error)
	Len() (int, error)
}

// InFlightTable is what the hub needs of counter.InFlight.
type InFlightTable interface {
	Start(slot int, seq uint64)
	Done(slot int, seq uint64)
	// SetUnstored/Unstored keep, across a death or a stop, how many solo
	// runs of a slot's message ended with an outcome the store refused:
	// those are not deaths (see withUnstored).
	SetUnstored(slot int, seq uint64, soloRuns int)
	Unstored(slot int) (seq uint64, soloRuns int)
	// FindUnstored is the slot counting seq's unstored solo runs (-1: none).
	FindUnstored(seq uint64) (slot, soloRuns int)
}

type noInFlight struct{}

func (noInFlight) Start(int, uint64)              {}
func (noInFlight) Done(int, uint64)               {}
func (noInFlight) SetUnstored(int, uint64, int)   {}
func (noInFlight) Unstored(int) (uint64, int)     { return 0, 0 }
func (noInFlight) FindUnstored(uint64) (int, int) { return -1, 0 }

// Slots is how many in-flight slots a hub with these stages uses: one per
// worker of each partition (hub.partition_concurrency) and one per
// stage's retry worker.
func Slots(cfg Config, stages int) int {
	cfg.setDefaults()
	return cfg.Partitions*cfg.PartitionConcurrency + stages
}

// wasRunning reports whether seq was running in one of s's slots when
// the last process died (the in-flight table).
func (h *Hub) wasRunning(s *source, seq uint64) bool {
	for i := 0; i < s.workers; i++ {
		if h.suspects[s.slot+i] == seq {
			return true
		}
	}
	return false
}

// Options are the hub's dependencies. Conn, Store and Stages are required.
type Options struct {
	Config   Config
	Conn     *nats.Conn
	Store    AttemptStore
	Stages   []Stage
	Logger   zerolog.Logger
	Registry prometheus.Registerer // nil: a private registry
	// OnFatal is called when the process should exit and be restarted by
	// its supervisor (handlers that ignore their deadline piled up). Nil
	// logs and keeps going.
	OnFatal func(reason string)
	// Actor names the hub in audit events.
	Actor string
	// InFlight records the message each worker runs (counter.InFlight, a
	// memory-mapped table that outlives the process); Suspects are what
	// the last process left in it: the messages running when it died. They
	// run alone, and a death during that run is attributed to them. This
	// does not depend on JetStream's delivery count, which an embedded
	// server killed with the process may not have persisted. Nil: no table.
	InFlight InFlightTable
	Suspects []counter.Suspect
	// Keyring signs audit events and the hub's copies (x-hub-mac). Nil:
	// events and copies are unauthenticated, and the sandbox reproduces no
	// drill.
	Keyring *audit.Keyring

	// Singletons, when set, runs the housekeeping, the leak probe and the
	// MAX_DELIVERIES backstop on one instance of a cluster at a time. Nil:
	// they run here (one hub).
	Singletons Singletons
	// ForgetPartners is called each time a partition is pinned to this
	// instance (the first time too), with the partners processed there
	// before: what was cached about them (the ledger's index) may be
	// stale. Nil: nothing cached.
	ForgetPartners func(partners []string)
	// Owners, when set with hub.cluster.pinned, says which partitions
	// this instance should work (lease.Membership): it pulls from those
	// only, and hands a partition over when another instance becomes its
	// preferred owner. Nil: it pulls from every partition (the pin still
	// lets one instance at a time work each).
	Owners PartitionOwners
	// AlertLimiter, when set, shares the alert rate limits with the other
	// instances (alert.KVLimiter).
	AlertLimiter alert.Limiter
	// ClaimCheck stores outputs too large for the server aside
	// (claimcheck.Store, when hub.claim_check is on). Nil: they are dead
	// letters.
	ClaimCheck ClaimChecker

	// testHooks let tests crash the pipeline between two steps.
	testHooks testHooks
}

type testHooks struct {
	afterQuarantinePublish func(seq uint64)
	// noPeerOutcomes turns the announcements of unstored outcomes off
	// (peers.go), to show what they prevent.
	noPeerOutcomes bool
	// groupReady: a run ahead was offered to its head's group
	groupReady func(seq uint64)
	// afterProvision: Run provisioned the streams, before any consumer
	afterProvision func()
}

// Hub is a running pipeline.
type Hub struct {
	cfg     Config
	nc      *nats.Conn
	js      js.JetStream
	store   AttemptStore
	stages  []Stage
	log     zerolog.Logger
	met     *metrics.Pipeline
	pub     *metrics.PublishHealth
	alerter *alert.Alerter
	board   metrics.Board // leak probe and recent alerts for Status
	audit   *audit.Auditor
	keys    *audit.Keyring
	exec    *executor
	onFatal func(string)
	actor   string
	hooks   testHooks

	gate     gate
	inflight InFlightTable
	suspects map[int]uint64 // slot → stream sequence; read-only after New
	// tableKnows: an in-flight table, and one instance (no cluster
	// sharing), so the table lists every message of this hub's that ran
	// when its last process died (decide's facts.tableKnows).
	tableKnows bool
	// unstored are explained outcomes the attempt store could not take
	// (its bucket had no leader either), this hub's and those its peers
	// announced (peers.go): the message's key → the outcomes, applied to
	// the record when the message comes back to this process, so a write
	// lost in an election is not counted as a death. unstoredN counts them.
	unstoredMu sync.Mutex
	unstored   map[counter.Key][]heldOutcome
	unstoredN  int
	instance   string // this hub's id in its announcements to its peers
	// peerLogSampler: announcements refused are logged once a minute.
	peerLogSampler audit.Sampler
	processed      atomic.Int64 // messages that left a partition, for the leak ratio
	deadLettered   atomic.Int64
	abandoned      atomic.Int64
	ready          atomic.Bool
	phase          atomic.Pointer[string] // what Run is doing, for NotReady
	// runCtx ends when Run's context does: waits inside the pipeline (a
	// copy that cannot be stored) give up then.
	runCtx context.Context
	// dupSampler samples skipped duplicates into the audit trail.
	dupSampler     audit.Sampler
	singletons     Singletons
	owners         PartitionOwners
	forgetPartners func(partners []string)
	claim          ClaimChecker
	claimMet       *metrics.ClaimCheck
	bulk           *bulkhead   // nil: the bulkhead is off
	groups         groupSettle // a partner's pipelined messages settled together (group.go)
}

// New checks the configuration and builds a hub; Run starts it.
func New(o Options) (*Hub, error) {
	cfg := o.Config
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Conn == nil || o.Store == nil {
		return nil, errors.New("hub: a NATS connection and an attempt store are required")
	}
	if len(o.Stages) == 0 {
		return nil, errors.New("hub: at least one stage is required")
	}
	seen := map[string]bool{}
	for _, st := range o.Stages {
		if err := wire.ValidStageName(st.Name); err != nil {
			return nil, err
		}
		if seen[st.Name] {
			return nil, fmt.Errorf("stage %q listed twice", st.Name)
		}
		seen[st.Name] = true
	}
	j, err := js.New(o.Conn, js.WithPublishAsyncTimeout(ejs.AsyncAckTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream context: %w", err)
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	h := &Hub{
		cfg: cfg, nc: o.Conn, js: j, store: o.Store, stages: o.Stages,
		log: o.Logger.With().Str("component", "hub").Logger(), met: metrics.New(reg), pub: metrics.NewPublishHealth(reg),
		onFatal: o.OnFatal, actor: o.Actor, hooks: o.testHooks, inflight: o.InFlight,
		suspects: map[int]uint64{}, unstored: map[counter.Key][]heldOutcome{}, instance: newInstanceID(), runCtx: context.Background(), keys: o.Keyring,
		dupSampler: audit.Sampler{Every: duplicateAuditEvery}, peerLogSampler: audit.Sampler{Every: time.Minute},
		singletons: o.Singletons, owners: o.Owners, forgetPartners: o.ForgetPartners,
		claim: o.ClaimCheck, claimMet: metrics.NewClaimCheck(reg),
	}
	for _, sp := range o.Suspects {
		h.suspects[sp.Slot] = sp.Seq
	}
	if cfg.GroupSettle == GroupSettleOff || cfg.PartnerPipeline <= 1 {
		h.groups.final.Store(true) // nothing to group
		h.groups.off.Store(true)
		h.groups.checked.Store(true)
	}
	h.tableKnows = h.inflight != nil && cfg.Cluster.Replicas <= 1 && !cfg.Cluster.IsPinned() && o.Owners == nil
	if h.inflight == nil {
		h.inflight = noInFlight{}
	}
	if h.actor == "" {
		h.actor = "edihub"
	}
	stages := o.Stages
	h.exec = &executor{
		stages: stages, deadline: cfg.Attempts.Deadline, heartbeat: heartbeatEvery(cfg.Attempts),
		classMap: cfg.Retry.ErrorClasses, abandoned: &h.abandoned, limit: int64(cfg.Attempts.MaxAbandoned),
		onLeak: h.leak,
	}
	h.alerter = alert.New(cfg.Alerts.Interval, alert.BuildSinks(cfg.Alerts, o.Conn, o.Logger.With().Str("component", "alerts").Logger()),
		o.Logger.With().Str("component", "alerts").Logger(), nil)
	h.alerter.Limiter = o.AlertLimiter
	h.board.Alerts.Max = recentAlerts
	h.alerter.OnSent = func(a alert.Alert, sink string, err error) {
		h.board.Alerts.Sent(a)
		res := "ok"
		if err != nil {
			res = "error"
		}
		h.met.Alerts.WithLabelValues(a.Name, sink, res).Inc()
	}
	h.audit = audit.New(j, cfg.Streams.Audit, audit.WithKeyring(o.Keyring))
	if cfg.Bulkhead.Enabled {
		h.bulk = newBulkhead(h, cfg.Bulkhead, metrics.NewBulkhead(reg))
	}
	return h, nil
}

// heartbeatEvery sends progress well inside AckWait.
func heartbeatEvery(a AttemptConfig) time.Duration {
	d := a.AckWait / 3
	if d < 50*time.Millisecond {
		d = 50 * time.Millisecond
	}
	return d
}

// Config returns the effective configuration (defaults filled in).
func (h *Hub) Config() Config { return h.cfg }

// Auditor returns the hub's audit appender.
func (h *Hub) Auditor() *audit.Auditor { return h.audit }

// Ready reports whether streams are provisioned and workers run, and the
// environment takes outputs (no publish failed for it since the last one
// stored).
func (h *Hub) Ready() bool { return h.NotReady() == "" }

// NotReady says why the hub is not ready, "" when it is: which step Run
// is at (or that it stopped), or since when the environment refuses the
// outputs. /readyz answers it, so an operator sees which condition holds.
func (h *Hub) NotReady() string {
	if !h.ready.Load() {
		if p := h.phase.Load(); p != nil {
			return "hub not running: " + *p
		}
		return "hub not running: not started"
	}
	if !h.pub.Healthy() {
		return fmt.Sprintf("hub not ready: a publish of outputs failed for the environment %s ago and none was stored since (ready again at the next stored output, or %s after the last such failure)",
			time.Since(h.pub.LastEnvFailure()).Round(time.Millisecond), metrics.EnvFailureHold)
	}
	return ""
}

// setPhase notes what Run is doing, for NotReady.
func (h *Hub) setPhase(p string) { h.phase.Store(&p) }

// Processed is how many messages have left a partition since Run began:
// acked with their outputs, skipped as duplicates, dead-lettered or
// quarantined. A cheap read for progress (a registry Gather per poll is not).
func (h *Hub) Processed() int64 { return h.processed.Load() }

func (h *Hub) stageNames() []string {
	out := make([]string, len(h.stages))
	for i, s := range h.stages {
		out[i] = s.Name
	}
	return out
}

func (h *Hub) leak(n int64) {
	reason := fmt.Sprintf("%d handlers ignored their deadline and are still running (limit %d); exiting so that the supervisor restarts a clean process — the attempts were recorded and the count goes on",
		n, h.cfg.Attempts.MaxAbandoned)
	h.log.Error().Int64("abandoned", n).Msg(reason)
	if h.onFatal != nil {
		h.onFatal(reason)
	}
}

// Run provisions the streams, starts each partition's source (its lanes
// and hub.partition_concurrency workers), the retry
// workers, the advisory backstop and the housekeeping loops, and blocks
// until ctx is done. In-flight messages are finished (up to their deadline)
// before it returns.
func (h *Hub) Run(ctx context.Context) error {
	h.setPhase("provisioning the streams")
	if err := h.Provision(ctx); err != nil {
		h.setPhase("stopped: " + err.Error())
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.runCtx = ctx
	defer h.groups.close() // after the workers (wg.Wait below)
	if h.hooks.afterProvision != nil {
		h.hooks.afterProvision()
	}
	var wg sync.WaitGroup
	errc := make(chan error, h.cfg.Partitions+len(h.stages)+4)
	start := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	// A failed start stops what it started before it returns.
	failed := func(err error) error { cancel(); wg.Wait(); h.setPhase("stopped: " + err.Error()); return err }
	if h.bulk != nil {
		h.setPhase("loading the paused partners")
		follow, err := h.bulk.open(ctx)
		if err != nil {
			return failed(err)
		}
		start("bulkhead", follow)
	}
	stopPeers, err := h.subscribePeers() // before any partition is pulled
	if err != nil {
		return failed(err)
	}
	defer stopPeers()
	h.setPhase("creating the consumers")
	for p := 0; p < h.cfg.Partitions; p++ {
		src, err := h.partitionSource(ctx, p)
		if err != nil {
			return failed(err)
		}
		start(src.name, src.run)
	}
	for i, st := range h.stages {
		src, err := h.retrySource(ctx, st.Name, h.cfg.Partitions*h.cfg.PartitionConcurrency+i)
		if err != nil {
			return failed(err)
		}
		start(src.name, src.run)
	}
	stray, err := h.straySource(ctx)
	if err != nil {
		return failed(err)
	}
	start(stray.name, stray.run)
	start("advisories", h.singleton(wire.LeaseAdvisories, unfenced(h.watchAdvisories)))
	start("housekeeping", h.singleton(wire.LeaseHousekeeping, unfenced(h.housekeeping)))
	start("leak-probe", h.singleton(wire.LeaseLeakProbe, h.runLeakProbe))
	wg.Add(1)
	go func() { defer wg.Done(); h.alerter.Run(ctx) }()
	h.ready.Store(true)
	h.log.Info().Int("partitions", h.cfg.Partitions).Strs("stages", h.stageNames()).Msg("hub running")

	select {
	case <-ctx.Done():
	case err = <-errc:
		cancel()
	}
	h.setPhase("draining: finishing in-flight messages")
	h.ready.Store(false)
	h.log.Info().Msg("draining: finishing in-flight messages")
	wg.Wait()
	if err != nil {
		h.setPhase("stopped: " + err.Error())
	} else {
		h.setPhase("stopped")
	}
	return err
}
