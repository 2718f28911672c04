package hub

import (
	"fmt"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
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

func (c *RetentionConfig) validate() []error {
	var errs []error
	for name, l := range map[string]StreamLimits{"ingest": c.Ingest, "parsed": c.Parsed} {
		if l.MaxAge < 0 || (l.MaxAge > 0 && l.MaxAge < time.Minute) {
			errs = append(errs, fmt.Errorf("retention.%s.max_age %v: 0 (keep) or at least 1m", name, l.MaxAge))
		}
		if l.MaxBytes < 0 || (l.MaxBytes > 0 && l.MaxBytes < ejs.MinReservation) {
			errs = append(errs, fmt.Errorf("retention.%s.max_bytes %d: 0 (no limit) or at least 1 MiB", name, l.MaxBytes))
		}
	}
	return errs
}

// checkStoreBudget refuses reservations the JetStream store cannot give
// (jetstream.CheckStoreBudget), naming the settings to lower.
func (c *Config) checkStoreBudget() error {
	return ejs.CheckStoreBudget(c.StoreLimit, c.StoreLimitSource, []ejs.Reservation{
		{Key: "hub.dlq.max_bytes", Bytes: c.DLQ.MaxBytes},
		{Key: "hub.dlq.parking_max_bytes", Bytes: c.DLQ.ParkingMaxBytes},
		{Key: "hub.dlq.poison_max_bytes", Bytes: c.DLQ.PoisonMaxBytes},
		{Key: "hub.retention.ingest.max_bytes", Bytes: c.Retention.Ingest.MaxBytes},
		{Key: "hub.retention.parsed.max_bytes", Bytes: c.Retention.Parsed.MaxBytes},
	})
}
