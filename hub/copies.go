package hub

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/alert"
	"github.com/edihub/edihub/hub/audit"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// copyMsg is a byte-for-byte copy of the delivery's payload for subject,
// with the producer's headers (minus the server's Nats-* ones) and the
// x-* headers that say where it came from.
func (h *Hub) copyMsg(d *delivery, subject string, rec counter.Record) *nats.Msg {
	// A retry's headers are the hub's own copy from the hop before (once
	// bindRetry matched it to its original); an INGEST message's, or an
	// unmatched retry's, are a producer's, and are cleaned.
	out := ejs.CopyHeaders(d.msg.Headers())
	if d.src.partition >= 0 || d.partner == "" {
		out = producerHeaders(d.msg.Headers())
	}
	set := func(k, v string) {
		if v != "" {
			out.Set(k, v)
		}
	}
	topic := d.origTopic
	if topic == "" && d.partner != "" {
		topic = wire.IngestSubject(d.partner)
	}
	set(wire.HdrOriginalTopic, topic)
	set(wire.HdrOriginalStream, d.origStream)
	set(wire.HdrOriginalSeq, strconv.FormatUint(d.origSeq, 10))
	set(wire.HdrPartnerID, d.partner)
	set(wire.HdrPartition, strconv.Itoa(d.partition))
	set(wire.HdrMessageID, d.messageID)
	if out.Get(wire.HdrCorrelationID) == "" {
		out.Set(wire.HdrCorrelationID, d.origStream+"-"+strconv.FormatUint(d.origSeq, 10))
	}
	if out.Get(wire.HdrFirstFailedAt) == "" && !rec.FirstAt.IsZero() {
		out.Set(wire.HdrFirstFailedAt, rec.FirstAt.UTC().Format(time.RFC3339Nano))
	}
	set(wire.HdrRetryCount, strconv.Itoa(d.retryCount))
	if h.cfg.Drill && out.Get(wire.HdrDrill) != "" {
		out.Set(wire.HdrDrillMode, "on")
	} else {
		out.Del(wire.HdrDrillMode) // never trust one a partner sent
	}
	audit.SignCopy(h.keys, out, d.msg.Data()) // x-hub-mac: the sandbox trusts x-drill-mode only with it
	return &nats.Msg{Subject: subject, Header: out, Data: d.msg.Data()}
}

func setFailure(m *nats.Msg, o outcome) {
	m.Header.Set(wire.HdrErrorClass, string(o.failure.Class))
	m.Header.Set(wire.HdrErrorCause, o.failure.Cause)
	m.Header.Set(wire.HdrErrorMsg, escape.Header(o.msg))
	m.Header.Set(wire.HdrFingerprint, o.fingerprint)
	m.Header.Set(wire.HdrStage, o.stage)
	var fh FailureHeaderer
	if errors.As(o.failure, &fh) {
		for k, v := range fh.FailureHeaders() {
			if wire.RefusalHeader(k) && v != "" {
				m.Header.Set(k, escape.Header(v))
			}
		}
	}
}

// publishThenAck is the one way a message leaves its source for another
// stream: publish with a dedupe id, wait for the server's ack, and only
// then ack the original. A crash between the two redelivers the original,
// whose re-publish the server drops as a duplicate. beforeAck (may be nil)
// runs between the two: what it writes (the audit event of a quarantine)
// exists before the original is gone.
func (h *Hub) publishThenAck(d *delivery, m *nats.Msg, kind string, beforeAck func(), opts ...js.PublishOpt) bool {
	ctx := h.runCtx
	// The copy, the audit event and the ack may take longer than AckWait
	// on a busy server: the original stays in progress meanwhile, or the
	// server would hand it out again behind our back.
	stop := ejs.KeepAlive(d.msg, h.exec.heartbeat)
	defer stop()
	id := wire.MsgID(d.meta.Stream, d.meta.Sequence.Stream, kind)
	ack, err := h.storeCopy(ctx, d, m, id, kind, opts...)
	if err != nil {
		// Only when the hub stops: the message stays in its source.
		_ = d.msg.NakWithDelay(5 * time.Second)
		return false
	}
	if ack.Duplicate {
		h.met.duplicates.Inc()
	}
	if kind == "poison" && h.hooks.afterQuarantinePublish != nil {
		h.hooks.afterQuarantinePublish(d.meta.Sequence.Stream)
	}
	if beforeAck != nil {
		beforeAck()
	}
	// A plain ack: should it be lost, the redelivered original is copied
	// again under the same id, which the server drops (the duplicate window
	// is far longer than AckWait), and acked again.
	if err := d.msg.Ack(); err != nil {
		h.log.Warn().Err(err).Str("id", id).Msg("ack after copy failed; a redelivery will be deduplicated")
	}
	h.forget(d)
	return true
}

