package claimcheck

import (
	"fmt"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
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
	// UploadStream keeps the chunks of interchanges partners upload
	// because they are too large for the server (edihub send does), until
	// the hub takes them into Bucket (default UPLOAD, subjects
	// edi.upload.<partner>.<sha256>).
	UploadStream string `yaml:"upload_stream"`
	// UploadTTL: chunks of an upload not taken by then are dropped (an
	// upload that never completes or is never announced; default 1h).
	UploadTTL time.Duration `yaml:"upload_ttl"`
	// UploadMaxBytes bounds the upload stream (0, the default: 1/16 of
	// the JetStream store, 1 MiB to 1 GiB, as hub.dlq.max_bytes).
	UploadMaxBytes int64 `yaml:"upload_max_bytes"`
	// UploadPartnerMaxBytes is one partner's share of the upload stream
	// (0, the default: a quarter of it, at least the largest
	// parse.max_size): the server refuses that partner's chunks past it,
	// so one partner's flood never fills the stream for the others.
	UploadPartnerMaxBytes int64 `yaml:"upload_partner_max_bytes"`
}

// UploadPartnerBytes is one partner's share of an upload stream of
// streamBytes, for interchanges up to largest bytes: the setting, else
// a quarter of the stream, at least largest, at most the stream. A
// setting below largest is refused: such an upload could never be stored.
func (c Settings) UploadPartnerBytes(streamBytes, largest int64) (int64, error) {
	if n := c.UploadPartnerMaxBytes; n > 0 {
		if n < largest {
			return 0, fmt.Errorf("hub.claim_check.upload_partner_max_bytes %d is below the largest parse.max_size (%d): an upload that large could never be stored; raise it", n, largest)
		}
		return n, nil
	}
	return min(max(streamBytes/4, largest), streamBytes), nil
}

// UploadBytes is the upload stream's bound on a store of storeLimit
// bytes: UploadMaxBytes, or (0) the share every dead-letter stream gets
// (jetstream.DefaultReservation); 0 with the claim check off.
func (c Settings) UploadBytes(storeLimit int64) int64 {
	switch {
	case !c.On():
		return 0
	case c.UploadMaxBytes > 0:
		return c.UploadMaxBytes
	}
	return ejs.DefaultReservation(storeLimit)
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
	if c.UploadStream == "" {
		c.UploadStream = wire.DefaultUploadStream
	}
	if c.UploadTTL == 0 {
		c.UploadTTL = DefaultUploadTTL
	}
}

// Validate reports a bucket name the object store would refuse.
func (c *Settings) Validate() []error {
	if _, err := wire.ParsePayloadRef(c.Bucket + "/x"); err != nil {
		return []error{fmt.Errorf("claim_check.bucket %q: letters, digits, - and _ only", c.Bucket)}
	}
	var errs []error
	if _, err := wire.ParsePayloadRef(c.UploadStream + "/x"); c.UploadStream != "" && err != nil {
		errs = append(errs, fmt.Errorf("claim_check.upload_stream %q: letters, digits, - and _ only", c.UploadStream))
	}
	if c.UploadTTL < 0 || (c.UploadTTL > 0 && c.UploadTTL < time.Second) {
		errs = append(errs, fmt.Errorf("claim_check.upload_ttl %v: at least 1s", c.UploadTTL))
	}
	if c.UploadMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("claim_check.upload_max_bytes %d: want a positive size", c.UploadMaxBytes))
	}
	if c.UploadPartnerMaxBytes < 0 || c.UploadMaxBytes > 0 && c.UploadPartnerMaxBytes > c.UploadMaxBytes {
		errs = append(errs, fmt.Errorf("claim_check.upload_partner_max_bytes %d: want a positive size, at most upload_max_bytes", c.UploadPartnerMaxBytes))
	}
	return errs
}
