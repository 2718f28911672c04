package bridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Bridge runs the configured routes. Build it with New, run it once with Run.
type Bridge struct {
	cfg *Config
	nc  *nats.Conn
	js  js.JetStream
	log zerolog.Logger
	m   *metrics

	in  []*inbound
	out []*outbound

	sec   []kgo.Opt       // SASL and TLS options of every Kafka client
	carry map[string]bool // CarryHeaders, lower case

	// stopCtx ends ShutdownTimeout after Run's ctx: everything done on
	// the way out (flush, commit, leave group, NATS flush) is bounded by it.
	stopCtx context.Context
}

// route is what the lag reporter and Run need of a route.
type route interface {
	name() string
	run(ctx context.Context) error
	// lag returns the records not yet moved; ok is false while unknown.
	lag(ctx context.Context) (n int64, ok bool)
}

// New checks cfg and prepares the routes. It does no I/O: Kafka and
// JetStream are first touched by Run, so a hub can start while Kafka is
// still down. nc and js belong to the caller, who closes them after Run.
func New(cfg *Config, nc *nats.Conn, j js.JetStream, log zerolog.Logger, reg prometheus.Registerer) (*Bridge, error) {
	if cfg == nil {
		return nil, errors.New("bridge: no config")
	}
	if nc == nil || j == nil {
		return nil, errors.New("bridge: no NATS connection")
	}
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("bridge config: %w", err)
	}
	sec, err := c.Security.kafkaOpts()
	if err != nil {
		return nil, fmt.Errorf("bridge config: %w", err)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("bridge metrics: %w", err)
	}
	b := &Bridge{cfg: c, nc: nc, js: j, log: log.With().Str("component", "bridge").Logger(), m: m, sec: sec, carry: map[string]bool{}}
	for _, hn := range c.CarryHeaders {
		b.carry[strings.ToLower(hn)] = true
	}
	for _, r := range c.Inbound {
		src, _ := parsePartnerFrom(r.PartnerFrom) // validated above
		b.in = append(b.in, &inbound{b: b, r: r, src: src, log: b.log.With().Str("route", r.Name).Str("direction", "in").Logger()})
	}
	for _, r := range c.Outbound {
		b.out = append(b.out, &outbound{b: b, r: r, log: b.log.With().Str("route", r.Name).Str("direction", "out").Logger()})
	}
	return b, nil
}

// Run moves records until ctx is done, then finishes the batches in flight
// (bounded by ShutdownTimeout), commits and acks what was moved, and
// returns. It returns an error only when a Kafka client cannot be built;
// broker and NATS outages are retried with backoff for as long as ctx lives.
func (b *Bridge) Run(parent context.Context) error {
	// A route that must stop the bridge (errors_tolerance: none) cancels
	// ctx; everything else stops with it, as on SIGTERM.
	ctx, stopAll := context.WithCancel(parent)
	defer stopAll()
	stopCtx, stopCancel := flushContext(ctx, b.cfg.ShutdownTimeout)
	defer stopCancel()
	b.stopCtx = stopCtx
	var routes []route
	var prod *kgo.Client
	needProd := len(b.out) > 0
	for _, in := range b.in {
		needProd = needProd || in.r.DLTTopic != ""
	}
	if needProd {
		var err error
		if prod, err = kgo.NewClient(b.producerOpts()...); err != nil {
			return fmt.Errorf("bridge: kafka producer: %w", err)
		}
		defer prod.Close()
		for _, o := range b.out {
			o.prod = prod
			routes = append(routes, o)
		}
	}
	for _, in := range b.in {
		in.prod = prod
		routes = append(routes, in)
	}
	b.log.Info().Strs("brokers", b.cfg.Brokers).Int("inbound", len(b.in)).Int("outbound", len(b.out)).Msg("bridge starting")

	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	for _, r := range routes {
		wg.Go(func() {
			if err := r.run(ctx); err != nil {
				stopAll()
				errMu.Lock()
				errs = append(errs, err)
				errMu.Unlock()
			}
		})
	}
	routesDone := make(chan struct{})
	go func() { wg.Wait(); close(routesDone) }()
	lagCtx, stopLag := context.WithCancel(context.WithoutCancel(ctx))
	lagDone := make(chan struct{})
	go func() { defer close(lagDone); b.reportLag(lagCtx, routes) }()
	healthDone := make(chan struct{})
	if hc, err := kgo.NewClient(b.clientOpts("health")...); err != nil {
		close(healthDone)
		b.log.Warn().Err(err).Msg("no broker health checks")
	} else {
		go func() { defer close(healthDone); defer hc.Close(); b.health(lagCtx, hc) }()
	}

	abandoned := false
	select {
	case <-routesDone:
	case <-stopCtx.Done():
		// The routes had shutdown_timeout; what they still hold is not
		// committed or acked and comes again on the next start.
		select {
		case <-routesDone:
		case <-time.After(shutdownGrace):
			abandoned = true
			b.log.Error().Dur("shutdown_timeout", b.cfg.ShutdownTimeout).Msg("routes did not stop within shutdown_timeout; stopping without them (nothing is lost: what they held is re-read on the next start)")
		}
	}
	stopLag()
	<-lagDone
	<-healthDone
	if prod != nil && !abandoned {
		_ = prod.Flush(stopCtx) // every produce was already awaited; this only drains
	}
	// Acks are fire-and-forget publishes on the caller's connection: make
	// sure the server has them before the caller closes it.
	nctx, ncancel := context.WithTimeout(stopCtx, b.cfg.ShutdownTimeout)
	defer ncancel()
	if err := b.nc.FlushWithContext(nctx); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && stopCtx.Err() == nil {
		b.log.Warn().Err(err).Msg("flush NATS acks on shutdown")
	}
	b.log.Info().Msg("bridge stopped")
	errMu.Lock()
	defer errMu.Unlock()
	return errors.Join(errs...)
}

