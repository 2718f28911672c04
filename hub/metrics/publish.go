package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	ejs "github.com/edihub/edihub/jetstream"
)

// PublishHealth follows the publishes of outputs: whose their failures
// are (a metric by kind) and whether the environment refuses them now
// (the last failure of its kind is later than the last success), for
// /readyz.
type PublishHealth struct {
	Failures *prometheus.CounterVec // kind: message or environment
	lastOK   atomic.Int64           // unix nanoseconds
	lastEnv  atomic.Int64
}

// NewPublishHealth creates edihub_pipeline_publish_failures_total on reg.
func NewPublishHealth(reg prometheus.Registerer) *PublishHealth {
	p := &PublishHealth{Failures: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_pipeline_publish_failures_total",
		Help: "Failed publishes of a message's outputs, by whose failure it is: message (dead-lettered) or environment (retried, not charged; /readyz not ready while it lasts).",
	}, []string{"kind"})}
	for _, k := range []ejs.FailureKind{ejs.KindMessage, ejs.KindEnvironment} {
		p.Failures.WithLabelValues(string(k))
	}
	reg.MustRegister(p.Failures)
	return p
}

// OK notes outputs stored now.
func (p *PublishHealth) OK() { p.StoredAt(time.Now()) }

// StoredAt notes outputs stored at t.
func (p *PublishHealth) StoredAt(t time.Time) { p.lastOK.Store(t.UnixNano()) }

// LastOK is when outputs were last stored (the zero time: never).
func (p *PublishHealth) LastOK() time.Time {
	if n := p.lastOK.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// LastEnvFailure is when the environment last refused a publish (the
// zero time: never).
func (p *PublishHealth) LastEnvFailure() time.Time {
	if n := p.lastEnv.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// EnvFailed notes a publish the environment refused, now.
func (p *PublishHealth) EnvFailed() { p.lastEnv.Store(time.Now().UnixNano()) }

// Healthy is false from an environment failure until the next stored
// output, or until no such failure came for EnvFailureHold: the message
// that failed is redelivered within a second, so a lasting fault keeps
// refreshing it, and an instance whose partitions have no traffic (or
// were handed to another instance) is not held not-ready for good.
func (p *PublishHealth) Healthy() bool {
	env := p.lastEnv.Load()
	return env <= p.lastOK.Load() || time.Since(time.Unix(0, env)) > EnvFailureHold
}

// EnvFailureHold is how long an environment failure without a stored
// output since keeps /readyz not ready.
const EnvFailureHold = 10 * time.Second
