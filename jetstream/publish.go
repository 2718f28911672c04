package jetstream

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

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

// CopyHeaders copies h without the server's Nats-* headers, which belong to
// the stored message and not to a copy of it.
func CopyHeaders(h nats.Header) nats.Header {
	out := make(nats.Header, len(h))
	for k, vs := range h {
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}
