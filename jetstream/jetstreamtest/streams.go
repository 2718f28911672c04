package jetstreamtest

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// PublishIngest publishes data as partner's interchange on
// edi.ingest.<partner> and returns its INGEST sequence.
func PublishIngest(tb testing.TB, j js.JetStream, partner, data string, hdr nats.Header) uint64 {
	tb.Helper()
	ack, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: wire.IngestSubject(partner), Data: []byte(data), Header: hdr})
	if err != nil {
		tb.Fatalf("publish for %s: %v", partner, err)
	}
	return ack.Sequence
}

// StreamMsgs returns every message stored in a stream, in order.
func StreamMsgs(tb testing.TB, j js.JetStream, stream string) []*js.RawStreamMsg {
	tb.Helper()
	ctx := context.Background()
	s, err := j.Stream(ctx, stream)
	if err != nil {
		tb.Fatalf("stream %s: %v", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		tb.Fatalf("stream %s: %v", stream, err)
	}
	var out []*js.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted or expired
		}
		out = append(out, m)
	}
	return out
}

// CountMsgs is len(StreamMsgs): messages stored now, deleted ones not counted.
func CountMsgs(tb testing.TB, j js.JetStream, stream string) int {
	tb.Helper()
	return len(StreamMsgs(tb, j, stream))
}

// StreamState is what a test compares to see that nothing changed.
type StreamState struct{ Msgs, LastSeq uint64 }

// StreamStates reads the message count and last sequence of each stream;
// comparing two maps with == per key shows whether anything was stored or
// removed in between.
func StreamStates(tb testing.TB, j js.JetStream, streams ...string) map[string]StreamState {
	tb.Helper()
	out := map[string]StreamState{}
	for _, n := range streams {
		s, err := j.Stream(context.Background(), n)
		if err != nil {
			tb.Fatalf("stream %s: %v", n, err)
		}
		info, err := s.Info(context.Background())
		if err != nil {
			tb.Fatalf("stream %s: %v", n, err)
		}
		out[n] = StreamState{info.State.Msgs, info.State.LastSeq}
	}
	return out
}

// PartnersInDistinctPartitions finds n partner names that INGEST stores in
// n different partitions (of partitions), for tests of partition isolation.
func PartnersInDistinctPartitions(n, partitions int) []string {
	seen := map[int]bool{}
	var out []string
	for i := 0; len(out) < n; i++ {
		p := string(rune('A'+i%26)) + "P" + string(rune('0'+i/26))
		if part := wire.PartitionOf(p, partitions); !seen[part] {
			seen[part] = true
			out = append(out, p)
		}
	}
	return out
}
