package client

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// What one look at the streams costs a replay of 100 messages while the
// hub stored 10 000 outputs and 1 000 dead letters since the replay
// began: StreamVerdicts reads each stream once for all of them; the plain
// alternative, a look per message, reads them once per message. And what
// ten looks cost while a replay waits (WaitVerdicts): a Tracker's later
// polls read only what came since the last, the plain alternative reads
// again from the replay's start each time.
//
//	go test -run '^$' -bench StreamVerdicts -benchtime 5x ./client/
func BenchmarkStreamVerdicts(b *testing.B) {
	srv := jetstreamtest.StartServer(b, nil)
	_, j := jetstreamtest.Connect(b, srv.URL)
	ctx := context.Background()
	outcomeStreams(b, j)
	since := time.Now()
	var msgs []*nats.Msg
	for i := range 11000 {
		h := nats.Header{}
		h.Set(wire.HdrOriginalStream, "INGEST")
		h.Set(wire.HdrOriginalSeq, strconv.Itoa(i+1))
		subject := "edi.parsed.ACME.INVOIC"
		if i >= 10000 {
			subject = "edi.parse.dlq.schema"
		}
		msgs = append(msgs, &nats.Msg{Subject: subject, Header: h, Data: make([]byte, 512)})
	}
	if _, err := ejs.PublishAll(ctx, j, msgs, func(i int) string { return fmt.Sprint("b", i) }); err != nil {
		b.Fatal(err)
	}
	seqs := make([]uint64, 100)
	for i := range seqs {
		seqs[i] = uint64(9950 + i) // 50 parsed, 50 dead-lettered
	}
	b.Run("one-scan", func(b *testing.B) {
		for b.Loop() {
			got, err := StreamVerdicts(ctx, j, wire.StreamNames{}, since, seqs)
			if err != nil || len(got) != 100 {
				b.Fatalf("%d verdicts, %v", len(got), err)
			}
		}
	})
	b.Run("ten-looks-tracker", func(b *testing.B) {
		for b.Loop() {
			t := TrackSince(j, wire.StreamNames{}, since, seqs)
			for range 10 {
				if err := t.Poll(ctx); err != nil || len(t.Verdicts(seqs)) != 100 {
					b.Fatalf("%d verdicts, %v", len(t.Verdicts(seqs)), err)
				}
			}
		}
	})
	b.Run("ten-looks-rescan", func(b *testing.B) {
		for b.Loop() {
			for range 10 {
				if got, err := StreamVerdicts(ctx, j, wire.StreamNames{}, since, seqs); err != nil || len(got) != 100 {
					b.Fatalf("%d verdicts, %v", len(got), err)
				}
			}
		}
	})
	b.Run("per-message", func(b *testing.B) {
		for b.Loop() {
			for _, s := range seqs {
				if _, err := StreamVerdicts(ctx, j, wire.StreamNames{}, since, []uint64{s}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
