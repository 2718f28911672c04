package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/wire"
)

// ErrPreempted: the server answered the hub's copy as a duplicate of a
// message that is not that copy (someone published its id first), or of
// one it cannot read back to check.
var ErrPreempted = errors.New("the server kept another message under the copy's id")

const copyIDDomain = "operator-copy-msg-id"

// copyMsgID is the Nats-Msg-Id of an operator's copy of target for
// partner. With the audit key it is an HMAC of kind, partner, target and
// extra: the same on a re-run after a crash (the server drops the second
// copy), unguessable to a producer, who could otherwise publish the id
// into the stream-wide duplicate window first. Without a key it is a random
// nonce: a re-run is not deduplicated, but nothing can be pre-empted.
func (o *Ops) copyMsgID(kind, partner string, target wire.MsgRef, extra string) string {
	if keys := o.o.Auditor.Keyring(); keys != nil {
		_, tag := keys.Sign(copyIDDomain, []byte(kind+"\x00"+partner+"\x00"+target.String()+"\x00"+extra))
		return wire.OperatorCopyMsgID(kind, partner, tag[:32])
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return wire.OperatorCopyMsgID(kind, partner, hex.EncodeToString(b[:]))
}

// publishOwnCopy publishes m with id and returns the ack only when the
// stored message is the hub's copy: a new message, or a duplicate whose
// stored message carries id, the same payload and the same provenance
// header (prov, e.g. x-replayed-from). Anything else is ErrPreempted, and
// the caller must neither report success nor delete the original.
func (o *Ops) publishOwnCopy(ctx context.Context, m *nats.Msg, id, prov string) (*js.PubAck, error) {
	ack, err := o.o.JS.PublishMsg(ctx, m, js.WithMsgID(id))
	if err != nil {
		return nil, err
	}
	if !ack.Duplicate {
		return ack, nil
	}
	stored, err := o.getMsg(ctx, wire.MsgRef{Stream: ack.Stream, Seq: ack.Sequence})
	if err != nil {
		return nil, fmt.Errorf("%w: %s:%d could not be read back (%v)", ErrPreempted, ack.Stream, ack.Sequence, err)
	}
	if stored.Header.Get(nats.MsgIdHdr) != id || stored.Header.Get(prov) != m.Header.Get(prov) ||
		audit.PayloadHash(stored.Data) != audit.PayloadHash(m.Data) {
		return nil, fmt.Errorf("%w: %s:%d is not the hub's copy", ErrPreempted, ack.Stream, ack.Sequence)
	}
	return ack, nil
}
