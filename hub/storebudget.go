package hub

import ejs "github.com/edihub/edihub/jetstream"

// RetentionConfig bounds the INGEST and PARSED streams (hub.retention):
// jetstream.Retention, the bounds the stream configs are built with.
type RetentionConfig = ejs.Retention

// checkStoreBudget refuses reservations the JetStream store cannot give
// (jetstream.CheckStoreBudget), naming the settings to lower.
func (c *Config) checkStoreBudget() error {
	return ejs.CheckStoreBudget(c.StoreLimit, c.StoreLimitSource, []ejs.Reservation{
		{Key: "hub.dlq.max_bytes", Bytes: c.DLQ.MaxBytes},
		{Key: "hub.dlq.parking_max_bytes", Bytes: c.DLQ.ParkingMaxBytes},
		{Key: "hub.dlq.poison_max_bytes", Bytes: c.DLQ.PoisonMaxBytes},
		{Key: "hub.retention.ingest.max_bytes", Bytes: c.Retention.Ingest.MaxBytes},
		{Key: "hub.retention.parsed.max_bytes", Bytes: c.Retention.Parsed.MaxBytes},
		{Key: "hub.claim_check.upload_max_bytes", Bytes: c.ClaimCheck.UploadBytes(c.StoreLimit)},
	})
}
