package bridge

import (
	"context"
	"fmt"

	js "github.com/nats-io/nats.go/jetstream"
)

// Per-partner order on Kafka needs every message of a partner produced
// after the ones before it. Within one run the outbound loop guarantees
// that: a batch is produced (retried until Kafka has all of it) before the
// next is fetched. Two things could still put an older message behind a
// newer one, and both are repaired by resetting the consumer's delivery
// state to its ack floor (JetStream 2.12+), so the messages that were not
// acked come again first, in stream order:
//
//   - a bridge that died (kill -9, a lost host) leaves the messages it held
//     unacked; JetStream would redeliver them only after ack_wait, behind
//     the newer ones the next instance has produced by then. So a route
//     that finds unacked messages on its consumer at start resets it.
//   - a delivery that never reached this instance (a pull request that
//     expired while the server sent to it, a reconnect) shows as a gap in
//     the consumer sequence; the batch after the gap is not produced, the
//     consumer is reset and the route goes on from the ack floor.
//
// A reset re-produces what was produced but not acked: Kafka may see a
// record twice (at least once), but never a partner's record after a
// newer one of the same partner, except as that repeat. One bridge
// instance per durable: a second instance on the same consumer would
// interleave anyway.
type orderGuard struct {
	next uint64 // the consumer sequence the next delivery must have; 0 = unknown
}

// start adopts the consumer's state after setup and resets it when a
// previous instance left messages unacked.
func (o *outbound) startOrder(ctx context.Context, cons js.Consumer, stream string) error {
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("consumer info: %w", err)
	}
	if info.NumAckPending == 0 {
		o.order.next = info.Delivered.Consumer + 1
		return nil
	}
	o.log.Warn().Int("unacked", info.NumAckPending).Uint64("ack_floor", info.AckFloor.Stream).
		Msg("a previous bridge left messages unacked (crashed?): delivering them again first, in stream order")
	return o.reset(ctx, stream)
}

func (o *outbound) reset(ctx context.Context, stream string) error {
	resp, err := o.b.js.ResetConsumer(ctx, stream, o.r.Durable)
	if err != nil {
		o.order.next = 0
		return fmt.Errorf("reset consumer %s to its ack floor: %w", o.r.Durable, err)
	}
	// The reset puts delivery back at the ack floor, so the next delivery
	// follows the ack floor's consumer sequence. Not Delivered: reset to an
	// ack floor of 0 (nothing acked yet), the server's running state is all
	// zero and its answer reads the consumer's state file instead, which
	// may still hold a delivery from before the reset (nats-server 2.15:
	// Delivered.Consumer 1 while the next delivery is 1), and the guard
	// would reset again and again.
	o.order.next = 0
	if resp.ConsumerInfo != nil {
		o.order.next = resp.AckFloor.Consumer + 1
	}
	o.b.m.resets.WithLabelValues(o.r.Name).Inc()
	return nil
}

// inOrder checks that msgs continue the consumer sequence without a gap.
func (o *outbound) inOrder(msgs []js.Msg) bool {
	for _, m := range msgs {
		meta, err := m.Metadata()
		if err != nil {
			continue // mapMsg quarantines it
		}
		if o.order.next != 0 && meta.Sequence.Consumer != o.order.next {
			o.log.Warn().Uint64("want_delivery", o.order.next).Uint64("got_delivery", meta.Sequence.Consumer).
				Uint64("stream_seq", meta.Sequence.Stream).
				Msg("deliveries went missing on the way (expired pull, reconnect): resetting the consumer to keep per-partner order")
			return false
		}
		o.order.next = meta.Sequence.Consumer + 1
	}
	return true
}
