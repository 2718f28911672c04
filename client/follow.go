package client

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// What `edihub drill` (or an operator's own check) reads to follow a
// message through the hub: where its copy went, which outputs were
// parsed, in which order.

// PublishUntilAcked publishes data as partner until the server acks,
// under the dedupe id msgID: during an exit drill the hub (and its
// embedded server) may be down between restarts, and the id makes a
// retried publish land once. It returns the INGEST sequence.
func PublishUntilAcked(ctx context.Context, j js.JetStream, partner, msgID string, data []byte, h nats.Header) (uint64, error) {
	msg := &nats.Msg{Subject: wire.IngestSubject(partner), Header: h, Data: data}
	var lastErr error
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err := j.PublishMsg(pctx, msg, js.WithMsgID(msgID), js.WithRetryAttempts(10), js.WithRetryWait(250*time.Millisecond))
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		lastErr = err
		time.Sleep(250 * time.Millisecond)
	}
	return 0, fmt.Errorf("publish: %w", lastErr)
}

var rePartitions = regexp.MustCompile(`partition\((\d+),`)

// PartitionOfPartner is partner's partition, from the partition count in
// INGEST's subject transform ("?" when it cannot be read).
func PartitionOfPartner(ctx context.Context, j js.JetStream, ingest, partner string) string {
	ctx, cancel := context.WithTimeout(ctx, DefaultReadTimeout) // an answer lost with a dying hub holds no longer
	defer cancel()
	s, err := j.Stream(ctx, ingest)
	if err != nil || s.CachedInfo().Config.SubjectTransform == nil {
		return "?"
	}
	m := rePartitions.FindStringSubmatch(s.CachedInfo().Config.SubjectTransform.Destination)
	if m == nil {
		return "?"
	}
	n, _ := strconv.Atoi(m[1])
	return strconv.Itoa(wire.PartitionOf(partner, n))
}

// InOrder counts how many of want appear in got, in want's order.
func InOrder(got, want []uint64) int {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i
}
