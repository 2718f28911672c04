package hub

import (
	"fmt"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// DLQConfig sets retention of dead letters per cause, and the size bounds of
// the DLQ, PARKING and POISON streams. Full streams refuse new messages
// (discard new) rather than drop old ones: the failing message then stays
// in its source stream and nothing is lost silently.
type DLQConfig struct {
	// Retention is how long a dead letter of each cause is kept (a
	// per-message TTL). Fiscal records (business) may need years, personal
	// data less.
	Retention map[string]time.Duration `yaml:"retention"`
	// MaxBytes bounds the DLQ stream.
	MaxBytes int64 `yaml:"max_bytes"`
	// ParkingMaxBytes bounds the PARKING stream (no age limit: a person
	// decides).
	ParkingMaxBytes int64 `yaml:"parking_max_bytes"`
	// PoisonMaxAge and PoisonMaxBytes bound the POISON stream; 0 age keeps
	// quarantined messages until an operator acts.
	PoisonMaxAge   time.Duration `yaml:"poison_max_age"`
	PoisonMaxBytes int64         `yaml:"poison_max_bytes"`
}

// defaultRetention per cause: 30 days to triage, longer where the
// content is evidence (business documents and signature failures).
var defaultRetention = map[string]time.Duration{
	wire.CauseSchema:           30 * 24 * time.Hour,
	wire.CauseBusiness:         3650 * 24 * time.Hour,
	wire.CausePartnerRejected:  90 * 24 * time.Hour,
	wire.CauseSignatureInvalid: 365 * 24 * time.Hour,
	wire.CauseUnknown:          30 * 24 * time.Hour,
}

func (c *DLQConfig) setDefaults(storeLimit int64) {
	if c.Retention == nil {
		c.Retention = map[string]time.Duration{}
	}
	for k, v := range defaultRetention {
		if _, ok := c.Retention[k]; !ok {
			c.Retention[k] = v
		}
	}
	r := ejs.DefaultReservation(storeLimit)
	if c.MaxBytes == 0 {
		c.MaxBytes = r
	}
	if c.ParkingMaxBytes == 0 {
		c.ParkingMaxBytes = r
	}
	if c.PoisonMaxBytes == 0 {
		c.PoisonMaxBytes = r
	}
}

func (c *DLQConfig) validate() []error {
	var errs []error
	for k, v := range c.Retention {
		if !wire.ValidCause(k) {
			errs = append(errs, fmt.Errorf("dlq.retention: unknown cause %q", k))
		}
		if v < time.Second {
			errs = append(errs, fmt.Errorf("dlq.retention[%s]: %v, want at least 1s", k, v))
		}
	}
	return errs
}

// maxRetention is the DLQ stream's MaxAge: no dead letter outlives it.
func (c *DLQConfig) maxRetention() time.Duration {
	var m time.Duration
	for _, v := range c.Retention {
		if v > m {
			m = v
		}
	}
	return m
}
