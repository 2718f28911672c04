package hub

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
)

// copyMsg is a byte-for-byte copy of the delivery's payload for subject,
// with the producer's headers (minus the server's Nats-* ones) and the
// x-* headers that say where it came from.
func (h *Hub) copyMsg(d *delivery, subject string, rec counter.Record) *nats.Msg {
	out := nats.Header{}
	for k, vs := range d.msg.Headers() {
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	set := func(k, v string) {
		if v != "" {
			out.Set(k, v)
		}
	}
	topic := d.origTopic
	if topic == "" && d.partner != "" {
		topic = IngestPublishSubject(d.partner)
	}
	set(HdrOriginalTopic, topic)
	set(HdrOriginalStream, d.origStream)
	set(HdrOriginalSeq, strconv.FormatUint(d.origSeq, 10))
	set(HdrPartnerID, d.partner)
	set(HdrPartition, strconv.Itoa(d.partition))
	set(HdrMessageID, d.messageID)
	if out.Get(HdrCorrelationID) == "" {
		out.Set(HdrCorrelationID, d.origStream+"-"+strconv.FormatUint(d.origSeq, 10))
	}
	if out.Get(HdrFirstFailedAt) == "" && !rec.FirstAt.IsZero() {
		out.Set(HdrFirstFailedAt, rec.FirstAt.UTC().Format(time.RFC3339Nano))
	}
	set(HdrRetryCount, strconv.Itoa(d.retryCount))
	if h.cfg.Drill && out.Get(HdrDrill) != "" {
		out.Set(HdrDrillMode, "on")
	} else {
		out.Del(HdrDrillMode) // never trust one a partner sent
	}
	return &nats.Msg{Subject: subject, Header: out, Data: d.msg.Data()}
}

func setFailure(m *nats.Msg, o outcome) {
	m.Header.Set(HdrErrorClass, string(o.failure.Class))
	m.Header.Set(HdrErrorCause, o.failure.Cause)
	m.Header.Set(HdrErrorMsg, headerSafe(o.msg))
	m.Header.Set(HdrFingerprint, o.fingerprint)
	m.Header.Set(HdrStage, o.stage)
}

// publishThenAck is the one way a message leaves its source for another
// stream: publish with a dedupe id, wait for the server's ack, and only
// then ack the original. A crash between the two redelivers the original,
// whose re-publish the server drops as a duplicate. beforeAck (may be nil)
// runs between the two: what it writes (the audit event of a quarantine)
// exists before the original is gone.
func (h *Hub) publishThenAck(d *delivery, m *nats.Msg, kind string, beforeAck func(), opts ...js.PublishOpt) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := ejs.MsgID(d.meta.Stream, d.meta.Sequence.Stream, kind)
	ack, err := ejs.Publish(ctx, h.js, m, id, opts...)
	if err != nil {
		h.log.Error().Err(err).Msg("could not store the copy; the message stays in its source and is redelivered")
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
	m := h.copyMsg(d, poisonSubject(v.stage), rec)
	now := time.Now().UTC()
	m.Header.Set(HdrPoisonCause, v.cause)
	m.Header.Set(HdrAttempts, strconv.Itoa(v.attempts))
	m.Header.Set(HdrDetectedAt, now.Format(time.RFC3339Nano))
	m.Header.Set(HdrErrorClass, nonEmpty(v.class, "crash"))
	m.Header.Set(HdrErrorMsg, headerSafe(v.message))
	m.Header.Set(HdrStage, v.stage)
	if last, ok := rec.Last(); ok {
		m.Header.Set(HdrFingerprint, last.Fingerprint)
		m.Header.Set(HdrErrorCause, last.Cause)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	audit := func() {
		_, err := h.audit.Append(ctx, AuditEvent{
			Actor: h.actor, Action: "quarantine", IDs: []string{"POISON:" + d.origStream + ":" + strconv.FormatUint(d.origSeq, 10)},
			Reason: v.cause, PayloadBefore: PayloadHash(d.msg.Data()),
			Details: map[string]string{"stage": v.stage, "partner": d.partner, "partition": strconv.Itoa(d.partition),
				"attempts": strconv.Itoa(v.attempts), "error": headerSafe(v.message)},
		}, ejs.MsgID(d.meta.Stream, d.meta.Sequence.Stream, "audit-quarantine"))
		if err != nil {
			h.log.Error().Err(err).Msg("audit event for quarantine not written")
		}
	}
	if !h.publishThenAck(d, m, "poison", audit) {
		return
	}
	h.emit(d, Event{Kind: EventQuarantined, Stage: v.stage, Attempt: v.attempts, Class: v.class, Cause: v.cause,
		Error: headerSafe(v.message), Subject: m.Subject})
	h.met.poison.WithLabelValues(v.stage, v.cause).Inc()
	h.met.messages.WithLabelValues(v.stage, "poison").Inc()
	h.met.attempts.WithLabelValues("poison").Observe(float64(v.attempts))
	h.processed.Add(1)
	h.log.Warn().Str("stage", v.stage).Str("partner", d.partner).Int("partition", d.partition).
		Uint64("seq", d.origSeq).Str("cause", v.cause).Int("attempts", v.attempts).Str("error", headerSafe(v.message)).
		Msg("poison message quarantined; the partition moves on")
	h.alerter.Fire(ctx, Alert{
		Name: "PoisonMessageDetected", Severity: "critical", Partner: d.partner,
		Summary: "poison message quarantined in stage " + v.stage + ": " + v.cause,
		Labels: map[string]string{"stage": v.stage, "partition": strconv.Itoa(d.partition),
			"sequence": strconv.FormatUint(d.origSeq, 10), "cause": v.cause},
	})
}

// deadLetter moves a catalogued failure to edi.<stage>.dlq.<cause>, with a
// per-message TTL from the cause's retention.
func (h *Hub) deadLetter(d *delivery, o outcome, cause string, attempts int, exhausted bool, rec counter.Record) {
	m := h.copyMsg(d, dlqSubject(o.stage, cause), rec)
	setFailure(m, o)
	m.Header.Set(HdrErrorCause, cause)
	m.Header.Set(HdrAttempts, strconv.Itoa(attempts))
	m.Header.Set(HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	if m.Header.Get(HdrFirstFailedAt) == "" { // failed for the first time just now
		m.Header.Set(HdrFirstFailedAt, m.Header.Get(HdrDetectedAt))
	}
	if exhausted {
		m.Header.Set(HdrErrorClass, "exhausted")
	}
	var opts []js.PublishOpt
	if ttl := h.cfg.DLQ.Retention[cause]; ttl > 0 {
		opts = append(opts, js.WithMsgTTL(ttl))
	}
	if !h.publishThenAck(d, m, "dlq", nil, opts...) {
		return
	}
	h.emit(d, Event{Kind: EventDeadLettered, Stage: o.stage, Attempt: attempts, Class: m.Header.Get(HdrErrorClass),
		Cause: cause, Error: headerSafe(o.msg), Subject: m.Subject})
	h.met.deadLetters.WithLabelValues(o.stage, cause).Inc()
	h.deadLettered.Add(1)
	h.met.messages.WithLabelValues(o.stage, "dead-letter").Inc()
	h.met.attempts.WithLabelValues("dead-letter").Observe(float64(attempts))
	h.processed.Add(1)
	h.log.Info().Str("stage", o.stage).Str("partner", d.partner).Uint64("seq", d.origSeq).Str("cause", cause).
		Bool("exhausted", exhausted).Str("error", headerSafe(o.msg)).Msg("dead-lettered")
}

// scheduleRetry hands the message to JetStream's scheduler: it waits in
// the RETRY stream, costs the hub nothing, and appears on the tier's due
// subject when the tier is up. The partition goes on at once.
func (h *Hub) scheduleRetry(d *delivery, o outcome, tier int, rec counter.Record) {
	delay := h.cfg.Retry.Tiers[tier]
	id := d.origStream + "-" + strconv.FormatUint(d.origSeq, 10) + "-" + strconv.Itoa(tier+1)
	m := h.copyMsg(d, retryScheduleSubject(o.stage, delay, id), rec)
	setFailure(m, o)
	m.Header.Set(HdrRetryCount, strconv.Itoa(tier+1))
	m.Header.Set(HdrRetryTier, tierName(delay))
	if m.Header.Get(HdrFirstFailedAt) == "" {
		m.Header.Set(HdrFirstFailedAt, time.Now().UTC().Format(time.RFC3339Nano))
	}
	opts := []js.PublishOpt{js.WithScheduleAt(dueAt(time.Now(), delay)), js.WithScheduleTarget(retryDueSubject(o.stage, delay))}
	if !h.publishThenAck(d, m, "retry", nil, opts...) {
		return
	}
	h.emit(d, Event{Kind: EventRetryScheduled, Stage: o.stage, Attempt: tier + 1, Class: string(o.failure.Class),
		Cause: o.failure.Cause, Error: headerSafe(o.msg), Subject: retryDueSubject(o.stage, delay)})
	h.met.retries.WithLabelValues(o.stage, tierName(delay)).Inc()
	h.met.messages.WithLabelValues(o.stage, "retry").Inc()
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
