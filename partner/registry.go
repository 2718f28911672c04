package partner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/edifact/directory"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Options are a Registry's dependencies; nil fields mean defaults.
type Options struct {
	Logger   zerolog.Logger
	Registry prometheus.Registerer // nil: a private registry
	// Now is the clock of acknowledgement dates (nil: time.Now).
	Now func() time.Time
	// Directories are the UN/EDIFACT directories (nil: directory.Builtin,
	// decoded once per Registry).
	Directories *directory.Set
	// Replicas of the OUTBOUND stream and the acknowledgement reference
	// bucket (0: 1; nats.replicas on a cluster).
	Replicas int
	// AckRefBucket is the KV bucket of the per-partner acknowledgement
	// reference counters ("": wire.DefaultAckRefBucket), made by Provision.
	AckRefBucket string
}

// Registry holds the partner profiles in force and answers the parse
// stage (it implements parse.Agreements of parse). Reload swaps the set atomically;
// an interchange in flight finishes with the set it started with for each
// question it asks.
type Registry struct {
	cfg  Config
	set  atomic.Pointer[Set]
	log  zerolog.Logger
	now  func() time.Time
	reps int // OUTBOUND's replicas
	// refs counts the acknowledgement references per partner (KV), set
	// by Provision; nil: references derive from the INGEST sequence
	refs       atomic.Pointer[ackRefs]
	refsBucket string
	met        metrics
	last       atomic.Int64 // unix seconds of the last good load

	validators validators
	dirDefault directory.Strictness
}

type metrics struct {
	reloads   *prometheus.CounterVec
	profiles  prometheus.Gauge
	decisions *prometheus.CounterVec
	acks      *prometheus.CounterVec
}

// New loads the profiles of c; a bad profile is an error (serve refuses to
// start).
func New(c Config, o *Options) (*Registry, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	c.SetDefaults()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	r := &Registry{cfg: c, log: opts.Logger.With().Str("component", "partners").Logger(), now: opts.Now, reps: max(1, opts.Replicas),
		refsBucket: cmp.Or(opts.AckRefBucket, wire.DefaultAckRefBucket)}
	r.met = metrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edihub_partner_reloads_total",
			Help: "Partner profile reloads by result (ok, error: the previous profiles stay in force)."}, []string{"result"}),
		profiles: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edihub_partner_profiles_count",
			Help: "Partner profiles in force."}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edihub_partner_rejections_total",
			Help: "Interchanges refused by a partner agreement, by cause and reason."}, []string{"cause", "reason"}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edihub_partner_acks_total",
			Help: "Acknowledgements built for partners, by type and result (accepted, rejected)."}, []string{"type", "result"}),
	}
	var err error
	for _, c := range []prometheus.Collector{r.met.reloads, r.met.profiles, r.met.decisions, r.met.acks} {
		if err = reg.Register(c); err != nil {
			return nil, fmt.Errorf("partner metrics: %w", err)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	r.dirDefault = directory.Strictness(c.Directory)
	if r.validators, err = newValidators(opts.Directories, c.Directories); err != nil {
		return nil, err
	}
	s, err := Load(c)
	if err != nil {
		return nil, err
	}
	r.swap(s)
	return r, nil
}

func (r *Registry) swap(s *Set) {
	r.set.Store(s)
	r.met.profiles.Set(float64(len(s.profiles)))
	r.last.Store(r.now().Unix())
}

// Set is the profile set in force.
func (r *Registry) Set() *Set { return r.set.Load() }

// Reload reads the profiles again. On any error the set in force stays,
// the error is logged and counted (edihub_partner_reloads_total{result=
// "error"}) and returned.
func (r *Registry) Reload() error {
	s, err := Load(r.cfg)
	if err != nil {
		r.met.reloads.WithLabelValues("error").Inc()
		r.log.Error().Err(err).Int("profiles_in_force", len(r.Set().profiles)).
			Msg("partner profiles not reloaded: the previous profiles stay in force; fix the file and send SIGHUP again")
		return err
	}
	r.swap(s)
	r.met.reloads.WithLabelValues("ok").Inc()
	r.log.Info().Int("profiles", len(s.profiles)).Strs("partners", s.IDs()).Msg("partner profiles reloaded")
	return nil
}

// ReloadOn reloads whenever sig delivers (serve passes SIGHUP), until ctx
// ends.
func (r *Registry) ReloadOn(ctx context.Context, sig <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			_ = r.Reload()
		}
	}
}

// OutboundStream is the OUTBOUND stream's configuration.
func (r *Registry) OutboundStream() js.StreamConfig {
	c := OutboundStreamConfig(r.cfg.OutboundStream)
	c.Replicas = r.reps
	return c
}

// OutboundStreamConfig is the stream acknowledgements are stored in.
func OutboundStreamConfig(name string) js.StreamConfig {
	if name == "" {
		name = wire.DefaultOutboundStream
	}
	return js.StreamConfig{Name: name, Subjects: []string{wire.OutboundAll}, Storage: js.FileStorage,
		Duplicates: 10 * time.Minute}
}

// Provision creates or updates the OUTBOUND stream.
func (r *Registry) Provision(ctx context.Context, j js.JetStream) error {
	if _, err := ejs.EnsureStream(ctx, j, r.OutboundStream()); err != nil {
		return fmt.Errorf("partner acknowledgements: %w", err)
	}
	refs, err := newAckRefs(ctx, j, r.refsBucket, r.reps, r.now)
	if err != nil {
		return fmt.Errorf("partner acknowledgements: %w", err)
	}
	r.refs.Store(refs)
	return nil
}

// Decided is told by the parse stage what it acts on (failure nil:
// accepted) and the acknowledgements it sends: the rejection and
// acknowledgement counters. The stage publishes the acknowledgements
// (Acks builds them).
func (r *Registry) Decided(failure error, acks []*nats.Msg) {
	var rej *Rejection
	if errors.As(failure, &rej) {
		r.met.decisions.WithLabelValues(rej.DLQCause, rej.Reason).Inc()
	}
	for _, a := range acks {
		r.met.acks.WithLabelValues(a.Header.Get(wire.HdrMessageType), a.Header.Get(wire.HdrAckResult)).Inc()
	}
}

// numbered says whether a profile agrees any acknowledgement that carries
// our control references (CONTRL, APERAK, TA1, 997/999, MLR).
func (a AckConfig) numbered() bool {
	return a.CONTRL != AckNone || a.X12 != AckNone || a.TA1 != AckNone || a.MLR != AckNone || a.APERAK
}

// NextAckRef reserves the block the acknowledgements of one interchange of
// partner are numbered from (parse.AckNumberer): the partner's counter in
// KV, so references keep counting up when INGEST starts again. 0 (the
// INGEST sequence is used) for a partner without a profile or whose
// profile agrees no numbered acknowledgement, before
// Provision, or when the counter does not answer: an acknowledgement is
// never held back for a counter. The stage calls it, not Decide (it writes).
func (r *Registry) NextAckRef(ctx context.Context, partner string) uint64 {
	refs := r.refs.Load()
	if refs == nil {
		return 0
	}
	if p, ok := r.Set().Get(partner); !ok || !p.Ack.numbered() {
		return 0 // nothing to number: no KV round trip on the hot path
	}
	n, err := refs.next(ctx, partner)
	if err != nil {
		r.log.Warn().Err(err).Str("partner", partner).Msg("acknowledgement reference from the INGEST sequence: counter unavailable")
		return 0
	}
	return n
}
