package client

import (
	"context"
	"fmt"
	"strings"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// Verdict is what the streams say became of one INGEST message: read
// from what the hub stored (PARSED outputs, DLQ and POISON copies by
// their x-original-* headers, the duplicate's audit event), never from a
// core-NATS event that a restarting hub or a slow subscriber can miss.
type Verdict struct {
	// Outcome is OutcomeParsed, OutcomeDeadLettered, OutcomeQuarantined,
	// OutcomeDuplicate, or "" (nothing stored yet).
	Outcome string `json:"outcome,omitempty"`
	// Where is the copy's ID (DLQ:12, POISON:3) or, for parsed, the
	// output's first subject.
	Where string `json:"where,omitempty"`
	// Subjects are the parsed outputs' subjects (at most maxSubjects).
	Subjects []string `json:"subjects,omitempty"`
	// Cause is the dead letter's x-error-cause or the poison's
	// x-poison-cause.
	Cause string `json:"cause,omitempty"`
	// Detail is the dead letter's error, or the duplicate's interchange
	// and the earlier message that processed it.
	Detail string `json:"detail,omitempty"`
	// DeadLetter is set when part of a parsed interchange was refused
	// (its partial dead letter).
	DeadLetter string `json:"dead_letter,omitempty"`
}

const maxSubjects = 20

// StreamVerdicts is one look (a Tracker's Poll, TrackSince) at PARSED,
// DLQ, POISON and AUDIT from since on: what became of the INGEST messages
// seqs, each stream read once for all of them. A message with no verdict
// is missing from the map.
func StreamVerdicts(ctx context.Context, j js.JetStream, streams wire.StreamNames, since time.Time, seqs []uint64) (map[uint64]Verdict, error) {
	return WaitVerdicts(ctx, j, streams, since, seqs, 0)
}

// WaitVerdicts polls a Tracker (TrackSince) until every one of seqs has a
// verdict or d has passed (0: one look), and returns what it found. Each
// poll reads only what was stored since the last; one that ran out of its
// ReadTimeout is continued while it read something or d has not passed.
func WaitVerdicts(ctx context.Context, j js.JetStream, streams wire.StreamNames, since time.Time, seqs []uint64, d time.Duration) (map[uint64]Verdict, error) {
	t := TrackSince(j, streams, since, seqs)
	deadline := time.Now().Add(d)
	pause := 100 * time.Millisecond
	for {
		before := t.read
		if err := t.Poll(ctx); err != nil {
			if timedOut(ctx, err) && (t.read > before || time.Now().Before(deadline)) {
				continue // the poll's own bound: the next goes on where it stopped
			}
			return nil, err
		}
		got := t.Verdicts(seqs)
		if len(got) >= len(seqs) || !time.Now().Add(pause).Before(deadline) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, nil
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// DescribeVerdict is one line for a person (escaped for a terminal):
// what happened and where.
func DescribeVerdict(v Verdict) string {
	switch v.Outcome {
	case OutcomeParsed:
		s := "parsed → " + escape.Line(strings.Join(v.Subjects, ", "))
		if v.DeadLetter != "" {
			s += " (part refused: " + v.DeadLetter + ")"
		}
		return s
	case OutcomeDeadLettered:
		return fmt.Sprintf("dead-lettered again as %s (%s): %s", v.Where, escape.Line(v.Cause), escape.Text(v.Detail))
	case OutcomeQuarantined:
		return fmt.Sprintf("quarantined as %s (%s)", v.Where, escape.Line(v.Cause))
	case OutcomeDuplicate:
		return "duplicate: the ledger had the interchange " + escape.Text(v.Detail) + "; acked without outputs"
	}
	return "no verdict yet"
}

// ResolveFromStreams gives the stored files that Watch heard nothing
// about (OutcomeNotSeen: an event missed while the hub restarted, or
// sent before the subscription) the streams' verdict. A user who may
// not read the streams (a partner) gets the error and keeps them
// not-seen.
func ResolveFromStreams(ctx context.Context, j js.JetStream, since time.Time, results []Result) error {
	var seqs []uint64
	streams := wire.StreamNames{}
	for _, r := range results {
		if r.OK && r.Outcome == OutcomeNotSeen {
			seqs, streams.Ingest = append(seqs, r.Seq), r.Stream
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	got, err := StreamVerdicts(ctx, j, streams, since, seqs)
	if err != nil {
		return err
	}
	for i := range results {
		r := &results[i]
		v, ok := got[r.Seq]
		if !r.OK || r.Outcome != OutcomeNotSeen || !ok {
			continue
		}
		r.Outcome, r.Detail = v.Outcome, v.Detail
		switch {
		case v.Outcome == OutcomeParsed:
			r.Where = v.Where
		case v.Where != "" && len(v.Subjects) > 0:
			r.Where = v.Subjects[0] + " (" + v.Where + ")"
		}
	}
	return nil
}