// quarantine moves a poison message to edi.poison.<stage>, audits it and
// alerts. The partition moves on.
func (h *Hub) quarantine(d *delivery, v verdict, rec counter.Record) {
	if d.messageID == "" {
		d.messageID = peekControlRef(d.msg.Data())
	}
	m := h.copyMsg(d, wire.PoisonSubject(v.stage), rec)
	setPoison(m, v.cause, v.class, v.message, v.stage, v.attempts)
	if v.deaths > 0 {
		m.Header.Set(wire.HdrProcessDeaths, strconv.Itoa(v.deaths))
	}
	if last, ok := rec.Last(); ok {
		m.Header.Set(wire.HdrFingerprint, last.Fingerprint)
		m.Header.Set(wire.HdrErrorCause, last.Cause)
	}
	q := poisonCopy{msg: m, stream: d.meta.Stream, seq: d.meta.Sequence.Stream, origStream: d.origStream, origSeq: d.origSeq,
		partner: d.partner, partition: d.partition, stage: v.stage, cause: v.cause, attempts: v.attempts, message: v.message}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !h.publishThenAck(d, m, "poison", func() { h.auditQuarantine(ctx, q) }) {
		return
	}
	h.emit(d, Event{Kind: EventQuarantined, Stage: v.stage, Attempt: v.attempts, Class: v.class, Cause: v.cause,
		Error: escape.Header(v.message), Subject: m.Subject})
	h.met.messages.WithLabelValues(v.stage, "poison").Inc()
	h.met.attempts.WithLabelValues("poison").Observe(float64(v.attempts))
	h.processed.Add(1)
	h.quarantined(ctx, q)
}

// poisonCopy is what every path into POISON knows of the message: the
// pipeline's own quarantine and the MAX_DELIVERIES backstop share the
// audit event, the metric, the log line and the alert.
type poisonCopy struct {
	msg          *nats.Msg
	stream       string // where the copied message is stored
	seq          uint64
	origStream   string // the interchange's identity across hops
	origSeq      uint64
	partner      string // from the stored subject; "" when unknown
	partition    int
	stage, cause string
	attempts     int
	message      string
	labels       map[string]string // extra alert labels
}

func setPoison(m *nats.Msg, cause, class, message, stage string, attempts int) {
	m.Header.Set(wire.HdrPoisonCause, cause)
	m.Header.Set(wire.HdrAttempts, strconv.Itoa(attempts))
	m.Header.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	m.Header.Set(wire.HdrErrorClass, cmp.Or(class, "crash"))
	m.Header.Set(wire.HdrErrorMsg, escape.Header(message))
	m.Header.Set(wire.HdrStage, stage)
}

// auditQuarantine appends the quarantine event (deduplicated by the copied
// message's identity, so a crash and a second copy write it once).
func (h *Hub) auditQuarantine(ctx context.Context, q poisonCopy) {
	_, err := h.audit.Append(ctx, audit.Event{
		Actor: h.actor, Action: "quarantine", IDs: []string{wire.DefaultPoisonStream + ":" + wire.MsgRef{Stream: q.origStream, Seq: q.origSeq}.String()},
		Reason: q.cause, PayloadBefore: audit.PayloadHash(q.msg.Data),
		Details: map[string]string{"stage": q.stage, "partner": q.partner, "partition": strconv.Itoa(q.partition),
			"attempts": strconv.Itoa(q.attempts), "error": escape.Header(q.message)},
	}, wire.MsgID(q.stream, q.seq, "audit-quarantine"))
	if err != nil {
		h.log.Error().Err(err).Msg("audit event for quarantine not written")
	}
}

