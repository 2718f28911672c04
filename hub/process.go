package hub

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/audit"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// delivery is one message in hand with what the hub knows of it.
type delivery struct {
	src       *source
	msg       js.Msg
	meta      *js.MsgMetadata
	key       counter.Key
	partner   string
	partition int
	// origStream/origSeq identify the interchange across hops (a retry
	// carries its INGEST identity in headers).
	origStream string
	origSeq    uint64
	origTopic  string
	retryCount int
	messageID  string
	solo       bool // this attempt runs alone (a suspect): its explained outcome must say so
}

func (h *Hub) newDelivery(s *source, msg js.Msg, md *js.MsgMetadata) *delivery {
	d := &delivery{
		src: s, msg: msg, meta: md,
		key:        counter.Key{Stream: md.Stream, Consumer: md.Consumer, Seq: md.Sequence.Stream},
		origStream: md.Stream, origSeq: md.Sequence.Stream, partition: s.partition,
	}
	hdr := msg.Headers()
	if p, partner, ok := wire.ParseIngestSubject(msg.Subject()); ok {
		d.partition, d.partner = p, partner
	}
	if s.partition < 0 { // a retry: its identity travels in headers; bindRetry checks it
		d.origStream = hdr.Get(wire.HdrOriginalStream)
		d.origSeq, _ = strconv.ParseUint(hdr.Get(wire.HdrOriginalSeq), 10, 64)
		d.retryCount, _ = strconv.Atoi(hdr.Get(wire.HdrRetryCount))
		d.messageID = hdr.Get(wire.HdrMessageID)
	}
	return d
}

