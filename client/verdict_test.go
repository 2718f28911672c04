package client

import (
	"context"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// The verdict is read from what the hub stored: a parsed output, a dead
// letter and a duplicate's audit event, each by the INGEST sequence;
// nothing stored is no verdict. send fills what its events missed.
func TestStreamVerdictsAndResolve(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	outcomeStreams(t, j)
	since := time.Now()
	pub := func(subject string, h map[string]string, data string) { store(t, j, subject, h, data) }
	pub("edi.parsed.ACME.INVOIC", map[string]string{wire.HdrOriginalSeq: "6"}, "{}")
	pub("edi.parse.dlq.schema", map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: "5",
		wire.HdrErrorCause: "schema", wire.HdrErrorMsg: "UNT count"}, "x")
	pub("edi.parse.dlq.schema", map[string]string{wire.HdrOriginalStream: "OTHER", wire.HdrOriginalSeq: "8"}, "x") // not INGEST's
	pub(wire.AuditSubject, nil, `{"action":"duplicate-skipped","ids":["INGEST:7"],"details":{"interchange":"[ACME: S -> R #1]","processed_by":"INGEST:2"}}`)

	got, err := StreamVerdicts(ctx, j, wire.StreamNames{}, since, []uint64{5, 6, 7, 8})
	if err != nil {
		t.Fatal(err)
	}
	if v := got[5]; v.Outcome != OutcomeDeadLettered || v.Where != "DLQ:1" || v.Cause != "schema" || v.Detail != "UNT count" {
		t.Errorf("5: %+v", v)
	}
	if v := got[6]; v.Outcome != OutcomeParsed || v.Where != "edi.parsed.ACME.INVOIC" {
		t.Errorf("6: %+v", v)
	}
	if v := got[7]; v.Outcome != OutcomeDuplicate || v.Detail != "[ACME: S -> R #1] (processed before by INGEST:2)" {
		t.Errorf("7: %+v", v)
	}
	if v, ok := got[8]; ok {
		t.Errorf("8 has a verdict from another stream's copy: %+v", v)
	}

	results := []Result{{OK: true, Stream: "INGEST", Seq: 5, Outcome: OutcomeNotSeen}, {OK: true, Stream: "INGEST", Seq: 6, Outcome: OutcomeParsed, Where: "heard"},
		{OK: true, Stream: "INGEST", Seq: 8, Outcome: OutcomeNotSeen}}
	if err := ResolveFromStreams(ctx, j, since, results); err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Outcome != OutcomeDeadLettered || r.Where != "edi.parse.dlq.schema (DLQ:1)" {
		t.Errorf("resolved 5: %+v", r)
	}
	if results[1].Where != "heard" || results[2].Outcome != OutcomeNotSeen {
		t.Errorf("resolve changed what it should not: %+v", results[1:])
	}
}

// Verdicts come from the facts read, whatever poll read them: a dead
// letter read first and the outputs of the same message read by a later
// poll make it parsed with a partial dead letter, as one look would; each
// poll reads only what came since the last, and a message not followed is
// not kept.
func TestTrackSinceAcrossPolls(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	outcomeStreams(t, j)
	pub := func(subject string, h map[string]string) { store(t, j, subject, h, "") }
	tr := TrackSince(j, wire.StreamNames{}, time.Now(), []uint64{9})
	pub("edi.parse.dlq.business", map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: "9", wire.HdrErrorCause: "business"})
	pub("edi.parse.dlq.business", map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: "10"}) // not followed
	if err := tr.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if v := tr.Verdicts([]uint64{9})[9]; v.Outcome != OutcomeDeadLettered || v.Where != "DLQ:1" || v.Cause != "business" {
		t.Fatalf("after the first poll: %+v", v)
	}
	if _, ok := tr.seen[10]; ok {
		t.Fatal("a message not followed was kept")
	}
	read := tr.read
	pub("edi.parsed.ACME.INVOIC", map[string]string{wire.HdrOriginalSeq: "9"})
	if err := tr.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if tr.read != read+1 {
		t.Fatalf("the second poll read %d messages, want only the one stored since", tr.read-read)
	}
	if v := tr.Verdicts([]uint64{9})[9]; v.Outcome != OutcomeParsed || v.Where != "edi.parsed.ACME.INVOIC" || v.DeadLetter != "DLQ:1" {
		t.Fatalf("after the second poll: %+v", v)
	}
}
