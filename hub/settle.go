package hub

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// settle decides where a delivery goes (decide) and takes it there: the
// one place where the failure policy has effects. A failure that keeps the
// message in its source is counted first and decided again on the record
// that counts it. m is the attempt's message when the stages succeeded.
func (h *Hub) settle(d *delivery, f facts, m *Message) decision {
	p := h.policy()
	dec := decide(f, p)
	if dec.do == actCount {
		f.rec, f.counted = h.count(d, f.o.failureRecord(d.meta.NumDelivered, f.before.solo), f.rec), true
		dec = decide(f, p)
	}
	o := f.o
	if f.ran && dec.do >= actCount {
		h.log.Debug().Str("stage", o.stage).Str("partner", d.partner).Uint64("seq", d.origSeq).
			Int("attempt", f.before.attempts+1).Str("kind", string(o.kind)).Str("class", string(o.failure.Class)).
			Str("error", escape.Header(o.msg)).Msg("attempt failed")
		h.emit(d, wire.Event{Kind: wire.EventAttemptFailed, Stage: o.stage, Attempt: f.before.attempts + 1, Class: string(o.failure.Class),
			Cause: o.failure.Cause, Error: escape.Header(o.msg)})
	}
	switch dec.do {
	case actAck:
		h.succeed(d, m, f.rec, dec.attempts)
	case actSkip:
		dup, _ := isDuplicate(o.failure.Err)
		h.skipDuplicate(d, dup, f.rec)
	case actWait:
		u, _ := isUnavailable(o.failure.Err)
		h.log.Warn().Err(u).Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).
			Msg("the stage cannot go on now (a service it needs did not answer, or no room in the memory budget yet); the message waits and is tried again")
		h.recordPublishFailure(d, u)
		_ = d.nak(time.Second)
	case actQuarantine:
		h.quarantine(d, dec.v, f.rec)
	case actDeadLetter:
		h.deadLetter(d, o, dec.cause, dec.attempts, dec.exhausted, f.rec)
	case actRetryTier:
		h.scheduleRetry(d, o, d.retryCount, f.rec)
	case actRetryInPlace:
		h.retryInPlace(d, o, dec.attempts)
	}
	if h.bulk != nil && !f.stray && !f.unbound {
		switch dec.do {
		case actAck:
			h.bulk.observe(d.partner, false)
		case actDeadLetter, actQuarantine:
			h.bulk.observe(d.partner, true)
		}
	}
	return dec
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
	//
	// A duplicate an operator's replay caused is audited every time (its
	// x-replay-mac verified): the operator asked, and the replay's
	// outcome is read from this event.
	replayedFrom := audit.ReplayedFrom(h.keys, d.msg.Headers(), d.msg.Data())
	n, ok := 0, replayedFrom != ""
	if !ok {
		n, ok = h.dupSampler.Sample(d.partner, time.Now())
	}
	if ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ids := []string{wire.MsgRef{Stream: d.origStream, Seq: d.origSeq}.String()}
		details := map[string]string{"partner": d.partner, "interchange": fmt.Sprint(dup.Keys)}
		if n > 0 {
			details["unrecorded_since_last"] = strconv.Itoa(n)
		}
		if len(dup.Origins) > 0 {
			details["processed_by"] = strings.Join(dup.Origins, ",")
		}
		if replayedFrom != "" {
			details["replayed_from"] = escape.Line(replayedFrom)
			ids = append(ids, escape.Line(replayedFrom))
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
	h.emit(d, wire.Event{Kind: wire.EventDuplicateSkipped, Error: escape.Line(fmt.Sprint(dup.Keys))})
	h.met.DuplicatesSkipped.Inc()
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
	if err := h.outputsFit(d, m.outputs); err != nil { // before any is stored or the ledger commits
		h.publishFailed(d, rec, attempts, err)
		return
	}
	if h.settleGroup(d, m, attempts) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.Cluster.OutputTimeout())
	defer cancel()
	attempt := h.cfg.Cluster.OutputAttempt()
	waits := make([]func(context.Context) error, 0, len(m.commits))
	for _, start := range m.commits {
		waits = append(waits, start())
	}
	dups, err := ejs.PublishAllRetried(ctx, h.js, m.outputs, func(i int) string { return wire.OutputMsgID(d.origStream, d.origSeq, i) }, attempt)
	for i := range waits {
		if err != nil {
			break
		}
		err = awaitCommit(ctx, attempt, m.commits[i], waits[i])
	}
	if err != nil {
		// The environment's: redelivered, which republishes (the dedupe
		// ids drop what was already stored); the message's: a dead letter.
		h.publishFailed(d, rec, attempts, err)
		return
	}
	h.pub.OK()
	if dups > 0 {
		h.met.Duplicates.Add(float64(dups))
	}
	if err := d.msg.Ack(); err != nil {
		h.log.Warn().Err(err).Uint64("seq", d.origSeq).Msg("ack failed; the server will redeliver and outputs dedupe")
	}
	h.met.OKMessages.Inc()
	h.met.OKAttempts.Observe(float64(attempts))
	h.processed.Add(1)
	h.forget(d) // costs nothing when the message has no record
}