// bindRetry ties a due retry to the INGEST message it claims to be: the
// partner and partition come from that message's stored subject, never
// from the retry's headers, and the payload must be the same bytes.
// Anything could be published on a retry subject by whoever may; what does
// not match its original is dead-lettered, not processed.
func (h *Hub) bindRetry(d *delivery) error {
	if d.origStream != h.cfg.Streams.Ingest || d.origSeq == 0 {
		return fmt.Errorf("retry names %s:%d, not a message of %s", escape.Header(d.origStream), d.origSeq, h.cfg.Streams.Ingest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.js.Stream(ctx, d.origStream)
	if err != nil {
		return fmt.Errorf("read the original of a retry: %w", err)
	}
	raw, err := s.GetMsg(ctx, d.origSeq)
	if err != nil {
		return fmt.Errorf("the original %s:%d of a retry cannot be read (%w)", d.origStream, d.origSeq, err)
	}
	p, partner, ok := wire.ParseIngestSubject(raw.Subject)
	if !ok || !bytes.Equal(raw.Data, d.msg.Data()) {
		return fmt.Errorf("retry does not match its original %s:%d", d.origStream, d.origSeq)
	}
	d.partition, d.partner, d.origTopic = p, partner, wire.IngestSubject(partner)
	return nil
}

// process takes one delivery to exactly one place: acked after its outputs
// are stored, retried, dead-lettered or quarantined. It returns false when
// its handler overran the deadline: the timeout path then handled the
// message and started a replacement loop (via replace), and the calling
// loop, which the handler held up, must end.
func (h *Hub) process(s *source, w *watchdog, msg js.Msg, replace func()) bool {
	md, err := msg.Metadata()
	if err != nil { // not a JetStream message: cannot happen on a pull consumer
		h.log.Error().Err(err).Str("consumer", s.name).Msg("message without metadata")
		return true
	}
	d := h.newDelivery(s, msg, md)
	s.notePin(msg.Headers().Get(wire.HdrPinID), d.partner)
	if md.NumDelivered > 1 && s.partition >= 0 {
		h.met.redeliveries.WithLabelValues(strconv.Itoa(s.partition)).Inc()
	}
	if s.stray {
		err := fmt.Errorf("published to the literal subject %q: it names no partner, so no partition reads it", escape.Header(msg.Subject()))
		h.deadLetter(d, failedOutcome(s.stage, PermanentError(wire.CauseUnknown, err)), wire.CauseUnknown, 1, false, counter.Record{})
		return true
	}
	if s.partition < 0 {
		if err := h.bindRetry(d); err != nil {
			h.log.Warn().Err(err).Str("stage", s.stage).Msg("a due retry does not match its original; dead-lettered")
			h.deadLetter(d, failedOutcome(s.stage, PermanentError(wire.CauseUnknown, err)), wire.CauseUnknown, 1, false, counter.Record{})
			return true
		}
	}
	// The happy path reads the store (cheap, no write) because a record
	// may exist from before a consumer was re-created.
	rec, err := h.store.Get(d.key)
	if err != nil {
		h.met.counterErrors.Inc()
		h.log.Error().Err(err).Str("key", d.key.String()).Msg("attempt store unreadable; counting server deliveries only")
	}
	rec = h.withUnstored(s.slot, d.key, rec)
	v := checkAttempts(md.NumDelivered, rec, h.cfg.Attempts.Threshold)
	if v.poison {
		if v.stage == "" {
			v.stage = h.stages[0].Name
		}
		h.quarantine(d, v, rec)
		return true
	}

	// A suspect (an earlier attempt ended with no outcome) runs alone, and
	// says so durably first, so that a death now is attributed to it.
	solo := v.unexplained > 0 || h.suspects[s.slot] == md.Sequence.Stream
	v.solo, d.solo = solo, solo
	inProgress := func() { _ = msg.InProgress() }
	leave := h.gate.enter(solo, h.exec.heartbeat, inProgress)
	// Leave only when the outcome is recorded: a neighbour that kills the
	// process between this success and its bookkeeping would otherwise be
	// charged to this message.
	defer leave()
	if solo {
		// Marked only once the gate is ours: a suspect still waiting when
		// another one kills the process did not run, and must not be
		// charged with that death.
		if marked, err := h.store.MarkSolo(d.key); err != nil {
			h.met.counterErrors.Inc()
			h.log.Error().Err(err).Str("key", d.key.String()).Msg("could not mark a solo run; a death now will not be attributed")
		} else {
			rec = marked
			h.met.counterWrites.Inc()
		}
		h.log.Info().Str("partner", d.partner).Int("partition", d.partition).Uint64("seq", d.origSeq).
			Uint64("delivery", md.NumDelivered).Int("deaths", rec.Deaths()-1).Int("explained", rec.Count).
			Msg("suspect runs alone: an earlier attempt may have ended with the process dying")
	}
	h.inflight.Start(s.slot, md.Sequence.Stream)
	defer h.inflight.Done(s.slot, md.Sequence.Stream)

	m := &Message{
		Subject: msg.Subject(), Partner: d.partner, Partition: d.partition,
		Stream: d.origStream, Seq: d.origSeq, Delivered: md.NumDelivered,
		Header: msg.Headers(), Data: msg.Data(),
	}
	start := time.Now()
	o, abandoned := h.exec.run(w, m, inProgress, func(to outcome) {
		leave() // the abandoned handler must not hold the others back
		h.met.abandoned.Set(float64(h.abandoned.Load()))
		h.fail(d, to, v, rec)
		replace()
	})
	if abandoned {
		h.met.abandoned.Set(float64(h.abandoned.Load()))
		return false
	}
	if o.ok {
		h.met.okDuration.Observe(time.Since(start).Seconds())
	} else {
		h.met.duration.WithLabelValues(o.stage).Observe(time.Since(start).Seconds())
	}
	if m.MessageID != "" {
		d.messageID = m.MessageID
	}
	if o.ok {
		if !solo {
			// A healthy message whose handler is done has nothing in the
			// store that a neighbour's death could be charged to (no solo
			// mark), and publishing its outputs is the hub's code, which
			// kills no process: a suspect need not wait for it. It would
			// wait for a publish whose ack died with a stream leader for
			// the whole publish timeout. A suspect keeps the gate until its
			// outcome is recorded (see the deferred leave).
			leave()
		}
		h.succeed(d, m, rec, v.attempts+1)
		return true
	}
	if dup, ok := isDuplicate(o.failure.Err); ok {
		h.skipDuplicate(d, dup, rec)
		return true
	}
	if u, ok := isUnavailable(o.failure.Err); ok {
		h.log.Warn().Err(u).Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).
			Msg("a service the stage needs did not answer; the message waits and is tried again")
		h.recordPublishFailure(d, u)
		_ = d.msg.NakWithDelay(time.Second)
		return true
	}
	h.fail(d, o, v, rec)
	return true
}

// skipDuplicate acks an interchange the ledger has seen, without outputs,
// and says so in a metric and the audit trail.
func (h *Hub) skipDuplicate(d *delivery, dup *DuplicateError, rec counter.Record) {
	// A duplicate changes nothing, so it is counted (the metric) and
	// sampled into the audit trail: the first per partner, then one per
	// duplicateAuditEvery with how many went unrecorded since. A partner
	// resending 20 000 files must not bury the operators' actions. The
	// sampled event is written before the ack (deduplicated by id), so a
	// crash between the two writes it once.
	if n, ok := h.dupSampler.Sample(d.partner, time.Now()); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ids := []string{wire.MsgRef{Stream: d.origStream, Seq: d.origSeq}.String()}
		details := map[string]string{"partner": d.partner, "interchange": fmt.Sprint(dup.Keys)}
		if n > 0 {
			details["unrecorded_since_last"] = strconv.Itoa(n)
		}
		if _, err := h.audit.Append(ctx, audit.Event{Actor: h.actor, Action: "duplicate-skipped", IDs: ids,
			Reason: "interchange already processed", PayloadBefore: audit.PayloadHash(d.msg.Data()), Details: details,
		}, wire.MsgID(d.meta.Stream, d.meta.Sequence.Stream, "audit-duplicate")); err != nil {
			h.log.Error().Err(err).Msg("audit event for a duplicate not written")
		}
		cancel()
	}
	if err := d.msg.Ack(); err != nil {
		h.log.Warn().Err(err).Uint64("seq", d.origSeq).Msg("ack of a duplicate failed; it will be seen again")
	}
	h.emit(d, Event{Kind: EventDuplicateSkipped, Error: escape.Line(fmt.Sprint(dup.Keys))})
	h.met.duplicatesSkipped.Inc()
	h.processed.Add(1)
	h.forget(d)
	h.log.Info().Str("partner", escape.Line(d.partner)).Uint64("seq", d.origSeq).Str("interchange", escape.Line(fmt.Sprint(dup.Keys))).
		Msg("duplicate interchange acked without processing (a forced replay overrides)")
}

