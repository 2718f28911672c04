package forensics

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// Options are the analysis worker's dependencies; Conn is required.
type Options struct {
	Conn   *nats.Conn
	Config Config
	// EDIFACT are the hub's parse settings; the child gets the partner's
	// resolved options so that it parses exactly as the hub did.
	EDIFACT  parse.Config
	Logger   zerolog.Logger
	Registry prometheus.Registerer // nil: a private registry
	// Auditor and Alerter default to ones of the worker's own on Conn
	// (AUDIT stream; log and NATS sinks).
	Auditor *audit.Auditor
	Alerter *alert.Alerter
	// Spec builds the child for a stage. Nil: this executable with
	// `sandbox exec --stage <stage>`. Zero limits are taken from Config.
	Spec func(stage string) sandbox.Spec
	// Actor names the worker in tickets and audit events.
	Actor string
	// Keyring (the hub's audit keys) signs the worker's audit events and
	// checks a copy's x-hub-mac: x-drill-mode is honoured only when the
	// hub's MAC verifies, an announced upload is read only when its v2 MAC
	// does. Nil: no drill is reproduced and no upload is read.
	Keyring *audit.Keyring
}

// Worker is the analysis worker: a durable consumer on the poison
// stream that runs each quarantined message in a capped child process and
// stores a report, the payload and a ticket. It runs in its own process
// (a bulkhead): whatever the children do, the hub's process is not touched.
type Worker struct {
	cfg     Config
	edi     parse.Config
	nc      *nats.Conn
	js      js.JetStream
	log     zerolog.Logger
	met     *metrics
	audit   *audit.Auditor
	alerter *alert.Alerter
	ownAlrt bool
	spec    func(stage string) sandbox.Spec
	actor   string
	keys    *audit.Keyring
	breaker *sandbox.Breaker

	mu    sync.Mutex
	store *Store
}

// New checks the configuration and builds the worker.
func New(o Options) (*Worker, error) {
	cfg := o.Config
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Conn == nil {
		return nil, errors.New("forensics: a NATS connection is required")
	}
	j, err := js.New(o.Conn)
	if err != nil {
		return nil, fmt.Errorf("jetstream context: %w", err)
	}
	reg := o.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	f := &Worker{
		cfg: cfg, edi: o.EDIFACT, nc: o.Conn, js: j, log: o.Logger.With().Str("component", "forensics").Logger(),
		met: newMetrics(reg), audit: o.Auditor, alerter: o.Alerter, spec: o.Spec, actor: o.Actor,
		keys: o.Keyring,
	}
	if f.actor == "" {
		f.actor = "edihub-sandbox"
	}
	if f.audit == nil {
		f.audit = audit.New(j, cfg.AuditStream, audit.WithKeyring(o.Keyring))
	}
	if f.alerter == nil {
		alog := o.Logger.With().Str("component", "alerts").Logger()
		f.alerter = alert.New(cfg.AlertInterval, alert.BuildSinks(alert.Config{Sinks: []string{"log", "nats"}, SubjectPrefix: wire.AlertSubjectPrefix}, o.Conn, alog), alog, nil)
		f.ownAlrt = true
	}
	if f.spec == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("forensics: find own executable for the children: %w", err)
		}
		f.spec = func(stage string) sandbox.Spec {
			return sandbox.Spec{Path: exe, Args: []string{"sandbox", "exec", "--stage", stage}}
		}
	}
	f.breaker = sandbox.NewBreaker(cfg.BreakerThreshold, cfg.BreakerCooldown)
	f.breaker.OnStateChange = f.breakerChanged
	return f, nil
}

// breakerChanged alerts once per opening: the hook runs on transitions
// only, so a breaker that stays open does not alert again.
func (f *Worker) breakerChanged(from, to sandbox.BreakerState) {
	f.met.breakerState.Set(float64(to))
	ev := f.log.Info()
	if to == sandbox.BreakerOpen {
		ev = f.log.Error()
		f.met.breakerOpens.Inc()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.alerter.Fire(ctx, alert.Alert{Name: "SandboxBreakerOpen", Severity: "critical",
			Summary: fmt.Sprintf("sandbox children failed %d times in a row for infrastructure reasons; no analysis for %v, then one trial",
				f.cfg.BreakerThreshold, f.cfg.BreakerCooldown),
			Labels: map[string]string{"component": "sandbox"}})
	}
	ev.Str("from", from.String()).Str("to", to.String()).Msg("sandbox circuit breaker")
}