// awaitCommit waits for a write that belongs to the outputs (the ledger's
// records), in tries of attempt within ctx (jetstream.Retry): a try that
// got no ack starts the write again (a ledger batch stored twice records
// the same interchanges twice, which changes nothing), so it is stored
// within a try of its bucket's new leader.
func awaitCommit(ctx context.Context, attempt time.Duration, start func() func(context.Context) error, wait func(context.Context) error) error {
	first := true
	return ejs.Retry(ctx, attempt, func(actx context.Context) error {
		if !first {
			wait = start()
		}
		first = false
		return wait(actx)
	})
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
	h.count(d, counter.Failure{
		Stage: h.stages[len(h.stages)-1].Name, Kind: counter.KindError, Class: string(Transient), Cause: wire.CauseUnknown,
		Fingerprint: publishFingerprint, Message: publishFailureMessage(err),
		Delivery: d.meta.NumDelivered, Solo: d.solo,
	}, counter.Record{})
}

// count stores a failed attempt and returns the record that counts it. A
// store that refuses (its bucket had no leader either, a full disk) leaves
// the record in memory, counted when the same message comes back
// (withUnstored).
func (h *Hub) count(d *delivery, f counter.Failure, rec counter.Record) counter.Record {
	recorded, err := h.store.RecordFailure(d.key, f)
	if err != nil {
		h.met.CounterErrors.Inc()
		h.log.Error().Err(err).Str("key", d.key.String()).Msg("could not record failure; deciding on the record in memory")
		return rec.With(h.keepUnstored(d.slot, d.key, f))
	}
	h.met.CounterWrites.Inc()
	return recorded
}

// keepUnstored keeps f, which the store refused, for the next delivery of
// k (in memory, keyed by message: with several workers a partition's
// message may come back on another worker's slot), stamped now (its
// identity: stored twice, it is kept once), and announces it to the
// other hubs of a cluster, which hold it too (peers.go): the message may
// come back to one of them. A solo run's outcome
// is also counted in the in-flight table, which outlives the process: the
// run's solo mark is stored, its outcome is not, and a death or a stop
// before the outcome is stored would otherwise make it look, at the next
// start, like a run the process died in — a death charged to the message
// for the store's fault. The count goes to the slot already counting k, if
// any, else to the slot that ran it. It returns f as kept.
func (h *Hub) keepUnstored(slot int, k counter.Key, f counter.Failure) counter.Failure {
	if f.At.IsZero() {
		f.At = time.Now().UTC()
	}
	h.unstoredMu.Lock()
	if h.holdLocked(k, heldOutcome{f: f, kept: time.Now()}) && f.Solo {
		n := 0
		if s, c := h.inflight.FindUnstored(k.Seq); s >= 0 {
			slot, n = s, c
		}
		h.inflight.SetUnstored(slot, k.Seq, n+1)
	}
	h.unstoredMu.Unlock()
	h.announce(announceKept, k, f)
	return f
}

