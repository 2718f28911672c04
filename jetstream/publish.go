package jetstream

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	return PublishAllRetried(ctx, j, msgs, idOf, 0)
}

// PublishAllRetried is PublishAll in tries of attempt each (Retry), all
// within ctx: a try that gets no ack in time publishes again those not
// acked yet, under the same ids, so a stream that elected a new leader
// meanwhile stores them within one try of its election instead of after
// ctx's whole wait. A duplicate ack of a message an earlier try sent is
// that try's store, not a re-publish, and is not counted. attempt <= 0 is
// one try bounded by ctx.
func PublishAllRetried(ctx context.Context, j js.JetStream, msgs []*nats.Msg, idOf func(i int) string, attempt time.Duration) (duplicates int, err error) {
	acked := make([]bool, len(msgs))
	sent := make([]bool, len(msgs))
	err = Retry(ctx, attempt, func(actx context.Context) error {
		d, err := publishPending(actx, j, msgs, idOf, acked, sent)
		duplicates += d
		if StorageFault(err) {
			return Permanent(err) // a full store stays full for longer than a try
		}
		return err
	})
	return duplicates, err
}

// publishPending publishes the messages not acked yet and waits for their
// acks; sent says which an earlier try published.
func publishPending(ctx context.Context, j js.JetStream, msgs []*nats.Msg, idOf func(i int) string, acked, sent []bool) (duplicates int, err error) {
	type pending struct {
		i      int
		f      js.PubAckFuture
		resent bool
	}
	futures := make([]pending, 0, len(msgs))
	for i, m := range msgs {
		if acked[i] {
			continue
		}
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		f, err := j.PublishMsgAsync(m, js.WithMsgID(idOf(i)))
		if err != nil {
			StoreFaults.Observe(err)
			return duplicates, fmt.Errorf("publish %s (id %s): %w", m.Subject, idOf(i), err)
		}
		futures = append(futures, pending{i: i, f: f, resent: sent[i]})
		sent[i] = true
	}
	for _, p := range futures {
		select {
		case ack := <-p.f.Ok():
			acked[p.i] = true
			if ack.Duplicate && !p.resent {
				duplicates++
			}
		case err := <-p.f.Err():
			StoreFaults.Observe(err)
			return duplicates, fmt.Errorf("publish %s (id %s): %w", msgs[p.i].Subject, idOf(p.i), err)
		case <-ctx.Done():
			return duplicates, fmt.Errorf("publish %s (id %s): %w", msgs[p.i].Subject, idOf(p.i), ctx.Err())
		}
	}
	return duplicates, nil
}
