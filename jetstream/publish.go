package jetstream

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// MsgID builds the dedupe id `<stream>:<seq>:<kind>` of DESIGN.md: a copy
// that is published again after a crash carries the same id and is dropped
// by the server within the stream's duplicate window.
func MsgID(stream string, seq uint64, kind string) string {
	return fmt.Sprintf("%s:%d:%s", stream, seq, kind)
}

// Publish sends msg with the given dedupe id (and any further options,
// such as a TTL or a schedule) and waits for the server's ack; the ack's
// Duplicate says whether the server had already stored that id.
func Publish(ctx context.Context, j js.JetStream, msg *nats.Msg, id string, opts ...js.PublishOpt) (ack *js.PubAck, err error) {
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	ack, err = j.PublishMsg(ctx, msg, append(opts, js.WithMsgID(id))...)
	if err != nil {
		return nil, fmt.Errorf("publish %s (id %s): %w", msg.Subject, id, err)
	}
	return ack, nil
}