// withUnstored adds to rec the explained outcomes that could not be stored
// for the same message — those this process holds (its own and its
// peers'), and the solo runs the in-flight table counts (this process's
// or the one before's, which left only the count) — and tries to store
// them now; each one stored is announced, so that the peers forget it.
// What the store still refuses is kept for the next delivery. readOK
// says rec is what the store holds: then a solo run the table counts is
// stored only while rec has a solo mark it does not explain (a peer may
// have stored it while this process was down).
func (h *Hub) withUnstored(slot int, k counter.Key, rec counter.Record, readOK bool) counter.Record {
	h.unstoredMu.Lock()
	held := h.takeHeldLocked(k)
	solo, counted := 0, false // counted: the table counts k (on slot)
	if s, c := h.inflight.FindUnstored(k.Seq); s >= 0 {
		slot, solo, counted = s, c, true
	}
	h.unstoredMu.Unlock()
	var pending []heldOutcome
	unmatched := 0 // held solo outcomes rec does not hold: each explains a mark
	for _, o := range held {
		if o.f.Solo && !o.peer {
			solo-- // this process's solo outcome is counted in the table too
		}
		if readOK && rec.Holds(o.f) { // stored already (by a peer)
			h.announce(announceApplied, k, o.f)
			continue
		}
		if o.f.Solo {
			unmatched++
		}
		pending = append(pending, o)
	}
	if readOK {
		solo = min(solo, rec.Deaths()-unmatched)
	}
	for ; solo > 0; solo-- {
		pending = append(pending, heldOutcome{f: h.lostOutcome(), kept: time.Now()})
	}
	if len(pending) == 0 {
		if counted { // what it counted is stored
			h.unstoredMu.Lock()
			h.inflight.SetUnstored(slot, k.Seq, 0)
			h.unstoredMu.Unlock()
		}
		return rec
	}
	var refused []heldOutcome
	left := 0 // solo outcomes counted in the table still not stored
	for _, o := range pending {
		if len(refused) == 0 { // once refused, the rest wait too: each refusal may take a timeout
			recorded, err := h.store.RecordFailure(k, o.f)
			if err == nil {
				h.met.CounterWrites.Inc()
				rec = recorded
				if o.peer {
					h.met.PeerOutcomes.WithLabelValues("applied").Inc()
				}
				if !o.f.At.IsZero() && o.f.Fingerprint != unstoredFingerprint {
					h.announce(announceApplied, k, o.f)
				}
				continue
			}
			h.met.CounterErrors.Inc()
		}
		refused = append(refused, o)
		if o.f.Solo && !o.peer {
			left++
		}
	}
	h.unstoredMu.Lock()
	for _, o := range refused { // decided on as if stored
		rec = rec.With(o.f)
		if o.f.Fingerprint != unstoredFingerprint { // a lost one is counted again from the table
			h.holdLocked(k, o)
		}
	}
	if counted || left > 0 { // a slot not counting k may count another message
		h.inflight.SetUnstored(slot, k.Seq, left)
	}
	h.unstoredMu.Unlock()
	return rec
}

// unstoredFingerprint marks, in a record, a solo run whose outcome the
// store refused and a process that ended before it was stored: the
// outcome itself is lost, the run is known not to have killed the process.
const unstoredFingerprint = "outcome-not-stored"

func (h *Hub) lostOutcome() counter.Failure {
	return counter.Failure{
		Stage: h.stages[0].Name, Kind: counter.KindError, Class: string(Transient), Cause: wire.CauseUnknown,
		Fingerprint: unstoredFingerprint, Solo: true,
		Message: "not the message's fault: the outcome of a run alone could not be stored (the attempt store refused the write) and the process ended before it was",
	}
}

func (h *Hub) forget(d *delivery) {
	if err := h.store.Delete(d.key); err != nil {
		h.met.CounterErrors.Inc()
		h.log.Warn().Err(err).Str("key", d.key.String()).Msg("could not delete attempt record; the TTL purge will")
	}
}

// retryInPlace naks with exponential backoff: the partition waits, order
// is kept.
func (h *Hub) retryInPlace(d *delivery, o outcome, attempts int) {
	delay := backoff(attempts, h.cfg.Attempts.BackoffBase, h.cfg.Attempts.BackoffMax)
	if err := d.nak(delay); err != nil {
		h.log.Warn().Err(err).Msg("nak failed; the server redelivers after ack wait")
	}
	h.met.Retries.WithLabelValues(o.stage, "in-place").Inc()
	h.met.Messages.WithLabelValues(o.stage, "retry").Inc()
}
