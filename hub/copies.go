package hub

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/headers"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// hubCopy is one copy the hub stores of a message: a delivery's poison,
// dead-letter or retry copy, or the backstop's of a message a consumer
// gave up on. Every copy is built, stored and acked by copy.
type hubCopy struct {
	kind, subject string // kind: poison, dlq, retry (the dedupe id's suffix, the metric label)
	header        nats.Header
	data          []byte
	producers     bool   // header is a producer's (cleaned), not the hub's own from the hop before
	stream        string // where the copied message is stored
	seq           uint64
	// The interchange's identity across hops; partner from a stored
	// subject, never a header ("" when unknown).
	origStream, origTopic, partner, messageID string
	origSeq                                   uint64
	partition, retryCount                     int
	firstAt                                   time.Time

	set       nats.Header // the kind's own headers, over the ones above
	opts      []js.PublishOpt
	d         *delivery // acked once the copy is stored; nil: nothing to ack
	beforeAck func()    // what must exist before the original is gone
	stored    *nats.Msg
}

// copyOf is a copy of the delivery's payload for subject.
func (h *Hub) copyOf(d *delivery, kind, subject string, rec counter.Record) *hubCopy {
	if d.messageID == "" { // the stage failed before it read the envelope
		d.messageID = h.controlRef(d.msg.Data())
	}
	topic := d.origTopic
	if topic == "" && d.partner != "" {
		topic = wire.IngestSubject(d.partner)
	}
	// A retry's headers are the hub's own copy from the hop before (once
	// bindRetry matched it to its original); an INGEST message's, or an
	// unmatched retry's, are a producer's.
	return &hubCopy{kind: kind, subject: subject, header: d.msg.Headers(), data: d.msg.Data(),
		producers: d.src.partition >= 0 || d.partner == "", stream: d.meta.Stream, seq: d.meta.Sequence.Stream,
		origStream: d.origStream, origSeq: d.origSeq, origTopic: topic, partner: d.partner, partition: d.partition,
		messageID: d.messageID, retryCount: d.retryCount, firstAt: rec.FirstAt, set: nats.Header{}, d: d}
}

// build is the copy: the payload byte for byte, the producer's headers
// (cleaned, never the server's Nats-* ones), the x-* headers that say
// where it came from, the kind's own, and x-hub-mac.
func (h *Hub) build(c *hubCopy) *nats.Msg {
	out := ejs.CopyHeaders(c.header)
	if c.producers {
		out = headers.Producer(c.header)
		linkReplay(out, audit.ReplayedFrom(h.keys, c.header, c.data), c.header.Get(wire.HdrReplayedBy))
	}
	set := func(k, v string) {
		if v != "" {
			out.Set(k, v)
		}
	}
	set(wire.HdrOriginalTopic, c.origTopic)
	set(wire.HdrOriginalStream, c.origStream)
	set(wire.HdrOriginalSeq, strconv.FormatUint(c.origSeq, 10))
	set(wire.HdrPartnerID, c.partner)
	if c.partition >= 0 {
		set(wire.HdrPartition, strconv.Itoa(c.partition))
	}
	set(wire.HdrMessageID, c.messageID)
	if out.Get(wire.HdrCorrelationID) == "" {
		out.Set(wire.HdrCorrelationID, c.origStream+"-"+strconv.FormatUint(c.origSeq, 10))
	}
	if out.Get(wire.HdrFirstFailedAt) == "" && !c.firstAt.IsZero() {
		out.Set(wire.HdrFirstFailedAt, c.firstAt.UTC().Format(time.RFC3339Nano))
	}
	set(wire.HdrRetryCount, strconv.Itoa(c.retryCount))
	if h.cfg.Drill && out.Get(wire.HdrDrill) != "" {
		out.Set(wire.HdrDrillMode, "on")
	} else {
		out.Del(wire.HdrDrillMode) // never trust one a partner sent
	}
	for k, vs := range c.set {
		out[k] = vs
	}
	audit.SignCopy(h.keys, out, c.data) // x-hub-mac: the sandbox trusts x-drill-mode only with it
	return &nats.Msg{Subject: c.subject, Header: out, Data: c.data}
}

// linkReplay keeps, on the copy of an operator's replay (its
// x-replay-mac verified: from, else ""), the hub's x-replayed-from and
// x-replayed-by instead of the producer-named ones Producer made of them:
// the new dead letter names the message it was replayed from.
func linkReplay(out nats.Header, from, by string) {
	if from == "" {
		return
	}
	for _, k := range []string{wire.HdrReplayedFrom, wire.HdrReplayedBy, wire.HdrReplayMAC} {
		out.Del(wire.ProducerName(k))
	}
	out.Set(wire.HdrReplayedFrom, escape.Header(from))
	if by != "" {
		out.Set(wire.HdrReplayedBy, escape.Header(by))
	}
}