// shutdownGrace is how long Run waits past shutdown_timeout for routes
// finishing their last step before it returns without them.
const shutdownGrace = 500 * time.Millisecond

// reportLag refreshes the lag gauges every LagInterval and logs them every
// LagLogInterval, so an operator sees a stuck route without a dashboard.
func (b *Bridge) reportLag(ctx context.Context, routes []route) {
	t := time.NewTicker(b.cfg.LagInterval)
	defer t.Stop()
	lastLog := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		logNow := time.Since(lastLog) >= b.cfg.LagLogInterval
		for _, r := range routes {
			qctx, cancel := context.WithTimeout(ctx, b.cfg.LagInterval)
			n, ok := r.lag(qctx)
			cancel()
			if !ok {
				continue
			}
			b.m.lag.WithLabelValues(r.name()).Set(float64(n))
			if logNow {
				b.log.Info().Str("route", r.name()).Int64("lag_records", n).Msg("bridge lag")
			}
		}
		if logNow {
			lastLog = time.Now()
		}
	}
}

// clientOpts are what every Kafka client of the bridge shares: brokers,
// client id, backoff and the logger (security is added here too).
func (b *Bridge) clientOpts(role string) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(b.cfg.Brokers...),
		kgo.ClientID(b.cfg.ClientID),
		kgo.RetryBackoffFn(b.kafkaBackoff),
		kgo.WithLogger(newKgoLogger(b.log.With().Str("kafka", role).Logger())),
	}, b.sec...)
}

func (b *Bridge) producerOpts() []kgo.Opt {
	opts := append(b.clientOpts("producer"),
		// Idempotent writes are kgo's default; acks=all is what makes an
		// acknowledged produce safe to ack on the NATS side.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(b.cfg.MaxRecordBytes),
		kgo.ProducerLinger(time.Millisecond),
		kgo.RecordPartitioner(dltPartitioner{}),
	)
	if b.cfg.CreateTopics {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	return opts
}

// kafkaBackoff is kgo's wait between its own request retries: the same
// bounds as the bridge's, so a broker outage is retried at the same pace.
func (b *Bridge) kafkaBackoff(tries int) time.Duration {
	d := b.cfg.BackoffMin << min(tries, 16)
	return min(d, b.cfg.BackoffMax)
}

// flushContext is cancelled ShutdownTimeout after ctx is done. Work that
// was already read is finished under it, so a stop does not throw away a
// batch that is one ack away from done, yet a dead broker cannot hold the
// shutdown forever.
func flushContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(d, cancel) })
	return fctx, func() { stop(); cancel() }
}

// backoff doubles from min to max with jitter, so many routes that lost
// the same broker do not retry in lockstep.
type backoff struct {
	min, max, cur time.Duration
}

func (b *Bridge) newBackoff() *backoff {
	return &backoff{min: b.cfg.BackoffMin, max: b.cfg.BackoffMax}
}

// wait sleeps for the next interval; false when ctx ended first.
func (bo *backoff) wait(ctx context.Context) bool {
	if bo.cur == 0 {
		bo.cur = bo.min
	} else {
		bo.cur = min(bo.cur*2, bo.max)
	}
	d := bo.cur/2 + rand.N(bo.cur/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (bo *backoff) reset() { bo.cur = 0 }

// kgoLogger passes franz-go's warnings and errors to zerolog; its info
// lines (every metadata refresh) would drown the hub's own. While a broker
// is down kgo repeats the same warning on every dial, so a message is
// logged at most once per kgoLogQuiet and the repeats go to debug.
type kgoLogger struct {
	l    zerolog.Logger
	mu   sync.Mutex
	last map[string]time.Time
}

const kgoLogQuiet = 30 * time.Second

func newKgoLogger(l zerolog.Logger) *kgoLogger {
	return &kgoLogger{l: l, last: map[string]time.Time{}}
}

func (k *kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (k *kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	msg = dropSASLHint(msg, keyvals)
	k.mu.Lock()
	repeat := time.Since(k.last[msg]) < kgoLogQuiet
	if !repeat {
		k.last[msg] = time.Now()
	}
	k.mu.Unlock()
	var ev *zerolog.Event
	switch {
	case repeat:
		ev = k.l.Debug()
	case level == kgo.LogLevelError:
		ev = k.l.Error()
	case level == kgo.LogLevelWarn:
		ev = k.l.Warn()
	default:
		ev = k.l.Debug()
	}
	ev.Fields(keyvals).Msg(msg)
}

// outage logs the first failure of a run and the recovery at warn and
// info, and the retries in between at debug: one line per outage, not one
// per backoff step.
type outage struct {
	since time.Time
	n     int
}

func (o *outage) fail(log zerolog.Logger, err error, what string) {
	o.n++
	if o.n == 1 {
		o.since = time.Now()
		log.Warn().Err(err).Msg(what + "; retrying with backoff")
		return
	}
	log.Debug().Err(err).Int("retry", o.n).Msg(what)
}

func (o *outage) ok(log zerolog.Logger, what string) {
	if o.n > 0 {
		log.Info().Dur("after", time.Since(o.since)).Int("failures", o.n).Msg(what)
		o.n = 0
	}
}
