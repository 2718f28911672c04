package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hubclient"
	"github.com/edihub/edihub/wire"
)

// A message whose payload the hub stored aside (x-payload-ref: an output
// too large for the NATS server) goes to Kafka with the payload itself
// as the record's value, fetched and checked against its size and
// SHA-256, when the record fits the producer's max record size
// (max_record_bytes). When it does not, the route writes a dead-letter
// record instead: on <topic>.DLT, the message's stub as the value, the
// reference headers (a consumer fetches the payload from NATS with them)
// and the reason in x-error-* and the route's dead-letter headers
// (Spring's by default). Nothing is cut, nothing retried for ever.

// recordOverhead is what a record batch adds around one record.
const recordOverhead = 1 << 10

// claimHeaders are the reference headers, dropped from a record that
// carries the payload inline.
var claimHeaders = []string{wire.HdrPayloadRef, wire.HdrPayloadSize, wire.HdrPayloadSHA256}

// hubClaim is the reference in h in the hub's spelling (ok false: none,
// or a producer's variant, which is only a header).
func hubClaim(h nats.Header) (wire.Claim, bool, error) {
	c, err := wire.ClaimOf(func(k string) string {
		if vs := h[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	})
	if errors.Is(err, wire.ErrNoClaim) {
		return wire.Claim{}, false, nil
	}
	return c, err == nil, err
}

// mapClaim makes it, whose message names its payload by c, a record with
// the payload inline (fetched when produced) or, over the max record
// size, a dead-letter record of the reference.
func (o *outbound) mapClaim(it *outItem, c wire.Claim, h nats.Header) {
	room := int64(o.b.cfg.MaxRecordBytes) - recordOverhead - int64(len(it.key))
	for _, kh := range it.hs {
		room -= int64(len(kh.Key) + len(kh.Value))
	}
	if c.Size <= room {
		it.claim = &c
		it.hs = dropHeaders(it.hs, claimHeaders)
		return
	}
	reason := fmt.Sprintf("payload %s of %d bytes (stored aside by the hub) is over the producer's max record size (max_record_bytes %d, %d for the value): the record is this reference, fetch the payload from NATS (%s)",
		c.Ref, c.Size, o.b.cfg.MaxRecordBytes, max(room, 0), "nats obj get "+c.Ref.Bucket+" "+c.Ref.Object)
	dh := nats.Header{}
	for k, vs := range h {
		dh[k] = vs
	}
	dh.Set(wire.HdrErrorClass, "bridge")
	dh.Set(wire.HdrErrorCause, causeOversize)
	dh.Set(wire.HdrErrorMsg, escape.Header(reason))
	dh.Set(wire.HdrStage, "bridge")
	for _, k := range []string{wire.HdrErrorClass, wire.HdrErrorCause, wire.HdrErrorMsg, wire.HdrStage} {
		it.hs = append(dropHeaders(it.hs, []string{k}), kgo.RecordHeader{Key: k, Value: []byte(dh.Get(k))})
	}
	format := o.r.DLTHeaders
	if format == DLTNone {
		format = DLTSpring
	}
	it.hs = append(it.hs, dltHeaders(format, dh, dltSource{subject: it.msg.Subject(), streamSeq: it.meta.Sequence.Stream, stored: it.meta.Timestamp})...)
	if it.partition < 0 { // not already on a Spring-named dead-letter topic
		it.topic += ".DLT"
	}
	it.aside = reason
	o.b.m.quarantined.WithLabelValues("out", o.r.Name, causeOversize).Inc()
	o.log.Warn().Str("subject", it.msg.Subject()).Str("ref", c.Ref.String()).Int64("bytes", c.Size).Str("topic", it.topic).
		Msg("payload stored aside is over Kafka's max record size: a dead-letter record of its reference goes instead")
}

// fetchClaim reads it's payload once; a payload gone or not the bytes
// named is unmappable, anything else is retried.
func (o *outbound) fetchClaim(ctx context.Context, it *outItem) error {
	v, err := hubclient.Fetch(ctx, o.b.js, *it.claim)
	switch {
	case err == nil:
		it.value = v
		return nil
	case errors.Is(err, hubclient.ErrPayloadMismatch), errors.Is(err, js.ErrObjectNotFound), errors.Is(err, js.ErrBucketNotFound):
		it.poison = unmap(causeRejected, "the payload the message refers to cannot be sent: %v", err)
		return nil
	}
	return err
}

func dropHeaders(hs []kgo.RecordHeader, names []string) []kgo.RecordHeader {
	out := hs[:0:0]
	for _, kh := range hs {
		drop := false
		for _, n := range names {
			if strings.EqualFold(kh.Key, n) {
				drop = true
			}
		}
		if !drop {
			out = append(out, kh)
		}
	}
	return out
}