// duplicateAuditEvery is how often a partner's duplicates are sampled into
// the audit trail.
const duplicateAuditEvery = time.Minute

// succeed publishes the outputs pipelined, each with a dedupe id derived
// from the interchange's identity (the ledger's commit runs meanwhile),
// waits for every ack and the commit together, then acks the interchange.
func (h *Hub) succeed(d *delivery, m *Message, rec counter.Record, attempts int) {
	if err := h.outputsFit(m.outputs); err != nil { // before any is stored or the ledger commits
		h.publishFailed(d, rec, attempts, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.Cluster.outputTimeout())
	defer cancel()
	waits := make([]func(context.Context) error, 0, len(m.commits))
	for _, start := range m.commits {
		waits = append(waits, start())
	}
	dups, err := ejs.PublishAll(ctx, h.js, m.outputs, func(i int) string { return wire.OutputMsgID(d.origStream, d.origSeq, i) })
	for _, wait := range waits {
		if err != nil {
			break
		}
		err = wait(ctx)
	}
	if err != nil {
		// The environment's: redelivered, which republishes (the dedupe
		// ids drop what was already stored); the message's: a dead letter.
		h.publishFailed(d, rec, attempts, err)
		return
	}
	h.pub.ok()
	if dups > 0 {
		h.met.duplicates.Add(float64(dups))
	}
	if err := d.msg.Ack(); err != nil {
		h.log.Warn().Err(err).Uint64("seq", d.origSeq).Msg("ack failed; the server will redeliver and outputs dedupe")
	}
	h.met.okMessages.Inc()
	h.met.okAttempts.Observe(float64(attempts))
	h.processed.Add(1)
	h.forget(d) // costs nothing when the message has no record
}

// recordPublishFailure records a failed publish of the outputs as a
// transient failure: the redelivery then has an explained attempt and is
// no suspect. Without it, every partition whose publish failed during a
// stream leader election came back as a suspect, and each suspect waited
// for the instance's handlers in flight — among them a publish whose ack
// was lost with the old leader, held for its whole timeout: the cluster
// test saw every partition stand still for 30 s. Transient failures never
// make a message poison.
func (h *Hub) recordPublishFailure(d *delivery, err error) {
	f := counter.Failure{
		Stage: h.stages[len(h.stages)-1].Name, Kind: counter.KindError, Class: string(Transient), Cause: wire.CauseUnknown,
		Fingerprint: "publish-outputs", Message: escape.Header("not the message's fault: " + err.Error()),
		Delivery: d.meta.NumDelivered, Solo: d.solo,
	}
	if _, rerr := h.store.RecordFailure(d.key, f); rerr != nil {
		h.met.counterErrors.Inc()
		h.unstoredMu.Lock()
		h.unstored[d.src.slot] = unstoredFailure{key: d.key, f: f}
		h.unstoredMu.Unlock()
		return
	}
	h.met.counterWrites.Inc()
}

// unstoredFailure is an explained outcome the store did not take.
type unstoredFailure struct {
	key counter.Key
	f   counter.Failure
}

// withUnstored adds to rec the explained outcome this process could not
// store for the same message in the same slot, and tries to store it now.
func (h *Hub) withUnstored(slot int, k counter.Key, rec counter.Record) counter.Record {
	h.unstoredMu.Lock()
	u, ok := h.unstored[slot]
	delete(h.unstored, slot)
	h.unstoredMu.Unlock()
	if !ok || u.key != k {
		return rec
	}
	if recorded, err := h.store.RecordFailure(k, u.f); err == nil {
		h.met.counterWrites.Inc()
		return recorded
	}
	return rec.With(u.f)
}

func (h *Hub) forget(d *delivery) {
	if err := h.store.Delete(d.key); err != nil {
		h.met.counterErrors.Inc()
		h.log.Warn().Err(err).Str("key", d.key.String()).Msg("could not delete attempt record; the TTL purge will")
	}
}

// fail records the failure and decides where the message goes next.
func (h *Hub) fail(d *delivery, o outcome, v verdict, rec counter.Record) {
	attempts := v.attempts + 1
	h.log.Debug().Str("stage", o.stage).Str("partner", d.partner).Uint64("seq", d.origSeq).
		Int("attempt", attempts).Str("kind", string(o.kind)).Str("class", string(o.failure.Class)).
		Str("error", escape.Header(o.msg)).Msg("attempt failed")
	h.emit(d, Event{Kind: EventAttemptFailed, Stage: o.stage, Attempt: attempts, Class: string(o.failure.Class),
		Cause: o.failure.Cause, Error: escape.Header(o.msg)})

	// A message that leaves its source now (dead letter, tiered retry)
	// needs no attempt record: its fate is decided and its hops carry
	// their history in headers. That saves two fsyncs per such failure.
	switch {
	case o.failure.Class == Permanent:
		h.deadLetter(d, o, o.failure.Cause, attempts, false, rec)
		return
	case o.failure.Class == Transient && h.cfg.Retry.modeOf(o.stage) == ModeTiered:
		if d.retryCount < len(h.cfg.Retry.Tiers) {
			h.scheduleRetry(d, o, d.retryCount, rec)
		} else {
			h.deadLetter(d, o, o.failure.Cause, attempts, true, rec)
		}
		return
	}

	// The message stays and is tried again: the attempt must count.
	f := counter.Failure{
		Stage: o.stage, Kind: o.kind, Class: string(o.failure.Class), Cause: o.failure.Cause,
		Fingerprint: o.fingerprint, Message: escape.Header(o.msg), Delivery: d.meta.NumDelivered,
		Solo: v.solo,
	}
	recorded, err := h.store.RecordFailure(d.key, f)
	if err != nil {
		h.met.counterErrors.Inc()
		h.log.Error().Err(err).Str("key", d.key.String()).Msg("could not record failure; deciding on the record in memory")
		recorded = rec.With(f)
		h.unstoredMu.Lock()
		h.unstored[d.src.slot] = unstoredFailure{key: d.key, f: f}
		h.unstoredMu.Unlock()
	} else {
		h.met.counterWrites.Inc()
	}
	switch {
	case o.kind != counter.KindError || o.failure.Class == Unclassified && recorded.SameFingerprint():
		// Panics, timeouts and an unclassified error that keeps repeating
		// are the poison path: retried in place until checkAttempts, the
		// one place that decides poison, says so.
		if after := checkAttempts(d.meta.NumDelivered+1, recorded, h.cfg.Attempts.Threshold); after.poison {
			after.stage = o.stage
			h.quarantine(d, after, recorded)
			return
		}
		h.retryInPlace(d, o, attempts)
	case attempts >= h.cfg.Retry.MaxAttempts: // strict transient, or unclassified with varying errors
		h.deadLetter(d, o, o.failure.Cause, attempts, true, recorded)
	default:
		h.retryInPlace(d, o, attempts)
	}
}

// retryInPlace naks with exponential backoff: the partition waits, order
// is kept.
func (h *Hub) retryInPlace(d *delivery, o outcome, attempts int) {
	delay := backoff(attempts, h.cfg.Attempts.BackoffBase, h.cfg.Attempts.BackoffMax)
	if err := d.msg.NakWithDelay(delay); err != nil {
		h.log.Warn().Err(err).Msg("nak failed; the server redelivers after ack wait")
	}
	h.met.retries.WithLabelValues(o.stage, "in-place").Inc()
	h.met.messages.WithLabelValues(o.stage, "retry").Inc()
}
