package bridge

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Causes of quarantine (x-poison-cause). Each names something a retry cannot
// fix, which is why the record is set aside instead of retried.
const (
	causeOversize   = "oversize"    // larger than NATS max payload (inbound) or the producer's max record (outbound)
	causeBadHeader  = "bad-header"  // a header NATS cannot carry, or a broken x-kafka-key
	causeNoPartner  = "no-partner"  // no key / partner header to route by
	causeBadPartner = "bad-partner" // the partner is not one subject token
	causeRejected   = "rejected"    // JetStream or Kafka refused the message itself
	causeBadTopic   = "bad-topic"   // the topic template gave an illegal Kafka topic name
)

// poisonHeaderMargin is room for Nats-Msg-Id and the protocol line.
const poisonHeaderMargin = 512

// unmappable is why a record cannot cross the bridge.
type unmappable struct {
	cause string
	msg   string
}

func (u *unmappable) Error() string { return u.cause + ": " + u.msg }

func unmap(cause, format string, a ...any) *unmappable {
	return &unmappable{cause: cause, msg: fmt.Sprintf(format, a...)}
}

// inboundPoison builds the quarantine copy of a Kafka record: the payload
// byte for byte (cut to fit when the record was too large for NATS, which
// x-payload-truncated says; the whole record stays in Kafka at the named
// offset), the headers that NATS can carry, and why.
func inboundPoison(subject, route string, rec *kgo.Record, why *unmappable, maxPayload int, now time.Time) *nats.Msg {
	h := nats.Header{}
	for _, kh := range rec.Headers {
		if !isXHeader(kh.Key) || !wire.ValidHeaderName(kh.Key) || !validHeaderValue(kh.Value) {
			continue
		}
		if wire.IsKafkaHeader(kh.Key) { // a producer's, as on the records that go through
			h.Add(wire.HdrProducerPrefix+strings.ToLower(kh.Key), string(kh.Value))
		} else {
			h.Add(wire.ProducerName(kh.Key), string(kh.Value))
		}
	}
	if rec.Key != nil {
		if validHeaderValue(rec.Key) {
			h.Set(wire.HdrKafkaKey, string(rec.Key))
		} else {
			h.Set(wire.HdrKafkaKey, base64.StdEncoding.EncodeToString(rec.Key))
			h.Set(wire.HdrKafkaKeyEnc, "base64")
		}
	}
	h.Set(wire.HdrPoisonCause, why.cause)
	h.Set(wire.HdrErrorMsg, escape.Header(why.msg))
	h.Set(wire.HdrOriginalTopic, rec.Topic)
	h.Set(wire.HdrKafkaTopic, rec.Topic)
	h.Set(wire.HdrKafkaPartition, strconv.FormatInt(int64(rec.Partition), 10))
	h.Set(wire.HdrKafkaOffset, strconv.FormatInt(rec.Offset, 10))
	h.Set(wire.HdrKafkaTimestamp, strconv.FormatInt(rec.Timestamp.UnixMilli(), 10))
	h.Set(wire.HdrDetectedAt, now.UTC().Format(time.RFC3339Nano))
	h.Set(wire.HdrBridgeRoute, route)
	h.Set(wire.HdrBridgeCopy, route)
	return &nats.Msg{Subject: subject, Header: h, Data: fitPayload(h, rec.Value, maxPayload)}
}

// outboundPoisonID keys the poison copy of a NATS message by its stream
// position; the kind differs from the hub's own ":poison" so the two never
// deduplicate each other.
func outboundPoisonID(stream string, seq uint64) string {
	return wire.MsgID(stream, seq, "bridge-poison")
}

// outboundPoison builds the quarantine copy of a NATS message that Kafka
// cannot take.
func outboundPoison(subject, route string, src *nats.Msg, stream string, seq uint64, topic string, why *unmappable, maxPayload int, now time.Time) *nats.Msg {
	h := nats.Header{}
	for k, vs := range src.Header {
		if isXHeader(k) {
			h[k] = append([]string(nil), vs...)
		}
	}
	h.Set(wire.HdrPoisonCause, why.cause)
	h.Set(wire.HdrErrorMsg, escape.Header(why.msg))
	h.Set(wire.HdrOriginalTopic, src.Subject)
	h.Set(wire.HdrOriginalStream, stream)
	h.Set(wire.HdrOriginalSeq, strconv.FormatUint(seq, 10))
	h.Set(wire.HdrKafkaTargetTopic, topic)
	h.Set(wire.HdrDetectedAt, now.UTC().Format(time.RFC3339Nano))
	h.Set(wire.HdrBridgeRoute, route)
	h.Set(wire.HdrBridgeCopy, route)
	return &nats.Msg{Subject: subject, Header: h, Data: fitPayload(h, src.Data, maxPayload)}
}

// fitPayload returns data, or its head when data and headers would exceed
// maxPayload; the cut is recorded in the headers.
func fitPayload(h nats.Header, data []byte, maxPayload int) []byte {
	room := maxPayload - headerBytes(h) - poisonHeaderMargin
	if len(data) <= room {
		return data
	}
	if room < 0 {
		room = 0
	}
	h.Set(wire.HdrPayloadSize, strconv.Itoa(len(data)))
	h.Set(wire.HdrPayloadTruncated, "true")
	return data[:room]
}