// quarantined counts, logs and alerts a stored poison copy.
func (h *Hub) quarantined(ctx context.Context, q poisonCopy) {
	h.met.poison.WithLabelValues(q.stage, q.cause).Inc()
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
	if d.messageID == "" { // the stage failed before it read the envelope
		d.messageID = peekControlRef(d.msg.Data())
	}
	m := h.copyMsg(d, wire.DLQSubject(o.stage, cause), rec)
	setFailure(m, o)
	m.Header.Set(wire.HdrErrorCause, cause)
	m.Header.Set(wire.HdrAttempts, strconv.Itoa(attempts))
	m.Header.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	if m.Header.Get(wire.HdrFirstFailedAt) == "" { // failed for the first time just now
		m.Header.Set(wire.HdrFirstFailedAt, m.Header.Get(wire.HdrDetectedAt))
	}
	if exhausted {
		m.Header.Set(wire.HdrErrorClass, "exhausted")
	}
	var opts []js.PublishOpt
	if ttl := h.cfg.DLQ.Retention[cause]; ttl > 0 {
		opts = append(opts, js.WithMsgTTL(ttl))
	}
	if !h.publishThenAck(d, m, "dlq", nil, opts...) {
		return
	}
	h.emit(d, Event{Kind: EventDeadLettered, Stage: o.stage, Attempt: attempts, Class: m.Header.Get(wire.HdrErrorClass),
		Cause: cause, Error: escape.Header(o.msg), Subject: m.Subject})
	h.met.deadLetters.WithLabelValues(o.stage, cause).Inc()
	h.deadLettered.Add(1)
	h.met.messages.WithLabelValues(o.stage, "dead-letter").Inc()
	h.met.attempts.WithLabelValues("dead-letter").Observe(float64(attempts))
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
	m := h.copyMsg(d, wire.RetryScheduleSubject(o.stage, delay, id), rec)
	setFailure(m, o)
	m.Header.Set(wire.HdrRetryCount, strconv.Itoa(tier+1))
	m.Header.Set(wire.HdrRetryTier, wire.TierName(delay))
	if m.Header.Get(wire.HdrFirstFailedAt) == "" {
		m.Header.Set(wire.HdrFirstFailedAt, time.Now().UTC().Format(time.RFC3339Nano))
	}
	opts := []js.PublishOpt{js.WithScheduleAt(dueAt(time.Now(), delay)), js.WithScheduleTarget(wire.RetryDueSubject(o.stage, delay))}
	if !h.publishThenAck(d, m, "retry", nil, opts...) {
		return
	}
	h.emit(d, Event{Kind: EventRetryScheduled, Stage: o.stage, Attempt: tier + 1, Class: string(o.failure.Class),
		Cause: o.failure.Cause, Error: escape.Header(o.msg), Subject: wire.RetryDueSubject(o.stage, delay)})
	h.met.retries.WithLabelValues(o.stage, wire.TierName(delay)).Inc()
	h.met.messages.WithLabelValues(o.stage, "retry").Inc()
}

// peekControlRef reads only the interchange header of a payload to name
// the interchange on a quarantine copy. It reads at most two segments of
// bounded size, so a hostile payload cannot make it expensive.
func peekControlRef(data []byte) string {
	r := edifact.NewReader(bytes.NewReader(data))
	r.MaxSegmentLen = 4096
	r.MaxElementLen = 512
	for i := 0; i < 2; i++ {
		seg, err := r.Read()
		if err != nil {
			return ""
		}
		switch seg.Tag {
		case "UNB":
			return seg.Value(5, 1)
		case "ISA":
			return seg.Value(13, 1)
		}
	}
	return ""
}
