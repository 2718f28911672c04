package jetstream

import (
	"fmt"
	"strings"
	"time"
)

// Reservation defaults: each of DLQ, PARKING and POISON reserves
// reservationShare of the JetStream store limit serve saw at start, at
// most maxReservation. JetStream counts a stream's MaxBytes against the
// store limit when the stream is created, so fixed 1 GiB reservations
// refused a start on a disk below ~4 GB free (issue 25).
const (
	reservationShare = 16 // 1/16 each, 3/16 of the store for the three
	maxReservation   = 1 << 30
	// MinReservation is the smallest MaxBytes a bounded stream gets.
	MinReservation = 1 << 20
)

// DefaultReservation is a DLQ/PARKING/POISON stream's MaxBytes when the
// config leaves it 0, for a store limit (0: unknown, 1 GiB).
func DefaultReservation(storeLimit int64) int64 {
	if storeLimit <= 0 {
		return maxReservation
	}
	return min(max(storeLimit/reservationShare, MinReservation), maxReservation)
}

// Reservation is one stream's MaxBytes and the setting that sets it.
type Reservation struct {
	Key   string // the config key, like hub.dlq.max_bytes
	Bytes int64  // 0: unbounded, reserves nothing
}

// CheckStoreBudget refuses reservations the JetStream store (storeLimit
// bytes, as source says; 0: unknown, anything goes) cannot give, naming
// the settings to lower; JetStream itself would only say "insufficient
// resources" when the first stream is created.
func CheckStoreBudget(storeLimit int64, source string, rs []Reservation) error {
	if storeLimit <= 0 {
		return nil
	}
	var sum int64
	var named []string
	for _, r := range rs {
		if r.Bytes > 0 {
			sum += r.Bytes
			named = append(named, fmt.Sprintf("%s %s", r.Key, ByteSize(r.Bytes)))
		}
	}
	// Half the store stays for the unbounded streams and the buckets.
	if sum <= storeLimit/2 {
		return nil
	}
	return fmt.Errorf("the streams reserve %s (%s) but the JetStream store holds %s (%s), and half of it must stay free for INGEST, PARSED, AUDIT and the buckets: lower those settings to %s together or less (or remove them: the defaults are 1/16 of the store each), or free disk space",
		ByteSize(sum), strings.Join(named, ", "), ByteSize(storeLimit), source, ByteSize(storeLimit/2))
}

// ByteSize writes n for a person: GiB, MiB or bytes.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Retention bounds the INGEST and PARSED streams (hub.retention).
// Zero values keep everything, as before.
type Retention struct {
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

// Validate reports the bounds that cannot work.
func (c *Retention) Validate() []error {
	var errs []error
	for name, l := range map[string]StreamLimits{"ingest": c.Ingest, "parsed": c.Parsed} {
		if l.MaxAge < 0 || (l.MaxAge > 0 && l.MaxAge < time.Minute) {
			errs = append(errs, fmt.Errorf("retention.%s.max_age %v: 0 (keep) or at least 1m", name, l.MaxAge))
		}
		if l.MaxBytes < 0 || (l.MaxBytes > 0 && l.MaxBytes < MinReservation) {
			errs = append(errs, fmt.Errorf("retention.%s.max_bytes %d: 0 (no limit) or at least 1 MiB", name, l.MaxBytes))
		}
	}
	return errs
}
