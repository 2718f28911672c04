package app

import (
	"context"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/wire"
)

// openClaimCheck opens the bucket outputs too large for the server are
// stored in: replicated like the streams, objects kept as long as PARSED
// keeps the messages that name them.
func openClaimCheck(ctx context.Context, j js.JetStream, cfg *Config) (*claimcheck.Store, error) {
	bucket := cfg.Hub.ClaimCheck.Bucket
	if bucket == "" {
		bucket = wire.DefaultPayloadBucket
	}
	return claimcheck.Open(ctx, j, claimcheck.Config{Bucket: bucket, Replicas: cfg.NATS.Replicas, TTL: cfg.Hub.Retention.Parsed.MaxAge})
}
