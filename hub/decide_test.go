package hub

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/wire"
)

// Every row of ARCHITECTURE.md's data-flow figure, as decide sees it. A
// failure that keeps the message in its source is counted and decided
// again; path lists each answer.
func TestDecide(t *testing.T) {
	p := policy{Attempts: AttemptConfig{Threshold: 3}, firstStage: "parse", Retry: RetryConfig{Mode: ModeStrict, MaxAttempts: 4,
		Tiers: []time.Duration{time.Second, time.Minute}, StageModes: map[string]string{"tiered": ModeTiered}}}
	errX := errors.New("x")
	fail := func(stage string, err error) outcome { return failedOutcome(stage, err) }
	ran := func(o outcome, attempts int, rec counter.Record) facts {
		return facts{delivered: uint64(attempts + 1), rec: rec, ran: true, before: verdict{attempts: attempts}, o: o}
	}
	panicked := panicOutcome("parse", "boom")
	timedOut := outcome{stage: "parse", kind: counter.KindTimeout, failure: &Failure{Class: Unclassified, Cause: wire.CauseUnknown, Err: errX}, fingerprint: "t"}
	unclassified := fail("parse", errX)
	transient := fail("parse", TransientError(wire.CauseUnknown, errX))
	tiered := fail("tiered", TransientError(wire.CauseBusiness, errX))
	withRetries := func(f facts, n int) facts { f.retryCount = n; return f }
	counted := func(n int, o outcome) counter.Record {
		var r counter.Record
		for i := 0; i < n; i++ {
			r = r.With(o.failureRecord(uint64(i+1), false))
		}
		return r
	}
	cases := []struct {
		name  string
		f     facts
		path  []action
		check func(d decision) bool
	}{
		{"fresh delivery runs with the others", facts{delivered: 1}, []action{actRun},
			func(d decision) bool { return !d.v.solo }},
		{"an unexplained attempt runs alone", facts{delivered: 2}, []action{actRun},
			func(d decision) bool { return d.v.solo && d.v.unexplained == 1 }},
		{"listed in the in-flight table runs alone", facts{delivered: 1, listed: true}, []action{actRun},
			func(d decision) bool { return d.v.solo }},
		{"an unexplained attempt the table does not list only waited: runs with the others", facts{delivered: 2, tableKnows: true}, []action{actRun},
			func(d decision) bool { return !d.v.solo && d.v.unexplained == 1 }},
		{"listed, with a table that knows, runs alone", facts{delivered: 2, tableKnows: true, listed: true}, []action{actRun},
			func(d decision) bool { return d.v.solo }},
		{"a death while alone runs alone again though the table does not list it", facts{delivered: 3, tableKnows: true, rec: counter.Record{SoloRuns: 1}}, []action{actRun},
			func(d decision) bool { return d.v.solo && d.v.deaths == 1 }},
		{"deaths not alone (a killer's neighbour) never make poison", facts{delivered: 9}, []action{actRun}, nil},
		{"death while running alone, at threshold", facts{delivered: 4, rec: counter.Record{SoloRuns: 3}}, []action{actQuarantine},
			func(d decision) bool { return d.v.cause == "process-died" && d.v.stage == "parse" }},
		{"recorded panics reach threshold before the handler", facts{delivered: 1, rec: counted(3, panicked)}, []action{actQuarantine},
			func(d decision) bool { return d.v.cause == "panic" }},
		{"ok", ran(outcome{ok: true}, 0, counter.Record{}), []action{actAck},
			func(d decision) bool { return d.attempts == 1 }},
		{"permanent → DLQ of its cause", ran(fail("parse", PermanentError(wire.CauseSchema, errX)), 0, counter.Record{}), []action{actDeadLetter},
			func(d decision) bool { return d.cause == wire.CauseSchema && !d.exhausted }},
		{"transient strict → retried in place", ran(transient, 0, counter.Record{}), []action{actCount, actRetryInPlace}, nil},
		{"transient strict at max attempts → DLQ, exhausted", ran(transient, 3, counted(3, transient)), []action{actCount, actDeadLetter},
			func(d decision) bool { return d.exhausted && d.attempts == 4 }},
		{"transient strict never poison", ran(transient, 2, counted(2, transient)), []action{actCount, actRetryInPlace}, nil},
		{"transient tiered → next tier, no record", withRetries(ran(tiered, 0, counter.Record{}), 1), []action{actRetryTier}, nil},
		{"transient tiered after the last tier → DLQ of the last cause", withRetries(ran(tiered, 0, counter.Record{}), 2), []action{actDeadLetter},
			func(d decision) bool { return d.exhausted && d.cause == wire.CauseBusiness }},
		{"panic below threshold → retried in place", ran(panicked, 0, counter.Record{}), []action{actCount, actRetryInPlace}, nil},
		{"panic at threshold → POISON", ran(panicked, 2, counted(2, panicked)), []action{actCount, actQuarantine},
			func(d decision) bool { return d.v.cause == "panic" && d.v.stage == "parse" }},
		{"timeout at threshold → POISON", ran(timedOut, 2, counted(2, timedOut)), []action{actCount, actQuarantine},
			func(d decision) bool { return d.v.cause == "timeout" }},
		{"repeated unclassified at threshold → POISON", ran(unclassified, 2, counted(2, unclassified)), []action{actCount, actQuarantine},
			func(d decision) bool { return d.v.cause == "repeated-failure" }},
		{"varying unclassified at max attempts → DLQ", ran(unclassified, 3, counted(3, fail("parse", errors.New("y")))), []action{actCount, actDeadLetter},
			func(d decision) bool { return d.exhausted }},
		{"duplicate → acked without outputs", ran(fail("parse", &DuplicateError{}), 0, counter.Record{}), []action{actSkip}, nil},
		{"unavailable → waits, charged to nothing", ran(fail("parse", &UnavailableError{Err: errX}), 4, counted(4, panicked)), []action{actWait}, nil},
		{"literal edi.ingest.* → DLQ, cause unknown", facts{delivered: 1, stray: true}, []action{actDeadLetter},
			func(d decision) bool { return d.cause == wire.CauseUnknown && d.attempts == 1 }},
		{"a retry unlike its original → DLQ, cause unknown", facts{delivered: 1, unbound: true, rec: counted(5, panicked)}, []action{actDeadLetter},
			func(d decision) bool { return d.cause == wire.CauseUnknown }},
	}
	for _, c := range cases {
		f, path := c.f, []action{}
		var d decision
		for {
			d = decide(f, p)
			path = append(path, d.do)
			if d.do != actCount || len(path) > 2 {
				break
			}
			f.rec, f.counted = f.rec.With(f.o.failureRecord(f.delivered, false)), true
		}
		if !slices.Equal(path, c.path) {
			t.Errorf("%s: path %v, want %v", c.name, path, c.path)
			continue
		}
		if c.check != nil {
			if !c.check(d) {
				t.Errorf("%s: unexpected %+v", c.name, d)
			}
		}
	}
}
