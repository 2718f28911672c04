package client

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// outcomeStreams creates PARSED, DLQ, POISON and AUDIT under their default
// names, as the hub would, for the tests and benchmarks of the outcome
// readers; it returns the names.
func outcomeStreams(tb testing.TB, j js.JetStream) wire.StreamNames {
	tb.Helper()
	var streams wire.StreamNames
	streams.SetDefaults()
	for name, subj := range map[string]string{streams.Parsed: wire.ParsedAll, streams.DLQ: "edi.parse.dlq.>", streams.Poison: wire.PoisonAll, streams.Audit: wire.AuditAll} {
		if _, err := j.CreateStream(context.Background(), js.StreamConfig{Name: name, Subjects: []string{subj}}); err != nil {
			tb.Fatal(err)
		}
	}
	return streams
}

// store publishes a message with headers h to subject, as the hub stores
// its outputs and copies.
func store(t *testing.T, j js.JetStream, subject string, h map[string]string, data string) {
	t.Helper()
	m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: []byte(data)}
	for k, v := range h {
		m.Header.Set(k, v)
	}
	if _, err := j.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}
