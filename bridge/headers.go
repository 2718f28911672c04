package bridge

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Spring Kafka's dead-letter headers (KafkaHeaders.DLT_*, prefix "kafka_").
// DeadLetterPublishingRecoverer writes topic, fqcn and message as UTF-8,
// partition as a 4-byte big-endian int, offset and timestamp as 8-byte
// big-endian longs, and the timestamp type as the enum's name.
const (
	springOrigTopic     = "kafka_dlt-original-topic"
	springOrigPartition = "kafka_dlt-original-partition"
	springOrigOffset    = "kafka_dlt-original-offset"
	springOrigTimestamp = "kafka_dlt-original-timestamp"
	springOrigTSType    = "kafka_dlt-original-timestamp-type"
	springExcFQCN       = "kafka_dlt-exception-fqcn"
	springExcMessage    = "kafka_dlt-exception-message"
)

// headerError is a header NATS cannot carry; the record is quarantined.
type headerError struct{ key, why string }

func (e *headerError) Error() string { return fmt.Sprintf("header %q: %s", e.key, e.why) }

// isXHeader reports whether a header crosses the bridge: x-*, any case.
func isXHeader(k string) bool { return len(k) > 2 && (k[0] == 'x' || k[0] == 'X') && k[1] == '-' }

// validHeaderKey: NATS headers are MIME-style, so a key is an RFC 7230
// token; a colon or a space would split it on the wire.
func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

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
func kafkaToNATS(rec *kgo.Record, h nats.Header) error {
	for _, kh := range rec.Headers {
		if !isXHeader(kh.Key) {
			continue
		}
		if !validHeaderKey(kh.Key) {
			return &headerError{kh.Key, "key is not a header token"}
		}
		if !validHeaderValue(kh.Value) {
			return &headerError{kh.Key, "value is not one line of UTF-8 text"}
		}
		// The bridge's provenance headers are set from the record itself.
		if isProvenance(kh.Key) {
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

func isProvenance(k string) bool {
	switch strings.ToLower(k) {
	case wire.HdrKafkaKey, wire.HdrKafkaKeyEnc, wire.HdrKafkaTopic, wire.HdrKafkaPartition, wire.HdrKafkaOffset, wire.HdrKafkaTimestamp,
		wire.HdrKafkaGroup:
		return true
	}
	return false
}

// natsToKafka returns the Kafka key and headers for a NATS message: every
// x-* header except the key itself, which becomes the record key.
func natsToKafka(h nats.Header) (key []byte, hs []kgo.RecordHeader, err error) {
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
		if isXHeader(k) && k != wire.HdrKafkaKey && k != wire.HdrKafkaKeyEnc && k != wire.HdrBridgeCopy {
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

// dltSource is what Spring's headers describe: where the dead letter came
// from and why it failed.
type dltSource struct {
	subject   string    // the dead letter's own subject, edi.<stage>.dlq.<cause>
	streamSeq uint64    // its stream sequence
	stored    time.Time // when JetStream stored it
}

// springDLTHeaders builds Spring Kafka's dead-letter headers. A message that
// entered through a Kafka inbound route names its Kafka origin (topic,
// partition, offset, timestamp), so Spring tooling can find and replay the
// original record; one that entered over NATS names its NATS origin: the
// x-original-topic subject, the partition token of that subject (0 when it
// has none), the x-original-seq stream sequence and the time JetStream
// stored the dead letter.
func springDLTHeaders(h nats.Header, src dltSource) []kgo.RecordHeader {
	topic, partition, offset, ts := natsOrigin(h, src)
	if t := h.Get(wire.HdrKafkaTopic); t != "" {
		p, perr := strconv.ParseInt(h.Get(wire.HdrKafkaPartition), 10, 32)
		o, oerr := strconv.ParseInt(h.Get(wire.HdrKafkaOffset), 10, 64)
		if perr == nil && oerr == nil {
			topic, partition, offset = t, int32(p), o
			if ms, err := strconv.ParseInt(h.Get(wire.HdrKafkaTimestamp), 10, 64); err == nil {
				ts = ms
			}
		}
	}
	part := make([]byte, 4)
	binary.BigEndian.PutUint32(part, uint32(partition))
	off := make([]byte, 8)
	binary.BigEndian.PutUint64(off, uint64(offset))
	tsb := make([]byte, 8)
	binary.BigEndian.PutUint64(tsb, uint64(ts))
	return []kgo.RecordHeader{
		{Key: springOrigTopic, Value: []byte(topic)},
		{Key: springOrigPartition, Value: part},
		{Key: springOrigOffset, Value: off},
		{Key: springOrigTimestamp, Value: tsb},
		{Key: springOrigTSType, Value: []byte("CreateTime")},
		{Key: springExcFQCN, Value: []byte(exceptionFQCN(h, src.subject))},
		{Key: springExcMessage, Value: []byte(h.Get(wire.HdrErrorMsg))},
	}
}

func natsOrigin(h nats.Header, src dltSource) (topic string, partition int32, offset, ts int64) {
	topic = h.Get(wire.HdrOriginalTopic)
	if topic == "" {
		topic = src.subject
	}
	// edi.ingest.<partition>.<partner>: the hub's partition is the third token.
	if toks := strings.Split(topic, "."); len(toks) >= 4 {
		if p, err := strconv.ParseInt(toks[2], 10, 32); err == nil {
			partition = int32(p)
		}
	}
	offset = int64(src.streamSeq)
	if s, err := strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 63); err == nil {
		offset = int64(s)
	}
	return topic, partition, offset, src.stored.UnixMilli()
}

// exceptionFQCN names the failure the way Spring tooling expects a class
// name: edihub.<error class>.<cause>, e.g. edihub.permanent.schema.
func exceptionFQCN(h nats.Header, subject string) string {
	class := h.Get(wire.HdrErrorClass)
	if class == "" {
		class = "error"
	}
	cause := h.Get(wire.HdrErrorCause)
	if cause == "" {
		if toks := strings.Split(subject, "."); len(toks) >= 4 && toks[2] == "dlq" {
			cause = toks[3]
		}
	}
	if cause == "" {
		return "edihub." + class
	}
	return "edihub." + class + "." + cause
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
