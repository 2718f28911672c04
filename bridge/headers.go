package bridge

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// headerError is a header NATS cannot carry; the record is quarantined.
type headerError struct{ key, why string }

func (e *headerError) Error() string { return fmt.Sprintf("header %q: %s", e.key, e.why) }

// isXHeader reports whether a header crosses the bridge: x-*, any case.
func isXHeader(k string) bool { return len(k) > 2 && (k[0] == 'x' || k[0] == 'X') && k[1] == '-' }

// validHeaderValue: a value must be text on one line; CR or LF would end
// the header on the wire and binary would not survive as a Go string in the
// hub's JSON views.
func validHeaderValue(v []byte) bool {
	if !utf8.Valid(v) {
		return false
	}
	for _, c := range v {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// kafkaToNATS copies the record's x-* headers and its key onto h. Other
// Kafka headers (Spring's binary kafka_* ones, tracing) are not ours and are
// left behind. A header NATS cannot carry is an error, not silently dropped:
// the record goes to quarantine with it.
func kafkaToNATS(rec *kgo.Record, h nats.Header, carry map[string]bool) error {
	for _, kh := range rec.Headers {
		if !isXHeader(kh.Key) {
			if carry[strings.ToLower(kh.Key)] && wire.ValidHeaderName(kh.Key) && validHeaderValue(kh.Value) {
				h.Add(strings.ToLower(kh.Key), string(kh.Value))
			}
			continue
		}
		if !wire.ValidHeaderName(kh.Key) {
			return &headerError{kh.Key, "key is not a header token"}
		}
		if !validHeaderValue(kh.Value) {
			return &headerError{kh.Key, "value is not one line of UTF-8 text"}
		}
		// The bridge's provenance headers are set from the record itself;
		// a record's own x-kafka-* (any case) is a producer's.
		if wire.IsKafkaHeader(kh.Key) {
			h.Add(wire.HdrProducerPrefix+strings.ToLower(kh.Key), string(kh.Value))
			continue
		}
		// A name the hub owns (x-partner-id, x-bridge-copy, …) is kept
		// under x-producer-<name>, as the hub keeps it on its own copies:
		// a Kafka producer cannot pass for the hub or the bridge.
		h.Add(wire.ProducerName(kh.Key), string(kh.Value))
	}
	if rec.Key != nil {
		if validHeaderValue(rec.Key) {
			h.Set(wire.HdrKafkaKey, string(rec.Key))
		} else {
			h.Set(wire.HdrKafkaKey, base64.StdEncoding.EncodeToString(rec.Key))
			h.Set(wire.HdrKafkaKeyEnc, "base64")
		}
	}
	h.Set(wire.HdrKafkaTopic, rec.Topic)
	h.Set(wire.HdrKafkaPartition, strconv.FormatInt(int64(rec.Partition), 10))
	h.Set(wire.HdrKafkaOffset, strconv.FormatInt(rec.Offset, 10))
	h.Set(wire.HdrKafkaTimestamp, strconv.FormatInt(rec.Timestamp.UnixMilli(), 10))
	return nil
}

// natsToKafka returns the Kafka key and headers for a NATS message: every
// x-* header except the key itself, which becomes the record key, and its
// MAC. h's x-kafka-* must be the bridge's (see hubOwnedHeaders).
func natsToKafka(h nats.Header, carry map[string]bool) (key []byte, hs []kgo.RecordHeader, err error) {
	if vs, ok := h[wire.HdrKafkaKey]; ok && len(vs) > 0 {
		key = []byte(vs[0])
		if h.Get(wire.HdrKafkaKeyEnc) == "base64" {
			if key, err = base64.StdEncoding.DecodeString(vs[0]); err != nil {
				return nil, nil, &headerError{wire.HdrKafkaKey, "not base64 although x-kafka-key-encoding says so"}
			}
		}
	}
	// Sorted so that the same message always gives the same record.
	keys := make([]string, 0, len(h))
	for k := range h {
		if (isXHeader(k) || carry[strings.ToLower(k)]) && k != wire.HdrKafkaKey && k != wire.HdrKafkaKeyEnc && k != wire.HdrBridgeCopy &&
			k != wire.HdrKafkaMAC {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
	}
	return key, hs, nil
}

// headerBytes estimates the wire size of h (NATS/1.0 line, "k: v\r\n" per
// value, the closing blank line) for the max-payload check.
func headerBytes(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// hubOwnedHeaders are the headers an outbound route may act on: h itself
// when its x-kafka-* are the ones an inbound route signed for partner,
// else a copy with every x-kafka-* moved to x-producer-x-kafka-* (a NATS
// producer's claim of a Kafka key, origin topic or offset).
func hubOwnedHeaders(keys wire.MACKeys, partner string, h nats.Header) nats.Header {
	if wire.KafkaOriginSigned(keys, partner, h) {
		return h
	}
	cp := make(nats.Header, len(h))
	for k, vs := range h {
		cp[k] = vs
	}
	wire.OwnKafkaHeaders(nil, "", cp)
	return cp
}

// messagePartner is the partner a message belongs to, from hub-owned
// values only: the subject edi.parsed.<partner>.<TYPE> (or
// edi.outbound.<partner>.…), else x-partner-id, which only the hub sets on
// its copies (a producer's arrives as x-producer-x-partner-id).
func messagePartner(subject string, h nats.Header) string {
	for _, prefix := range []string{"edi.parsed.", "edi.outbound."} {
		if rest, ok := strings.CutPrefix(subject, prefix); ok {
			p, _, _ := strings.Cut(rest, ".")
			return p
		}
	}
	return h.Get(wire.HdrPartnerID)
}