// BreakerState is the breaker's state, for health checks and tests.
func (f *Worker) BreakerState() sandbox.BreakerState { return f.breaker.State() }

// Store opens (creating if needed) the forensic buckets.
func (f *Worker) Store(ctx context.Context) (*Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store != nil {
		return f.store, nil
	}
	s, err := OpenStore(ctx, f.js, f.cfg, true)
	if err != nil {
		return nil, err
	}
	f.store = s
	return s, nil
}

// consumerConfig: explicit ack, only after report, payload and ticket are
// stored; MaxAckPending bounds the children; AckWait is kept alive with
// InProgress while a child runs.
func (f *Worker) consumerConfig() js.ConsumerConfig {
	return js.ConsumerConfig{
		Durable: f.cfg.Consumer, Description: "edihub forensic analysis of quarantined messages",
		AckPolicy: js.AckExplicitPolicy, AckWait: 30 * time.Second, MaxAckPending: f.cfg.Concurrency,
		MaxDeliver: -1, DeliverPolicy: js.DeliverAllPolicy, FilterSubject: wire.PoisonAll,
	}
}

// Run consumes the poison stream until ctx is done. It waits for the
// stream to exist (the hub provisions it, and may start later).
func (f *Worker) Run(ctx context.Context) error {
	var store *Store
	var cons js.Consumer
	for warned := false; ; {
		var err error
		if store, err = f.Store(ctx); err == nil {
			cons, err = f.js.CreateOrUpdateConsumer(ctx, f.cfg.PoisonStream, f.consumerConfig())
			if err == nil {
				break
			}
		}
		if !warned {
			f.log.Warn().Err(err).Str("stream", f.cfg.PoisonStream).Msg("waiting for the hub's streams")
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f.ownAlrt {
		go f.alerter.Run(ctx)
	}
	f.log.Info().Int("concurrency", f.cfg.Concurrency).Str("memory_limit", f.cfg.MemoryLimit.String()).
		Str("cpu_limit", f.cfg.CPULimit.String()).Str("bucket", f.cfg.Bucket).Msg("forensics worker running")
	var wg sync.WaitGroup
	for i := 0; i < f.cfg.Concurrency; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); f.loop(ctx, cons, store) }()
	}
	wg.Wait()
	return nil
}

