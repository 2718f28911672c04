package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
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

// duplicateAction is the hub's audit action for a skipped duplicate
// (hub/settle.go writes it; every one caused by a replay is recorded).
const duplicateAction = "duplicate-skipped"

// StreamVerdicts reads PARSED, DLQ, POISON and AUDIT from since on for
// what became of the INGEST messages seqs. A message with no verdict is
// missing from the map.
func StreamVerdicts(ctx context.Context, j js.JetStream, streams wire.StreamNames, since time.Time, seqs []uint64) (map[uint64]Verdict, error) {
	streams.SetDefaults()
	want := make(map[uint64]bool, len(seqs))
	for _, s := range seqs {
		want[s] = true
	}
	out := map[uint64]Verdict{}
	from := &ejs.ScanOptions{Since: since.Add(-2 * time.Second), HeadersOnly: true}
	origin := func(m js.Msg, needStream bool) (uint64, bool) {
		h := m.Headers()
		if needStream && h.Get(wire.HdrOriginalStream) != streams.Ingest {
			return 0, false
		}
		seq, err := strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 64)
		return seq, err == nil && want[seq]
	}
	// Parsed outputs carry x-original-seq only: INGEST is their one source.
	err := ejs.Scan(ctx, j, streams.Parsed, from, func(m js.Msg, _ *js.MsgMetadata) error {
		if seq, ok := origin(m, false); ok {
			v := out[seq]
			if v.Outcome != OutcomeParsed {
				v.Outcome, v.Where = OutcomeParsed, m.Subject()
			}
			if len(v.Subjects) < maxSubjects {
				v.Subjects = append(v.Subjects, m.Subject())
			}
			out[seq] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, s := range []struct{ stream, outcome, cause string }{
		{streams.DLQ, OutcomeDeadLettered, wire.HdrErrorCause},
		{streams.Poison, OutcomeQuarantined, wire.HdrPoisonCause},
	} {
		err := ejs.Scan(ctx, j, s.stream, from, func(m js.Msg, md *js.MsgMetadata) error {
			seq, ok := origin(m, true)
			if !ok {
				return nil
			}
			id := wire.MsgRef{Stream: s.stream, Seq: md.Sequence.Stream}.String()
			v := out[seq]
			if v.Outcome == OutcomeParsed {
				v.DeadLetter = id // a partial dead letter of a parsed interchange
			} else {
				v = Verdict{Outcome: s.outcome, Where: id, Subjects: []string{m.Subject()},
					Cause: m.Headers().Get(s.cause), Detail: m.Headers().Get(wire.HdrErrorMsg)}
			}
			out[seq] = v
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err = ejs.Scan(ctx, j, streams.Audit, &ejs.ScanOptions{Since: from.Since}, func(m js.Msg, _ *js.MsgMetadata) error {
		var ev struct {
			Action  string            `json:"action"`
			IDs     []string          `json:"ids"`
			Details map[string]string `json:"details"`
		}
		if json.Unmarshal(m.Data(), &ev) != nil || ev.Action != duplicateAction || len(ev.IDs) == 0 {
			return nil
		}
		ref, err := wire.ParseMsgRef(ev.IDs[0], streams.Ingest)
		if err != nil || !want[ref.Seq] {
			return nil
		}
		if _, ok := out[ref.Seq]; !ok {
			detail := ev.Details["interchange"]
			if by := ev.Details["processed_by"]; by != "" {
				detail += " (processed before by " + by + ")"
			}
			out[ref.Seq] = Verdict{Outcome: OutcomeDuplicate, Detail: detail}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WaitVerdicts polls StreamVerdicts until every one of seqs has a verdict
// or d has passed (0: one look), and returns what it found.
func WaitVerdicts(ctx context.Context, j js.JetStream, streams wire.StreamNames, since time.Time, seqs []uint64, d time.Duration) (map[uint64]Verdict, error) {
	deadline := time.Now().Add(d)
	pause := 100 * time.Millisecond
	for {
		got, err := StreamVerdicts(ctx, j, streams, since, seqs)
		if err != nil || len(got) >= len(seqs) || !time.Now().Add(pause).Before(deadline) {
			return got, err
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
