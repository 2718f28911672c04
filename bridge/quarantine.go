package bridge

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/edihub/edihub/jetstream"
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

// Headers of a poison copy, as DESIGN.md names them.
const (
	hdrPoisonCause     = "x-poison-cause"
	hdrDetectedAt      = "x-detected-at"
	hdrOriginalStream  = "x-original-stream"
	hdrBridgeRoute     = "x-bridge-route"
	hdrPayloadSize     = "x-payload-size"
	hdrPayloadTrimmed  = "x-payload-truncated"
	poisonHeaderMargin = 512 // room for Nats-Msg-Id and the protocol line
)

// unmappable is why a record cannot cross the bridge.
type unmappable struct {
	cause string
	msg   string
}

func (u *unmappable) Error() string { return u.cause + ": " + u.msg }

func unmap(cause, format string, a ...any) *unmappable {
	return &unmappable{cause: cause, msg: fmt.Sprintf(format, a...)}
}

// inboundPoisonID is the poison copy's dedupe id: a re-read of the same
// record after a crash quarantines it once.
func inboundPoisonID(rec *kgo.Record) string {
	return fmt.Sprintf("kafka:%s/%d/%d:poison", rec.Topic, rec.Partition, rec.Offset)
}

// inboundPoison builds the quarantine copy of a Kafka record: the payload
// byte for byte (cut to fit when the record was too large for NATS, which
// x-payload-truncated says; the whole record stays in Kafka at the named
// offset), the headers that NATS can carry, and why.
func inboundPoison(subject, route string, rec *kgo.Record, why *unmappable, maxPayload int, now time.Time) *nats.Msg {
	h := nats.Header{}
	for _, kh := range rec.Headers {
		if isXHeader(kh.Key) && validHeaderKey(kh.Key) && validHeaderValue(kh.Value) && !isProvenance(kh.Key) {
			h.Add(kh.Key, string(kh.Value))
		}
	}
	if rec.Key != nil {
		if validHeaderValue(rec.Key) {
			h.Set(hdrKafkaKey, string(rec.Key))
		} else {
			h.Set(hdrKafkaKey, base64.StdEncoding.EncodeToString(rec.Key))
			h.Set(hdrKafkaKeyEnc, "base64")
		}
	}
	h.Set(hdrPoisonCause, why.cause)
	h.Set(hdrErrorMsg, oneLine(why.msg))
	h.Set(hdrOriginalTopic, rec.Topic)
	h.Set(hdrKafkaTopic, rec.Topic)
	h.Set(hdrKafkaPartition, strconv.FormatInt(int64(rec.Partition), 10))
	h.Set(hdrKafkaOffset, strconv.FormatInt(rec.Offset, 10))
	h.Set(hdrKafkaTimestamp, strconv.FormatInt(rec.Timestamp.UnixMilli(), 10))
	h.Set(hdrDetectedAt, now.UTC().Format(time.RFC3339Nano))
	h.Set(hdrBridgeRoute, route)
	return &nats.Msg{Subject: subject, Header: h, Data: fitPayload(h, rec.Value, maxPayload)}
}

// outboundPoisonID keys the poison copy of a NATS message by its stream
// position; the kind differs from the hub's own ":poison" so the two never
// deduplicate each other.
func outboundPoisonID(stream string, seq uint64) string {
	return jetstream.MsgID(stream, seq, "bridge-poison")
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
	h.Set(hdrPoisonCause, why.cause)
	h.Set(hdrErrorMsg, oneLine(why.msg))
	h.Set(hdrOriginalTopic, src.Subject)
	h.Set(hdrOriginalStream, stream)
	h.Set(hdrOriginalSeq, strconv.FormatUint(seq, 10))
	h.Set("x-kafka-target-topic", topic)
	h.Set(hdrDetectedAt, now.UTC().Format(time.RFC3339Nano))
	h.Set(hdrBridgeRoute, route)
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
	h.Set(hdrPayloadSize, strconv.Itoa(len(data)))
	h.Set(hdrPayloadTrimmed, "true")
	return data[:room]
}

// oneLine keeps an error message legal as a header value.
func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c == 0x7f {
			b[i] = ' '
		}
	}
	if !validHeaderValue(b) {
		return strconv.QuoteToASCII(s)
	}
	return string(b)
}
