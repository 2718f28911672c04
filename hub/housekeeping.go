package hub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/edihub/edihub/hub/leakprobe"
	ejs "github.com/edihub/edihub/jetstream"
)

// housekeeping purges expired attempt records (at start, then hourly) and
// refreshes the lag and record gauges every few seconds; the leak probe's
// loop is the other singleton that samples the streams.
func (h *Hub) housekeeping(ctx context.Context) error {
	h.purge()
	h.sweep(ctx)
	gauges := time.NewTicker(5 * time.Second)
	defer gauges.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	for {
		h.refreshGauges(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-purge.C:
			h.purge()
		case <-sweep.C:
			h.sweep(ctx)
		case <-gauges.C:
		}
	}
}

// sweep dead-letters what INGEST stored under the literal edi.ingest.>
// (at start, then every minute).
func (h *Hub) sweep(ctx context.Context) {
	if err := h.sweepLiteralIngestAll(ctx); err != nil && ctx.Err() == nil {
		h.log.Warn().Err(err).Msg("sweep of the literal edi.ingest.> failed; trying again in a minute")
	}
}

func (h *Hub) purge() {
	n, err := h.store.Purge()
	if err != nil {
		h.met.CounterErrors.Inc()
		h.log.Error().Err(err).Msg("purging attempt records failed")
		return
	}
	if n > 0 {
		h.log.Info().Int("purged", n).Dur("ttl", h.cfg.Attempts.CounterTTL).Msg("expired attempt records purged")
	}
}

func (h *Hub) refreshGauges(ctx context.Context) {
	if n, err := h.store.Len(); err == nil {
		h.met.CounterRecords.Set(float64(n))
	}
	for p := 0; p < h.cfg.Partitions; p++ {
		// Consumer fetches the consumer's info; one request is enough.
		c, err := h.js.Consumer(ctx, h.cfg.Streams.Ingest, h.partitionConsumer(p).Durable)
		if err != nil {
			continue
		}
		h.met.Lag.WithLabelValues(strconv.Itoa(p)).Set(float64(c.CachedInfo().NumPending))
	}
}

// runLeakProbe samples every interval, lets the probe (package
// hub/leakprobe) decide and alerts through the alerter. On a cluster it
// runs on the instance that holds its lease, and fence says, before each
// alert, whether it still does (else the new holder alerts).
func (h *Hub) runLeakProbe(ctx context.Context, fence func(context.Context) error) error {
	p := leakprobe.New(h.cfg.LeakProbe)
	t := time.NewTicker(h.cfg.LeakProbe.Interval)
	defer t.Stop()
	for {
		depth, err := ejs.SubjectCounts(ctx, h.js, h.cfg.Streams.DLQ)
		var dead, processed int64
		if err == nil {
			dead, processed, err = h.clusterCounts(ctx)
		}
		if err != nil {
			h.log.Warn().Err(err).Msg("leak probe: cannot read the DLQ or INGEST stream")
		} else {
			h.met.SetDLQDepth(h.stageNames(), depth)
			now := time.Now()
			for _, a := range p.Observe(leakprobe.Sample{At: now, Depth: depth, Dead: dead, Processed: processed}) {
				if err := fence(ctx); err != nil {
					return fmt.Errorf("leak probe: %w", err)
				}
				h.alerter.Fire(ctx, a)
			}
			h.board.SetLeak(p.Status())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
