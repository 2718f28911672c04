package hub

import (
	"fmt"
	"strings"
	"time"
)

// RetentionConfig bounds the INGEST and PARSED streams (hub.retention).
// Zero values keep everything, as before.
type RetentionConfig struct {
	Ingest StreamLimits `yaml:"ingest"`
	Parsed StreamLimits `yaml:"parsed"`
}

// StreamLimits are the age and size bounds of one stream.
type StreamLimits struct {
	// MaxAge removes messages older than this (0: no age limit).
	MaxAge time.Duration `yaml:"max_age"`
	// MaxBytes bounds the stream (0: no size limit). A full INGEST refuses
	// new publishes (discard new: the publisher is told, nothing is
	// dropped); a full PARSED drops its oldest outputs (discard old: the
	// pipeline never stops for a slow reader).
	MaxBytes int64 `yaml:"max_bytes"`
}

// Reservation defaults: each of DLQ, PARKING and POISON reserves
// reservationShare of the JetStream store limit serve saw at start, at
// most maxReservation. JetStream counts a stream's MaxBytes against the
// store limit when the stream is created, so fixed 1 GiB reservations
// refused a start on a disk below ~4 GB free (issue 25).
const (
	reservationShare = 16 // 1/16 each, 3/16 of the store for the three
	maxReservation   = 1 << 30
	minReservation   = 1 << 20
)

// defaultReservation is a DLQ/PARKING/POISON stream's MaxBytes when the
// config leaves it 0, for a store limit (0: unknown, 1 GiB).
func defaultReservation(storeLimit int64) int64 {
	if storeLimit <= 0 {
		return maxReservation
	}
	return min(max(storeLimit/reservationShare, minReservation), maxReservation)
}

func (c *RetentionConfig) validate() []error {
	var errs []error
	for name, l := range map[string]StreamLimits{"ingest": c.Ingest, "parsed": c.Parsed} {
		if l.MaxAge < 0 || (l.MaxAge > 0 && l.MaxAge < time.Minute) {
			errs = append(errs, fmt.Errorf("retention.%s.max_age %v: 0 (keep) or at least 1m", name, l.MaxAge))
		}
		if l.MaxBytes < 0 || (l.MaxBytes > 0 && l.MaxBytes < minReservation) {
			errs = append(errs, fmt.Errorf("retention.%s.max_bytes %d: 0 (no limit) or at least 1 MiB", name, l.MaxBytes))
		}
	}
	return errs
}

// checkStoreBudget refuses reservations the JetStream store cannot give,
// naming the settings to lower; JetStream itself would only say
// "insufficient resources" when the first stream is created.
func (c *Config) checkStoreBudget() error {
	if c.StoreLimit <= 0 {
		return nil
	}
	parts := []struct {
		key string
		n   int64
	}{
		{"hub.dlq.max_bytes", c.DLQ.MaxBytes},
		{"hub.dlq.parking_max_bytes", c.DLQ.ParkingMaxBytes},
		{"hub.dlq.poison_max_bytes", c.DLQ.PoisonMaxBytes},
		{"hub.retention.ingest.max_bytes", c.Retention.Ingest.MaxBytes},
		{"hub.retention.parsed.max_bytes", c.Retention.Parsed.MaxBytes},
	}
	var sum int64
	var named []string
	for _, p := range parts {
		if p.n > 0 {
			sum += p.n
			named = append(named, fmt.Sprintf("%s %s", p.key, byteSize(p.n)))
		}
	}
	// Half the store stays for the unbounded streams and the buckets.
	if sum <= c.StoreLimit/2 {
		return nil
	}
	return fmt.Errorf("the streams reserve %s (%s) but the JetStream store holds %s (%s), and half of it must stay free for INGEST, PARSED, AUDIT and the buckets: lower those settings to %s together or less (or remove them: the defaults are 1/16 of the store each), or free disk space",
		byteSize(sum), strings.Join(named, ", "), byteSize(c.StoreLimit), c.StoreLimitSource, byteSize(c.StoreLimit/2))
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
