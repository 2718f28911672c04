package hub

import (
	"context"
	"strconv"
	"time"
)

// housekeeping purges expired attempt records (at start, then hourly) and
// refreshes the lag and record gauges every few seconds.
func (h *Hub) housekeeping(ctx context.Context) error {
	h.purge()
	gauges := time.NewTicker(5 * time.Second)
	defer gauges.Stop()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	for {
		h.refreshGauges(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-purge.C:
			h.purge()
		case <-gauges.C:
		}
	}
}

func (h *Hub) purge() {
	n, err := h.store.Purge()
	if err != nil {
		h.met.counterErrors.Inc()
		h.log.Error().Err(err).Msg("purging attempt records failed")
		return
	}
	if n > 0 {
		h.log.Info().Int("purged", n).Dur("ttl", h.cfg.Attempts.CounterTTL).Msg("expired attempt records purged")
	}
}

func (h *Hub) refreshGauges(ctx context.Context) {
	if n, err := h.store.Len(); err == nil {
		h.met.counterRecords.Set(float64(n))
	}
	for p := 0; p < h.cfg.Partitions; p++ {
		// Consumer fetches the consumer's info; one request is enough.
		c, err := h.js.Consumer(ctx, h.cfg.Streams.Ingest, h.partitionConsumer(p).Durable)
		if err != nil {
			continue
		}
		h.met.lag.WithLabelValues(strconv.Itoa(p)).Set(float64(c.CachedInfo().NumPending))
	}
}
