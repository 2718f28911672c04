package jetstream

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// Publish sends msg with the given dedupe id (and any further options,
// such as a TTL or a schedule) and waits for the server's ack; the ack's
// Duplicate says whether the server had already stored that id.
func Publish(ctx context.Context, j js.JetStream, msg *nats.Msg, id string, opts ...js.PublishOpt) (ack *js.PubAck, err error) {
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	ack, err = j.PublishMsg(ctx, msg, append(opts, js.WithMsgID(id))...)
	if err != nil {
		StoreFaults.Observe(err)
		return nil, fmt.Errorf("publish %s (id %s): %w", msg.Subject, id, err)
	}
	return ack, nil
}

// CopyHeaders copies h without the server's Nats-* headers, which belong to
// the stored message and not to a copy of it.
func CopyHeaders(h nats.Header) nats.Header {
	out := make(nats.Header, len(h))
	for k, vs := range h {
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// PublishAll publishes msgs pipelined (each with the dedupe id idOf(i)
// gives it) and waits for every ack: one round trip for the lot instead of
// one per message. It returns how many the server had already (a
// re-publish after a crash), or the first error; on an error some may be
// stored, and publishing them all again under the same ids is safe.
func PublishAll(ctx context.Context, j js.JetStream, msgs []*nats.Msg, idOf func(i int) string) (duplicates int, err error) {
	futures := make([]js.PubAckFuture, 0, len(msgs))
	for i, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		f, err := j.PublishMsgAsync(m, js.WithMsgID(idOf(i)))
		if err != nil {
			StoreFaults.Observe(err)
			return 0, fmt.Errorf("publish %s (id %s): %w", m.Subject, idOf(i), err)
		}
		futures = append(futures, f)
	}
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if ack.Duplicate {
				duplicates++
			}
		case err := <-f.Err():
			StoreFaults.Observe(err)
			return duplicates, fmt.Errorf("publish %s (id %s): %w", msgs[i].Subject, idOf(i), err)
		case <-ctx.Done():
			return duplicates, fmt.Errorf("publish %s (id %s): %w", msgs[i].Subject, idOf(i), ctx.Err())
		}
	}
	return duplicates, nil
}
