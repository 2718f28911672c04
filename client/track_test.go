package client

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// The tracker judges by what the streams hold, with no hub event at all
// (here none is ever sent, as none reaches a drill whose connection was
// down): a quarantine copy and the outputs of the messages behind it,
// stored after the tracker was made, are found; what was stored before it
// is not counted; a poll that fails (a stream away) loses nothing, the
// next one reads on from where the last stopped.
func TestTrackerJudgesByTheStreams(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	streams := outcomeStreams(t, j)
	store := func(subject string, origin uint64, h nats.Header) {
		t.Helper()
		if h == nil {
			h = nats.Header{}
		}
		if !strings.HasPrefix(subject, "edi.parsed.") { // outputs name only the sequence, as the hub's do
			h.Set(wire.HdrOriginalStream, streams.Ingest)
		}
		h.Set(wire.HdrOriginalSeq, strconv.FormatUint(origin, 10))
		if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h}); err != nil {
			t.Fatal(err)
		}
	}
	store("edi.parsed.DRILL.INVOIC", 11, nil) // before the tracker: an earlier run's
	tr, err := NewTracker(ctx, j, streams)
	if err != nil {
		t.Fatal(err)
	}
	const drillSeq = 10
	healthy := []uint64{11, 12, 13}
	store(wire.PoisonSubject("parse"), drillSeq, nats.Header{wire.HdrPoisonCause: {"process-died"}, wire.HdrAttempts: {"4"}, wire.HdrProcessDeaths: {"3"}})
	store("edi.parsed.DRILL.INVOIC", 11, nil)
	store("edi.parsed.DRILL.INVOIC", 11, nil) // an interchange of two messages: two outputs
	if err := tr.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	p, ok := tr.Placed(drillSeq)
	if !ok || !p.Poison || p.Stream != streams.Poison || p.Cause != "process-died" || p.Deaths != "3" {
		t.Fatalf("placement %+v (found %v)", p, ok)
	}
	if tr.Parsed(drillSeq) || tr.ParsedInOrder(healthy) != 1 {
		t.Fatalf("parsed in order: %d of %v, want 1 (the output before the tracker not counted)", tr.ParsedInOrder(healthy), healthy)
	}

	// A stream away: the poll fails, what was read stays.
	if err := j.DeleteStream(ctx, streams.DLQ); err != nil {
		t.Fatal(err)
	}
	if err := tr.Poll(ctx); err == nil {
		t.Fatal("a poll with DLQ gone succeeded")
	}
	if _, ok := tr.Placed(drillSeq); !ok || tr.ParsedInOrder(healthy) != 1 {
		t.Fatal("a failed poll lost what was read before")
	}
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: streams.DLQ, Subjects: []string{"edi.parse.dlq.>"}}); err != nil {
		t.Fatal(err)
	}
	store("edi.parsed.DRILL.INVOIC", 12, nil)
	store("edi.parsed.DRILL.INVOIC", 13, nil)
	if err := tr.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tr.ParsedInOrder(healthy); got != 3 {
		t.Fatalf("parsed in order: %d of 3", got)
	}
	store("edi.parse.dlq.business", 20, nil)
	if err := tr.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if p, ok := tr.Placed(20); !ok || p.Poison || p.Stream != streams.DLQ {
		t.Fatalf("dead letter: %+v (found %v)", p, ok)
	}
}

// A read whose answer never comes (here: something takes the JetStream API
// requests and answers none, as a hub killed after it took a request
// does) ends at ReadTimeout, not at the caller's far deadline.
func TestTrackerPollIsBounded(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	nc, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	streams := outcomeStreams(t, j)
	tr, err := NewTracker(ctx, j, streams)
	if err != nil {
		t.Fatal(err)
	}
	tr.ReadTimeout = 300 * time.Millisecond
	// A second JetStream context whose API prefix only a silent
	// subscriber listens on: every request goes unanswered.
	if _, err := nc.Subscribe("$SILENT.API.>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	silent, err := js.NewWithAPIPrefix(nc, "$SILENT.API")
	if err != nil {
		t.Fatal(err)
	}
	tr.j = silent
	far, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	err = tr.Poll(far)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("an unanswered poll: %v after %v, want an error after about %v", err, time.Since(start), tr.ReadTimeout)
	}
}