func setFailure(h nats.Header, o outcome) {
	h.Set(wire.HdrErrorClass, string(o.failure.Class))
	h.Set(wire.HdrErrorCause, o.failure.Cause)
	h.Set(wire.HdrErrorMsg, escape.Header(o.msg))
	h.Set(wire.HdrFingerprint, o.fingerprint)
	h.Set(wire.HdrStage, o.stage)
	var fh FailureHeaderer
	if errors.As(o.failure, &fh) {
		for k, v := range fh.FailureHeaders() {
			if wire.RefusalHeader(k) && v != "" {
				h.Set(k, escape.Header(v))
			}
		}
	}
}

// copy is the one way a message leaves its source for another stream:
// build the copy, store it with a dedupe id (storeCopy), and only then ack
// the original. A crash between the two redelivers the original, whose
// re-publish the server drops as a duplicate. beforeAck runs between the
// two: what it writes (the audit event of a quarantine) exists before the
// original is gone. It returns false only when the hub stops first.
func (h *Hub) copy(ctx context.Context, c *hubCopy) bool {
	c.stored = h.build(c)
	id := wire.MsgID(c.stream, c.seq, c.kind)
	if c.d != nil {
		// The copy, the audit event and the ack may take longer than
		// AckWait on a busy server: the original stays in progress
		// meanwhile, or the server would hand it out again behind our back.
		stop := ejs.KeepAlive(c.d.msg, h.exec.heartbeat)
		defer stop()
	}
	ack, err := h.storeCopy(ctx, c, id)
	if err != nil {
		if c.d != nil { // only when the hub stops: the message stays in its source
			_ = c.d.nak(5 * time.Second)
		}
		return false
	}
	if ack.Duplicate {
		h.met.Duplicates.Inc()
	}
	if c.d != nil && c.kind == "poison" && h.hooks.afterQuarantinePublish != nil {
		h.hooks.afterQuarantinePublish(c.seq)
	}
	if c.beforeAck != nil {
		c.beforeAck()
	}
	if c.d == nil { // the backstop's: the server has already given up on the original
		return true
	}
	// A plain ack: should it be lost, the redelivered original is copied
	// again under the same id, which the server drops (the duplicate window
	// is far longer than AckWait), and acked again.
	if err := c.d.msg.Ack(); err != nil {
		h.log.Warn().Err(err).Str("id", id).Msg("ack after copy failed; a redelivery will be deduplicated")
	}
	h.forget(c.d)
	return true
}

// quarantine moves a poison message to edi.poison.<stage>, audits it and
// alerts. The partition moves on.
func (h *Hub) quarantine(d *delivery, v verdict, rec counter.Record) {
	c := h.copyOf(d, "poison", wire.PoisonSubject(v.stage), rec)
	headers.SetPoison(c.set, v.cause, v.class, v.message, v.stage, v.attempts)
	if v.deaths > 0 {
		c.set.Set(wire.HdrProcessDeaths, strconv.Itoa(v.deaths))
	}
	if last, ok := rec.Last(); ok {
		c.set.Set(wire.HdrFingerprint, last.Fingerprint)
		c.set.Set(wire.HdrErrorCause, last.Cause)
	}
	q := poisonCopy{hubCopy: c, stage: v.stage, cause: v.cause, attempts: v.attempts, message: v.message}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.beforeAck = func() { h.auditQuarantine(ctx, q) }
	if !h.copy(h.runCtx, c) {
		return
	}
	h.emit(d, wire.Event{Kind: wire.EventQuarantined, Stage: v.stage, Attempt: v.attempts, Class: v.class, Cause: v.cause,
		Error: escape.Header(v.message), Subject: c.subject})
	h.met.Messages.WithLabelValues(v.stage, "poison").Inc()
	h.met.Attempts.WithLabelValues("poison").Observe(float64(v.attempts))
	h.processed.Add(1)
	h.quarantined(ctx, q)
}

// poisonCopy is what every path into POISON knows of the message: the
// pipeline's own quarantine and the MAX_DELIVERIES backstop share the
// audit event, the metric, the log line and the alert.
type poisonCopy struct {
	*hubCopy
	stage, cause, message string
	attempts              int
	labels                map[string]string // extra alert labels
}

// auditQuarantine appends the quarantine event (deduplicated by the copied
// message's identity, so a crash and a second copy write it once).
func (h *Hub) auditQuarantine(ctx context.Context, q poisonCopy) {
	_, err := h.audit.Append(ctx, audit.Event{
		Actor: h.actor, Action: "quarantine", IDs: []string{wire.DefaultPoisonStream + ":" + wire.MsgRef{Stream: q.origStream, Seq: q.origSeq}.String()},
		Reason: q.cause, PayloadBefore: audit.PayloadHash(q.data),
		Details: map[string]string{"stage": q.stage, "partner": q.partner, "partition": strconv.Itoa(q.partition),
			"attempts": strconv.Itoa(q.attempts), "error": escape.Header(q.message)},
	}, wire.MsgID(q.stream, q.seq, "audit-quarantine"))
	if err != nil {
		h.log.Error().Err(err).Msg("audit event for quarantine not written")
	}
}

