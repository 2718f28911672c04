package hub

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// ClaimChecker stores aside a message too large for the server and gives
// the message to publish in its place: same subject and headers, the
// reference headers (wire.HdrPayloadRef, ...), a stub body
// (claimcheck.Store). name is the message's dedupe id, so a redelivery
// replaces the object instead of adding one.
type ClaimChecker interface {
	Aside(ctx context.Context, m *nats.Msg, name string) (*nats.Msg, error)
}

// ClaimCheckConfig is hub.claim_check (claimcheck.Settings): outputs too
// large for the NATS server go into an object store bucket.
type ClaimCheckConfig = claimcheck.Settings

// storeAside stores output i of d in the claim-check bucket under its
// dedupe id.
func (h *Hub) storeAside(d *delivery, i int, o *nats.Msg) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(h.runCtx, h.cfg.Cluster.OutputTimeout())
	defer cancel()
	name := wire.OutputMsgID(d.origStream, d.origSeq, i)
	stub, err := h.claim.Aside(ctx, o, name)
	if err != nil {
		return nil, err
	}
	if stub == nil {
		return nil, errors.New("claim check returned no message")
	}
	h.claimMet.Stored(len(o.Data))
	h.log.Info().Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).Int("bytes", len(o.Data)).
		Str("ref", stub.Header.Get(wire.HdrPayloadRef)).Msg("output too large for the server stored aside; published as a reference")
	return stub, nil
}
