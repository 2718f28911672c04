package jetstream

import (
	"fmt"

	"github.com/nats-io/nats.go"
)

// OutputsFit refuses, before any is published, outputs of which one is
// over limit (the connection's max payload): published in turn, those before it
// would be stored (half an interchange downstream) and the ledger's
// commit started, for an attempt that can never succeed. msgIDRoom is
// what the dedupe id's header adds.
func OutputsFit(outs []*nats.Msg, limit int64) error {
	for i, o := range outs {
		if size := OutputSize(o); size > limit {
			return fmt.Errorf("output %d of %d (%s, %d bytes with its headers, max payload %d): %w",
				i+1, len(outs), o.Subject, size, limit, nats.ErrMaxPayload)
		}
	}
	return nil
}

// OutputSize is what publishing o with a dedupe id takes of the server's
// max payload: its body, its headers and msgIDRoom for the Nats-Msg-Id.
func OutputSize(o *nats.Msg) int64 {
	const msgIDRoom = 256
	return int64(len(o.Data)) + HeaderSize(o.Header) + msgIDRoom
}

// HeaderSize is the size of h on the wire: NATS/1.0, a line per value,
// the blank line.
func HeaderSize(h nats.Header) int64 {
	if len(h) == 0 {
		return 0
	}
	n := int64(len("NATS/1.0\r\n\r\n"))
	for k, vs := range h {
		for _, v := range vs {
			n += int64(len(k) + len(": ") + len(v) + len("\r\n"))
		}
	}
	return n
}