// quarantined counts, logs and alerts a stored poison copy.
func (h *Hub) quarantined(ctx context.Context, q poisonCopy) {
	h.met.Poison.WithLabelValues(q.stage, q.cause).Inc()
	h.log.Warn().Str("stage", q.stage).Str("partner", escape.Line(q.partner)).Int("partition", q.partition).
		Uint64("seq", q.origSeq).Str("cause", q.cause).Int("attempts", q.attempts).Str("error", escape.Header(q.message)).
		Msg("poison message quarantined; the partition moves on")
	labels := map[string]string{"stage": q.stage, "partition": strconv.Itoa(q.partition),
		"sequence": strconv.FormatUint(q.origSeq, 10), "cause": q.cause}
	for k, v := range q.labels {
		labels[k] = v
	}
	h.alerter.Fire(ctx, alert.Alert{
		Name: "PoisonMessageDetected", Severity: "critical", Partner: q.partner,
		Summary: "poison message quarantined in stage " + q.stage + ": " + q.cause,
		Labels:  labels,
	})
}

// deadLetter moves a catalogued failure to edi.<stage>.dlq.<cause>, with a
// per-message TTL from the cause's retention.
func (h *Hub) deadLetter(d *delivery, o outcome, cause string, attempts int, exhausted bool, rec counter.Record) {
	now := time.Now()
	c := h.copyOf(d, "dlq", wire.DLQSubject(o.stage, cause), rec)
	c.firstAt = cmp.Or(c.firstAt, now) // failed for the first time just now
	setFailure(c.set, o)
	c.set.Set(wire.HdrErrorCause, cause)
	c.set.Set(wire.HdrAttempts, strconv.Itoa(attempts))
	c.set.Set(wire.HdrDetectedAt, now.UTC().Format(time.RFC3339Nano))
	if exhausted {
		c.set.Set(wire.HdrErrorClass, "exhausted")
	}
	if ttl := h.cfg.DLQ.Retention[cause]; ttl > 0 {
		c.opts = append(c.opts, js.WithMsgTTL(ttl))
	}
	if !h.copy(h.runCtx, c) {
		return
	}
	h.emit(d, wire.Event{Kind: wire.EventDeadLettered, Stage: o.stage, Attempt: attempts, Class: c.stored.Header.Get(wire.HdrErrorClass),
		Cause: cause, Error: escape.Header(o.msg), Subject: c.subject})
	h.met.DeadLetters.WithLabelValues(o.stage, cause).Inc()
	h.deadLettered.Add(1)
	h.met.Messages.WithLabelValues(o.stage, "dead-letter").Inc()
	h.met.Attempts.WithLabelValues("dead-letter").Observe(float64(attempts))
	h.processed.Add(1)
	h.log.Info().Str("stage", o.stage).Str("partner", d.partner).Uint64("seq", d.origSeq).Str("cause", cause).
		Bool("exhausted", exhausted).Str("error", escape.Header(o.msg)).Msg("dead-lettered")
}

// scheduleRetry hands the message to JetStream's scheduler: it waits in
// the RETRY stream, costs the hub nothing, and appears on the tier's due
// subject when the tier is up. The partition goes on at once.
func (h *Hub) scheduleRetry(d *delivery, o outcome, tier int, rec counter.Record) {
	delay := h.cfg.Retry.Tiers[tier]
	id := d.origStream + "-" + strconv.FormatUint(d.origSeq, 10) + "-" + strconv.Itoa(tier+1)
	c := h.copyOf(d, "retry", wire.RetryScheduleSubject(o.stage, delay, id), rec)
	c.firstAt = cmp.Or(c.firstAt, time.Now())
	c.retryCount = tier + 1
	setFailure(c.set, o)
	c.set.Set(wire.HdrRetryTier, wire.TierName(delay))
	c.opts = []js.PublishOpt{js.WithScheduleAt(dueAt(time.Now(), delay)), js.WithScheduleTarget(wire.RetryDueSubject(o.stage, delay))}
	if !h.copy(h.runCtx, c) {
		return
	}
	h.emit(d, wire.Event{Kind: wire.EventRetryScheduled, Stage: o.stage, Attempt: tier + 1, Class: string(o.failure.Class),
		Cause: o.failure.Cause, Error: escape.Header(o.msg), Subject: wire.RetryDueSubject(o.stage, delay)})
	h.met.Retries.WithLabelValues(o.stage, wire.TierName(delay)).Inc()
	h.met.Messages.WithLabelValues(o.stage, "retry").Inc()
}

// controlRef names the interchange in a payload by the first stage that
// can (Stage.ControlRef); "" when none can.
func (h *Hub) controlRef(data []byte) string {
	for _, st := range h.stages {
		if st.ControlRef != nil {
			if ref := st.ControlRef(data); ref != "" {
				return ref
			}
		}
	}
	return ""
}
