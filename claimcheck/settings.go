package claimcheck

import (
	"fmt"

	"github.com/edihub/edihub/wire"
)

// Settings is the hub.claim_check section: outputs too large for the NATS
// server go into an object store bucket and the message carries a
// reference. Off, they are dead letters (cause unknown).
type Settings struct {
	// Enabled (default true).
	Enabled *bool `yaml:"enabled"`
	// Bucket is the object store (default edihub-payloads). Its objects
	// are kept as long as hub.retention.parsed.max_age keeps outputs.
	Bucket string `yaml:"bucket"`
}

// On says whether payloads too large are stored aside.
func (c Settings) On() bool { return c.Enabled == nil || *c.Enabled }

// SetDefaults fills every unset field with its default.
func (c *Settings) SetDefaults() {
	if c.Enabled == nil {
		on := true
		c.Enabled = &on
	}
	if c.Bucket == "" {
		c.Bucket = wire.DefaultPayloadBucket
	}
}

// Validate reports a bucket name the object store would refuse.
func (c *Settings) Validate() []error {
	if _, err := wire.ParsePayloadRef(c.Bucket + "/x"); err != nil {
		return []error{fmt.Errorf("claim_check.bucket %q: letters, digits, - and _ only", c.Bucket)}
	}
	return nil
}
