package hub

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// identicalPublishFailures is how many times one message's outputs may
// fail to be stored with the same error, while other messages' are stored,
// before that failure is taken as the message's own: a dead letter with
// the reason, never a retry for ever.
const identicalPublishFailures = 5

// publishFingerprint marks a failed publish of the outputs in a record.
const publishFingerprint = "publish-outputs"

// publishHealth follows the publishes of outputs: whose their failures
// are (a metric by kind) and whether the environment refuses them now
// (the last failure of its kind is later than the last success), for
// /readyz.
type publishHealth struct {
	failures *prometheus.CounterVec
	lastOK   atomic.Int64 // unix nanoseconds
	lastEnv  atomic.Int64
}

func newPublishHealth(reg prometheus.Registerer) *publishHealth {
	p := &publishHealth{failures: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_pipeline_publish_failures_total",
		Help: "Failed publishes of a message's outputs, by whose failure it is: message (dead-lettered) or environment (retried, not charged; /readyz not ready while it lasts).",
	}, []string{"kind"})}
	for _, k := range []ejs.FailureKind{ejs.KindMessage, ejs.KindEnvironment} {
		p.failures.WithLabelValues(string(k))
	}
	reg.MustRegister(p.failures)
	return p
}

func (p *publishHealth) ok() { p.lastOK.Store(time.Now().UnixNano()) }

// healthy is false from an environment failure until the next stored
// output, or until no such failure came for envFailureHold: the message
// that failed is redelivered within a second, so a lasting fault keeps
// refreshing lastEnv, and an instance whose partitions have no traffic
// (or were handed to another instance) is not held not-ready for good.
func (p *publishHealth) healthy() bool {
	env := p.lastEnv.Load()
	return env <= p.lastOK.Load() || time.Since(time.Unix(0, env)) > envFailureHold
}

// envFailureHold is how long an environment failure without a stored
// output since keeps /readyz not ready.
const envFailureHold = 10 * time.Second

// publishFailed decides what a failed publish of d's outputs becomes: the
// message's failure is a dead letter with the reason (cause unknown: the
// interchange is fine, its outputs do not fit this server); the
// environment's is redelivered, explained and not charged, unless it
// repeated identically on this message while other messages were stored.
func (h *Hub) publishFailed(d *delivery, rec counter.Record, attempts int, err error) {
	kind, why := ejs.ClassifyPublish(err)
	msg := "the outputs cannot be stored: " + why + " (" + err.Error() + ")"
	repeated := kind == ejs.KindEnvironment && h.repeatsIdentically(rec, err)
	if repeated {
		kind, msg = ejs.KindMessage, msg+"; failed identically on every one of the last "+
			strconv.Itoa(identicalPublishFailures)+" tries while other messages' outputs were stored"
	}
	h.pub.failures.WithLabelValues(string(kind)).Inc()
	if kind == ejs.KindMessage {
		h.log.Error().Err(err).Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).Bool("repeated", repeated).
			Msg("the outputs can never be stored; dead-lettering the message")
		o := outcome{stage: h.stages[len(h.stages)-1].Name, kind: counter.KindError, errType: "publish",
			msg: escape.Header(msg), fingerprint: publishFingerprint,
			failure: &Failure{Class: Permanent, Cause: wire.CauseUnknown, Err: errors.New(msg)}}
		h.deadLetter(d, o, wire.CauseUnknown, attempts, false, rec)
		return
	}
	h.pub.lastEnv.Store(time.Now().UnixNano())
	h.log.Error().Err(err).Uint64("seq", d.origSeq).Str("reason", why).
		Msg("storing the outputs (or the ledger's commit) failed for the environment; will redeliver")
	h.recordPublishFailure(d, err)
	_ = d.msg.NakWithDelay(time.Second)
}

// repeatsIdentically reports whether rec's latest failures are this same
// publish failure identicalPublishFailures-1 times, the first of them
// before the last output another message stored.
func (h *Hub) repeatsIdentically(rec counter.Record, err error) bool {
	want := publishFailureMessage(err)
	n := 0
	var first time.Time
	for i := len(rec.Failures) - 1; i >= 0 && n < identicalPublishFailures-1; i-- {
		f := rec.Failures[i]
		if f.Fingerprint != publishFingerprint || f.Message != want {
			return false
		}
		n, first = n+1, f.At
	}
	return n == identicalPublishFailures-1 && !first.IsZero() && h.pub.lastOK.Load() > first.UnixNano()
}

// publishFailureMessage is the Message recordPublishFailure stores.
func publishFailureMessage(err error) string {
	return escape.Header("not the message's fault: " + err.Error())
}

// outputsFit makes the outputs fit the connection's max payload before
// any is published: published in turn, those before one that does not
// would be stored (half an interchange downstream) and the ledger's
// commit started, for an attempt that can never succeed. One over it is
// stored aside by the claim check (claimcheck.go) when there is one, and
// refused when there is none. msgIDRoom is what the dedupe id's header
// adds. For outputs that fit this is one comparison each.
func (h *Hub) outputsFit(d *delivery, outs []*nats.Msg) error {
	const msgIDRoom = 256
	limit := h.nc.MaxPayload()
	for i, o := range outs {
		size := int64(len(o.Data)) + headerSize(o.Header) + msgIDRoom
		if size <= limit {
			continue
		}
		if h.claim != nil {
			stub, err := h.storeAside(d, i, o)
			if err != nil {
				return err
			}
			if size = int64(len(stub.Data)) + headerSize(stub.Header) + msgIDRoom; size <= limit {
				outs[i] = stub
				continue
			}
		}
		return fmt.Errorf("output %d of %d (%s, %d bytes with its headers, max payload %d): %w",
			i+1, len(outs), o.Subject, size, limit, nats.ErrMaxPayload)
	}
	return nil
}

// headerSize is the size of h on the wire: NATS/1.0, a line per value,
// the blank line.
func headerSize(h nats.Header) int64 {
	if len(h) == 0 {
		return 0
	}
	n := int64(len("NATS/1.0\r\n\r\n"))
	for k, vs := range h {
		for _, v := range vs {
			n += int64(len(k) + len(": ") + len(v) + len("\r\n"))
		}
	}
	return n
}
