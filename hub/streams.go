package hub

import (
	"context"
	"fmt"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// streamConfigs are the hub's streams for the given stages. Stage subjects
// are listed per stage (edi.parse.retry.>, not edi.*.retry.>) because
// JetStream refuses streams whose subjects overlap, and edi.*.retry.> would
// overlap edi.parsed.>.
func (h *Hub) streamConfigs() []js.StreamConfig {
	c := h.cfg
	var retry, dlq, parking []string
	for _, st := range h.stageNames() {
		retry = append(retry, wire.RetryFilter(st))
		dlq = append(dlq, wire.DLQFilter(st))
		parking = append(parking, wire.ParkingSubject(st))
	}
	out := []js.StreamConfig{
		{
			Name: c.Streams.Ingest, Subjects: []string{wire.IngestWildcard}, Storage: js.FileStorage,
			SubjectTransform: &js.SubjectTransformConfig{
				Source:      wire.IngestWildcard,
				Destination: wire.IngestTransform(c.Partitions),
			},
			Duplicates: c.DuplicateWindow,
			MaxAge:     c.Retention.Ingest.MaxAge, MaxBytes: c.Retention.Ingest.MaxBytes, Discard: js.DiscardNew,
		},
		// allow_atomic: a partner's pipelined outputs are stored as one
		// atomic batch (group.go)
		{Name: c.Streams.Parsed, Subjects: []string{wire.ParsedAll}, Storage: js.FileStorage, Duplicates: c.DuplicateWindow,
			MaxAge: c.Retention.Parsed.MaxAge, MaxBytes: c.Retention.Parsed.MaxBytes, Discard: js.DiscardOld, AllowAtomicPublish: true, AllowBatchPublish: true},
		{
			Name: c.Streams.Retry, Subjects: retry, Storage: js.FileStorage, Retention: js.WorkQueuePolicy,
			AllowMsgSchedules: true, Duplicates: c.DuplicateWindow,
		},
		{
			Name: c.Streams.DLQ, Subjects: dlq, Storage: js.FileStorage, Duplicates: c.DuplicateWindow,
			MaxAge: c.DLQ.maxRetention(), MaxBytes: c.DLQ.MaxBytes, Discard: js.DiscardNew, AllowMsgTTL: true,
		},
		{
			Name: c.Streams.Parking, Subjects: parking, Storage: js.FileStorage, Duplicates: c.DuplicateWindow,
			MaxBytes: c.DLQ.ParkingMaxBytes, Discard: js.DiscardNew,
		},
		{
			Name: c.Streams.Poison, Subjects: []string{wire.PoisonAll}, Storage: js.FileStorage, Duplicates: c.DuplicateWindow,
			MaxAge: c.DLQ.PoisonMaxAge, MaxBytes: c.DLQ.PoisonMaxBytes, Discard: js.DiscardNew,
		},
		{
			Name: c.Streams.Audit, Subjects: []string{wire.AuditAll}, Storage: js.FileStorage, Duplicates: c.DuplicateWindow,
			DenyDelete: true, DenyPurge: true,
		},
	}
	for i := range out {
		out[i].Replicas = c.Cluster.Replicas
	}
	return out
}

// Provision creates or updates every stream the hub needs.
func (h *Hub) Provision(ctx context.Context) error {
	for _, sc := range h.streamConfigs() {
		ch, err := ejs.EnsureStream(ctx, h.js, sc)
		if err != nil {
			return err
		}
		lvl := zerolog.DebugLevel
		if ch != ejs.Unchanged {
			lvl = zerolog.InfoLevel
		}
		h.log.WithLevel(lvl).Str("stream", sc.Name).Str("change", string(ch)).Msg("stream provisioned")
	}
	return nil
}

// partitionConsumer is the durable pull consumer of one partition:
// explicit ack, up to hub.partition_max_in_flight messages out at once
// (the lanes keep each partner's in order, see hub/lanes). MaxDeliver
// stays unlimited: the hub's own attempt count decides, since MaxDeliver
// drops silently.
func (h *Hub) partitionConsumer(p int) js.ConsumerConfig {
	c := js.ConsumerConfig{
		Durable:       fmt.Sprintf("ingest-p%d", p),
		Description:   fmt.Sprintf("edihub partition %d worker", p),
		FilterSubject: wire.IngestPartitionFilter(p),
		AckPolicy:     js.AckExplicitPolicy,
		AckWait:       h.cfg.Attempts.AckWait,
		MaxAckPending: h.cfg.PartitionMaxInFlight,
		MaxDeliver:    -1,
		DeliverPolicy: js.DeliverAllPolicy,
	}
	h.cfg.Cluster.Pin(&c, wire.PartitionGroup)
	return c
}

// retryConsumer reads the due retries of one stage. Order does not matter
// there (tiered mode gave it up), so several may be in flight.
func (h *Hub) retryConsumer(stage string) js.ConsumerConfig {
	return js.ConsumerConfig{
		Durable:       "retry-" + stage,
		Description:   "edihub tiered retries of stage " + stage,
		FilterSubject: wire.RetryDueFilter(stage),
		AckPolicy:     js.AckExplicitPolicy,
		AckWait:       h.cfg.Attempts.AckWait,
		MaxAckPending: 1,
		MaxDeliver:    -1,
	}
}
