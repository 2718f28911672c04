package hub

import (
	"context"
	"fmt"
)

// clusterCounts is what the leak probe's ratio reads: the dead letters
// ever stored (the DLQ stream's last sequence) and the INGEST messages
// that left their partition (INGEST's last sequence less what the
// partition consumers still hold, delivered or not), whichever instance
// handled them. Counted on the server, so the one instance that runs the
// probe on a cluster sees everyone's traffic (its own counters saw only
// its share: 0.3 % dead letters on a cluster never fired), and the counts
// go on when the probe's lease moves. A message moved to a retry tier has
// left its partition; its dead letter, if any, counts when it is stored.
func (h *Hub) clusterCounts(ctx context.Context) (dead, processed int64, err error) {
	dlq, err := h.js.Stream(ctx, h.cfg.Streams.DLQ)
	if err != nil {
		return 0, 0, fmt.Errorf("stream %s: %w", h.cfg.Streams.DLQ, err)
	}
	ingest, err := h.js.Stream(ctx, h.cfg.Streams.Ingest)
	if err != nil {
		return 0, 0, fmt.Errorf("stream %s: %w", h.cfg.Streams.Ingest, err)
	}
	partitions := map[string]bool{}
	for p := range h.cfg.Partitions {
		partitions[h.partitionConsumer(p).Durable] = true
	}
	var held uint64
	list := ingest.ListConsumers(ctx)
	for ci := range list.Info() {
		if partitions[ci.Name] {
			held += ci.NumPending + uint64(ci.NumAckPending)
			delete(partitions, ci.Name)
		}
	}
	if err := list.Err(); err != nil {
		return 0, 0, fmt.Errorf("consumers of %s: %w", h.cfg.Streams.Ingest, err)
	}
	if len(partitions) > 0 { // not provisioned yet: what they will read is not known
		return 0, 0, fmt.Errorf("%d partition consumers of %s missing", len(partitions), h.cfg.Streams.Ingest)
	}
	last := ingest.CachedInfo().State.LastSeq
	if held > last {
		held = last
	}
	return int64(dlq.CachedInfo().State.LastSeq), int64(last - held), nil
}
