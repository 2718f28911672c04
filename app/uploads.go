package app

import (
	"context"
	"errors"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
)

// openUploads opens the stream partners upload interchanges too large
// for the server into (in chunks on edi.upload.<partner>.<sha256>),
// replicated like the streams, taken into the payload bucket.
// Each partner has a share of it (hub.claim_check.upload_partner_max_bytes)
// that the server keeps: one partner's flood refuses its own chunks, not
// the others'.
func openUploads(ctx context.Context, j js.JetStream, payloads *claimcheck.Store, cfg *Config) (*claimcheck.Uploads, error) {
	cc := cfg.Hub.ClaimCheck
	total := cc.UploadBytes(cfg.Hub.StoreLimit)
	share, err := cc.UploadPartnerBytes(total, largestMaxSize(cfg))
	if err != nil {
		return nil, configErr(err)
	}
	return claimcheck.OpenUploads(ctx, j, payloads, claimcheck.UploadsConfig{
		Stream: cc.UploadStream, Replicas: cfg.NATS.Replicas, TTL: cc.UploadTTL, MaxBytes: total, PartnerMaxBytes: share})
}

// largestMaxSize is the largest interchange parse.max_size and the
// partners' overrides take.
func largestMaxSize(cfg *Config) int64 {
	n := cfg.Parse.MaxSize
	for _, p := range cfg.Parse.Partners {
		n = max(n, p.MaxSize)
	}
	return n
}

// uploadMiddleware gives the stages an uploaded interchange's bytes in
// place of its announcement: read from the upload subject of the partner
// the message was stored under (never a header's), at most the partner's
// parse.max_size, checked against its SHA-256 before any stage reads it.
// Copies of the message (retry, dead letter, quarantine) stay the
// announcement, which names the bytes now kept in the payload bucket. A
// refused upload is a dead letter (cause unknown) with the reason; a
// store that does not answer is the environment's: the message waits.
func uploadMiddleware(u *claimcheck.Uploads, maxSize func(partner string) int64, log zerolog.Logger) hub.Middleware {
	return func(next hub.Handler) hub.Handler {
		return func(ctx context.Context, m *hub.Message) error {
			data, err := u.Resolve(ctx, m.Partner, m.Header, maxSize(m.Partner))
			var refused *claimcheck.RefusedError
			switch {
			case errors.As(err, &refused):
				log.Warn().Str("component", "uploads").Str("partner", m.Partner).Uint64("seq", m.Seq).Err(err).Msg("upload refused")
				return hub.PermanentError(wire.CauseUnknown, err)
			case err != nil:
				return &hub.UnavailableError{Err: err}
			case data != nil:
				m.Data = data
			}
			return next(ctx, m)
		}
	}
}
