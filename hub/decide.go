package hub

import (
	"fmt"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// action is where one delivery goes next.
type action int

const (
	actRun          action = iota // run the stages (alone when the verdict says solo)
	actAck                        // store the outputs, then ack
	actSkip                       // a duplicate interchange: ack without outputs
	actWait                       // a service the stage needs is away: nak, charged to nothing
	actCount                      // the message stays: count the failure, then decide again
	actQuarantine                 // POISON
	actDeadLetter                 // DLQ of the cause
	actRetryTier                  // RETRY, the next tier
	actRetryInPlace               // nak with backoff, order kept
)

// facts are what the hub knows of a delivery when it decides.
type facts struct {
	delivered uint64         // JetStream's NumDelivered
	rec       counter.Record // the attempt record
	stray     bool           // stored under the literal edi.ingest.*: no partner, no partition
	unbound   bool           // a due retry that does not match its original
	listed    bool           // running when the last process died (in-flight table)
	// tableKnows says the in-flight table lists every message that was
	// running when this instance's last process died (one instance, a
	// table): an unexplained attempt of a message it does not list was a
	// delivery that waited behind its partner's head and never ran.
	tableKnows bool
	// ran says the stages ran under verdict before and ended with o.
	ran        bool
	before     verdict
	o          outcome
	counted    bool // rec counts o already
	retryCount int  // tiers this message has been through
}

// policy is the part of the configuration decide reads.
type policy struct {
	Attempts   AttemptConfig
	Retry      RetryConfig
	firstStage string
}

func (h *Hub) policy() policy { return policy{h.cfg.Attempts, h.cfg.Retry, h.stages[0].Name} }

// decision is decide's answer. v says why a message is poison (and whether
// it runs alone); cause, attempts and exhausted head a dead letter.
type decision struct {
	do        action
	v         verdict
	cause     string
	attempts  int
	exhausted bool
}

// decide is the failure policy: where a delivery goes, from what is known
// of it, with no side effect. Before the stages run it is the attempt
// check; after, the outcome's fate. A failure that keeps the message in
// its source is counted first (actCount) and decided again on the record
// that counts it: the poison rule reads the record, never the outcome.
func decide(f facts, p policy) decision {
	switch {
	case f.stray || f.unbound:
		return decision{do: actDeadLetter, cause: wire.CauseUnknown, attempts: 1}
	case !f.ran:
		v := checkAttempts(f.delivered, f.rec, p.Attempts.Threshold)
		if v.poison {
			if v.stage == "" {
				v.stage = p.firstStage
			}
			return decision{do: actQuarantine, v: v}
		}
		// A partition has up to partition_max_in_flight messages out, and a
		// crash hands every one of them back with an attempt that recorded
		// no outcome; only those that ran can have killed the process. So
		// with a table that knows what ran, a delivery that only waited
		// runs with the others (a death charged to it as it ran alone
		// still makes it run alone).
		v.solo = f.listed || v.unexplained > 0 && (!f.tableKnows || v.deaths > 0)
		return decision{do: actRun, v: v}
	case f.o.ok:
		return decision{do: actAck, attempts: f.before.attempts + 1}
	}
	o := f.o
	if _, ok := isDuplicate(o.failure.Err); ok {
		return decision{do: actSkip}
	}
	if _, ok := isUnavailable(o.failure.Err); ok {
		return decision{do: actWait}
	}
	d := decision{cause: o.failure.Cause, attempts: f.before.attempts + 1}
	// A failure whose fate is decided at once leaves its source with its
	// history in headers: no attempt record (two fsyncs saved).
	switch {
	case o.failure.Class == Permanent:
		return d.to(actDeadLetter, false)
	case o.failure.Class == Transient && p.Retry.modeOf(o.stage) == ModeTiered:
		return d.to(actRetryTier, f.retryCount >= len(p.Retry.Tiers))
	case !f.counted:
		return d.to(actCount, false)
	case onPoisonPath(f.rec): // retried in place until the attempt check says poison
		if v := checkAttempts(f.delivered+1, f.rec, p.Attempts.Threshold); v.poison {
			v.stage = o.stage
			return decision{do: actQuarantine, v: v}
		}
		return d.to(actRetryInPlace, false)
	}
	return d.to(actRetryInPlace, d.attempts >= p.Retry.MaxAttempts) // strict transient, or varying unclassified
}

// to is d going to do, or to the DLQ of its cause when its retries are
// exhausted.
func (d decision) to(do action, exhausted bool) decision {
	d.do, d.exhausted = do, exhausted
	if exhausted {
		d.do = actDeadLetter
	}
	return d
}

// failureRecord is the attempt record's entry for a failed attempt.
func (o outcome) failureRecord(delivered uint64, solo bool) counter.Failure {
	return counter.Failure{Stage: o.stage, Kind: o.kind, Class: string(o.failure.Class), Cause: o.failure.Cause,
		Fingerprint: o.fingerprint, Message: escape.Header(o.msg), Delivery: delivered, Solo: solo}
}

// onPoisonPath is the one poison rule: a message whose last failure is a
// panic, a timeout, or an unclassified error that keeps one fingerprint
// can become poison; typed failures follow the retry policy instead.
func onPoisonPath(rec counter.Record) bool {
	last, ok := rec.Last()
	return ok && (last.Kind == counter.KindPanic || last.Kind == counter.KindTimeout ||
		last.Class == string(Unclassified) && rec.SameFingerprint())
}

// verdict is the attempt check's answer.
type verdict struct {
	poison      bool
	attempts    int  // finished attempts before this delivery
	unexplained int  // of those, how many ended with no recorded outcome
	deaths      int  // of those, how many ended with the process dying while this message ran alone
	solo        bool // this attempt runs alone
	cause       string
	class       string
	message     string
	stage       string // the stage of the last recorded failure, if any
}

// checkAttempts is decide's attempt check: whether a message is poison.
// delivered is JetStream's NumDelivered of this delivery: every delivery
// before it was an attempt, and each attempt that did not record an
// outcome ended because the process died or hung. The record may count
// more failures than the server has deliveries when the consumer was
// re-created; then the record wins.
func checkAttempts(delivered uint64, rec counter.Record, threshold int) verdict {
	attempts := int(delivered) - 1
	if rec.Count > attempts {
		attempts = rec.Count
	}
	deaths := rec.Deaths()
	if rec.Count+deaths > attempts {
		attempts = rec.Count + deaths
	}
	v := verdict{attempts: attempts, unexplained: attempts - rec.Count, deaths: deaths}
	last, hasLast := rec.Last()
	if hasLast {
		v.stage = last.Stage
	}
	if attempts < threshold {
		return v
	}
	switch {
	// A death counts against a message only if it ran alone when the
	// process died (see gate): a crash kills the messages in flight in
	// every partition, and those neighbours must not be quarantined for it.
	case deaths > 0 && deaths+rec.Count >= threshold:
		v.poison = true
		v.cause = "process-died"
		v.class = "crash"
		v.message = fmt.Sprintf("the process died %d times while this message ran alone (%d attempts, %d with no recorded outcome)", deaths, attempts, v.unexplained)
		if hasLast {
			v.message += "; last recorded failure: " + last.Message
		}
	case onPoisonPath(rec):
		v.poison = true
		v.cause = poisonCause(last)
		v.class = last.Class
		v.message = last.Message
	}
	return v
}

func poisonCause(f counter.Failure) string {
	switch f.Kind {
	case counter.KindPanic:
		return "panic"
	case counter.KindTimeout:
		return "timeout"
	}
	return "repeated-failure"
}
