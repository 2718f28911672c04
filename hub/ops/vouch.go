package ops

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// confirmPartner checks the partner an older hub's copy names against its
// original. A v1 x-hub-mac covers the original's stream and sequence, not
// x-partner-id, so whoever could write the copy's headers could have
// chosen the partner a replay goes to; the original's stored subject is
// the hub's own record of it (INGEST stores edi.ingest.p<N>.<partner>).
// It fails with ErrUnvouchedPartner when the original is gone, is no
// partner's, or was stored for another partner.
func (o *Ops) confirmPartner(ctx context.Context, h nats.Header, partner string) error {
	stream := h.Get(wire.HdrOriginalStream)
	seq, err := strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 64)
	if stream == "" || err != nil {
		return fmt.Errorf("%w: it names no original", ErrUnvouchedPartner)
	}
	orig, err := o.getMsg(ctx, wire.MsgRef{Stream: stream, Seq: seq})
	if err != nil {
		return fmt.Errorf("%w: its original %s:%d cannot be read: %v", ErrUnvouchedPartner, stream, seq, err)
	}
	stored, ok := storedPartner(orig.Subject)
	if !ok || stored != partner {
		return fmt.Errorf("%w: its original %s:%d was stored on %q, the copy names partner %q", ErrUnvouchedPartner, stream, seq, orig.Subject, partner)
	}
	return nil
}

// storedPartner reads the partner from a subject the hub stored an
// interchange under: INGEST's edi.ingest.p<N>.<partner>, or a publish
// subject edi.ingest.<partner>.
func storedPartner(subject string) (string, bool) {
	if _, p, ok := wire.ParseIngestSubject(subject); ok {
		return p, true
	}
	return wire.PartnerOfTopic(subject)
}