func (f *Worker) loop(ctx context.Context, cons js.Consumer, store *Store) {
	idle := min(f.cfg.BreakerCooldown/4, time.Second)
	for ctx.Err() == nil {
		// Ask the breaker before fetching: while it is open the messages
		// stay in the stream, undelivered, and no child is started.
		if err := f.breaker.Allow(); err != nil {
			sleepCtx(ctx, idle)
			continue
		}
		msg, err := cons.Next(js.FetchMaxWait(time.Second))
		if err != nil {
			f.breaker.Release()
			if !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
				f.log.Warn().Err(err).Msg("fetch from the poison stream failed")
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		f.handle(ctx, msg, store)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handle analyses one poison copy; the breaker was allowed by the caller
// and is settled here.
func (f *Worker) handle(ctx context.Context, msg js.Msg, store *Store) {
	meta, err := msg.Metadata()
	if err != nil {
		f.breaker.Release()
		_ = msg.Term()
		return
	}
	r := reportFromPoison(meta.Stream, meta.Sequence.Stream, msg.Subject(), msg.Headers(), msg.Data())
	f.checkCopy(r, msg.Data())
	log := f.log.With().Str("id", r.ID).Str("key", r.Key).Str("partner", r.Partner).Str("stage", r.Stage).Logger()

	stop := ejs.KeepAlive(msg, 10*time.Second)
	payload, unreadable, err := f.realPayload(ctx, r, msg.Data())
	if err != nil {
		stop()
		f.breaker.Release()
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("could not read the upload the copy announces; analysing again later")
		}
		_ = msg.NakWithDelay(5 * time.Second)
		return
	}
	var rep *sandbox.Report
	if unreadable {
		f.breaker.Release() // no child runs
		f.unavailable(r, payload)
		rep = r.Sandbox
	} else {
		rep, err = f.runSandbox(ctx, r, payload)
	}
	stop()
	switch {
	case unreadable:
	case err == nil:
		f.breaker.Success()
	case ctx.Err() != nil:
		f.breaker.Release()
		_ = msg.Nak() // shutting down: the next worker takes it
		return
	default:
		f.breaker.Failure()
		f.met.infraFailures.Inc()
		log.Error().Err(err).Msg("sandbox failed to run; the message stays in the stream and is tried again")
		_ = msg.NakWithDelay(time.Second)
		return
	}
	r.Analyses = 1
	if err := f.finish(ctx, store, r, payload, false); err != nil {
		f.met.storeErrors.Inc()
		log.Error().Err(err).Msg("could not store the forensic report; analysing again later")
		_ = msg.NakWithDelay(5 * time.Second)
		return
	}
	if !r.QuarantinedAt.IsZero() {
		f.met.toReport.Observe(time.Since(r.QuarantinedAt).Seconds())
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		log.Warn().Err(err).Msg("ack after the report failed; a redelivery overwrites the same report")
	}
	log.Warn().Str("outcome", string(rep.Outcome)).Str("summary", rep.Summary).Str("ticket", r.Ticket).Msg("forensic report stored")
}

// checkCopy records in r what the copy's x-hub-mac vouches for (HubMAC,
// or HubMACError); body is what the MAC was made over (the copy's body:
// an upload's announcement, not the upload's bytes).
func (f *Worker) checkCopy(r *Report, body []byte) {
	v, err := audit.CheckCopy(f.keys, nats.Header(r.Headers), body)
	r.HubMAC, r.HubMACError = v.String(), ""
	if err != nil {
		r.HubMACError = escape.Line(err.Error())
	}
}

// childHeaders are the headers the child gets: the copy's, without
// x-drill-mode unless the hub's x-hub-mac over it verified (checkCopy;
// either version covers the drill headers): anyone who can publish on the
// poison subjects could otherwise make the sandbox panic, spin or kill
// itself. The note says why a drill was not reproduced.
func childHeaders(r *Report) (map[string][]string, string) {
	h := nats.Header{}
	for k, vs := range r.Headers {
		h[k] = append([]string(nil), vs...)
	}
	if h.Get(wire.HdrDrillMode) == "" || r.HubMAC != "" {
		return h, ""
	}
	for k := range h {
		if strings.EqualFold(k, wire.HdrDrillMode) {
			delete(h, k)
		}
	}
	return h, "x-drill-mode ignored, no drill reproduced: the hub did not mark this copy (" + r.HubMACError + ")"
}

// runSandbox runs the child for r's stage on payload and fills r's
// verdict (checkCopy has judged r's copy).
func (f *Worker) runSandbox(ctx context.Context, r *Report, payload []byte) (*sandbox.Report, error) {
	headers, drillNote := childHeaders(r)
	partner := r.vouchedPartner() // a partner's own parse options only for the partner the hub vouched for
	in, err := encodeChildInput(preamble{Stage: r.Stage, Stream: r.OriginalStream, Seq: r.OriginalSeq, Partner: partner,
		Headers: headers, EDIFACT: f.edi.Options(partner)}, payload)
	if err != nil {
		return nil, err
	}
	spec := f.spec(r.Stage)
	if spec.MemoryLimit == 0 {
		spec.MemoryLimit = int64(f.cfg.MemoryLimit)
	}
	if spec.CPULimit == 0 {
		spec.CPULimit = f.cfg.CPULimit
	}
	if spec.Timeout == 0 {
		spec.Timeout = f.cfg.Timeout
	}
	f.met.inFlight.Inc()
	rep, err := sandbox.Run(ctx, &spec, in)
	f.met.inFlight.Dec()
	if err != nil {
		return nil, fmt.Errorf("analyse %s: %w", r.ID, err)
	}
	rep.PayloadBytes = len(payload) // the child read the preamble too; report the message's size
	rep.Notes = append(rep.Notes, "offsets are relative to the payload; the child got a one-line JSON preamble before it")
	if drillNote != "" {
		rep.Notes = append(rep.Notes, drillNote)
	}
	f.met.runs.WithLabelValues(string(rep.Outcome)).Inc()
	f.met.runDuration.Observe(rep.WallTime.Seconds())
	f.met.childCPU.Observe(rep.CPUTime.Seconds())
	f.met.childPeak.Observe(float64(rep.PeakRSSBytes))
	r.Sandbox, r.Verdict = rep, forensicVerdict(rep)
	r.AnalysedAt, r.AnalysedBy = time.Now().UTC(), f.actor
	return rep, nil
}

// finish stores the report, publishes the summary and audits it.
func (f *Worker) finish(ctx context.Context, store *Store, r *Report, payload []byte, reanalyse bool) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := store.save(sctx, r, payload, f.actor, reanalyse); err != nil {
		return err
	}
	// a copy the hub did not vouch for (anyone may publish on the poison
	// subjects) says nothing to the partner it names: its summary goes to
	// <prefix>.unknown
	partner := r.vouchedPartner()
	sum := Summary{ID: r.ID, Key: r.Key, Ticket: r.Ticket, Partner: partner, Stage: r.Stage, Outcome: string(r.Sandbox.Outcome),
		Summary: r.Sandbox.Summary, Verdict: r.Verdict, Bucket: f.cfg.Bucket, At: r.AnalysedAt, Reanalyse: reanalyse}
	if b, err := json.Marshal(sum); err == nil {
		// Core NATS, best effort: the report in the bucket is the record.
		_ = f.nc.Publish(f.cfg.SummarySubjectPrefix+"."+wire.SubjectToken(cmp.Or(partner, "unknown")), b)
	}
	action, dedupe := "forensic-report", wire.MsgID(r.PoisonStream, r.PoisonSeq, "forensic")
	if reanalyse {
		action, dedupe = "forensic-reanalyse", ""
	}
	_, err := f.audit.Append(sctx, audit.Event{Actor: f.actor, Action: action, IDs: []string{r.ID, r.Ticket},
		Reason: string(r.Sandbox.Outcome), PayloadBefore: r.PayloadSHA256,
		Details: map[string]string{"report": ReportObject(r.Key), "summary": escape.Header(r.Sandbox.Summary), "stage": r.Stage, "partner": r.Partner,
			"hub_mac": cmp.Or(r.HubMAC, "none: "+escape.Header(r.HubMACError))}}, dedupe)
	if err != nil {
		f.log.Warn().Err(err).Str("id", r.ID).Msg("audit event for the forensic report not written")
	}
	return nil
}

// Reanalyse runs the sandbox again on a stored payload (POISON:<seq>, a
// report key or a ticket ID) and overwrites the report; the ticket keeps
// its state and gets a note. It goes through the same breaker.
func (f *Worker) Reanalyse(ctx context.Context, id string) (*Report, error) {
	store, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	r, err := store.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	payload, err := store.Payload(ctx, r)
	if err != nil {
		return nil, err
	}
	if audit.PayloadHash(payload) != r.PayloadSHA256 {
		return nil, fmt.Errorf("stored payload of %s does not match its recorded SHA-256", r.ID)
	}
	f.checkCopy(r, macData(r, payload))
	unreadable := false
	if r.Upload != nil && r.Upload.Error != "" {
		// the upload's bytes could not be read last time (the payload is
		// its announcement): look again
		if payload, unreadable, err = f.realPayload(ctx, r, payload); err != nil {
			return nil, err
		}
	}
	if unreadable {
		f.unavailable(r, payload)
	} else {
		if err := f.breaker.Allow(); err != nil {
			return nil, err
		}
		if _, err := f.runSandbox(ctx, r, payload); err != nil {
			if ctx.Err() != nil {
				f.breaker.Release()
			} else {
				f.breaker.Failure()
				f.met.infraFailures.Inc()
			}
			return nil, err
		}
		f.breaker.Success()
	}
	r.Analyses++
	if err := f.finish(ctx, store, r, payload, true); err != nil {
		return nil, err
	}
	return r, nil
}
