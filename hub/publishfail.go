package hub

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

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
	h.pub.Failures.WithLabelValues(string(kind)).Inc()
	if kind == ejs.KindMessage {
		h.log.Error().Err(err).Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).Bool("repeated", repeated).
			Msg("the outputs can never be stored; dead-lettering the message")
		o := outcome{stage: h.stages[len(h.stages)-1].Name, kind: counter.KindError, errType: "publish",
			msg: escape.Header(msg), fingerprint: publishFingerprint,
			failure: &Failure{Class: Permanent, Cause: wire.CauseUnknown, Err: errors.New(msg)}}
		h.deadLetter(d, o, wire.CauseUnknown, attempts, false, rec)
		return
	}
	h.pub.EnvFailed()
	h.log.Error().Err(err).Uint64("seq", d.origSeq).Str("reason", why).
		Msg("storing the outputs (or the ledger's commit) failed for the environment; will redeliver")
	h.recordPublishFailure(d, err)
	_ = d.nak(time.Second)
}

// repeatsIdentically reports whether rec's latest failures are this same
// publish failure identicalPublishFailures-1 times, the first of them
// before the last output another message stored.
func (h *Hub) repeatsIdentically(rec counter.Record, err error) bool {
	return rec.RepeatsIdentically(publishFingerprint, publishFailureMessage(err), identicalPublishFailures-1, h.pub.LastOK())
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
// refused when there is none. For outputs that fit this is one
// comparison each.
func (h *Hub) outputsFit(d *delivery, outs []*nats.Msg) error {
	limit := h.nc.MaxPayload()
	for i, o := range outs {
		size := ejs.OutputSize(o)
		if size <= limit {
			continue
		}
		if h.claim != nil {
			stub, err := h.storeAside(d, i, o)
			if err != nil {
				return err
			}
			if size = ejs.OutputSize(stub); size <= limit {
				outs[i] = stub
				continue
			}
		}
		return fmt.Errorf("output %d of %d (%s, %d bytes with its headers, max payload %d): %w",
			i+1, len(outs), o.Subject, size, limit, nats.ErrMaxPayload)
	}
	return nil
}
