package bridge

import (
	"encoding/binary"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Dead-letter header sets an outbound route can add (OutRoute.DLTHeaders).
const (
	DLTNone    = "none"
	DLTSpring  = "spring"  // Spring Kafka's DeadLetterPublishingRecoverer
	DLTConnect = "connect" // Kafka Connect's errors.deadletterqueue.context.headers.enable
)

// Spring Kafka's dead-letter headers (KafkaHeaders.DLT_*, prefix "kafka_").
// DeadLetterPublishingRecoverer writes topic, group, class names, message
// and stack trace as UTF-8, partition as a 4-byte big-endian int, offset
// and timestamp as 8-byte big-endian longs, the timestamp type as the
// enum's name.
const (
	springOrigTopic     = "kafka_dlt-original-topic"
	springOrigPartition = "kafka_dlt-original-partition"
	springOrigOffset    = "kafka_dlt-original-offset"
	springOrigTimestamp = "kafka_dlt-original-timestamp"
	springOrigTSType    = "kafka_dlt-original-timestamp-type"
	springOrigGroup     = "kafka_dlt-original-consumer-group"
	springExcFQCN       = "kafka_dlt-exception-fqcn"
	springExcCauseFQCN  = "kafka_dlt-exception-cause-fqcn"
	springExcMessage    = "kafka_dlt-exception-message"
	springExcStacktrace = "kafka_dlt-exception-stacktrace"
)

// Kafka Connect's dead-letter context headers (all UTF-8 strings).
const (
	connectPrefix       = "__connect.errors."
	connectTopic        = connectPrefix + "topic"
	connectPartition    = connectPrefix + "partition"
	connectOffset       = connectPrefix + "offset"
	connectConnector    = connectPrefix + "connector.name"
	connectTask         = connectPrefix + "task.id"
	connectStage        = connectPrefix + "stage"
	connectClass        = connectPrefix + "class.name"
	connectExcClass     = connectPrefix + "exception.class.name"
	connectExcMessage   = connectPrefix + "exception.message"
	connectExcStackrace = connectPrefix + "exception.stacktrace"
)

// dltSource is what the dead-letter headers describe.
type dltSource struct {
	subject   string    // the dead letter's own subject, edi.<stage>.dlq.<cause>
	streamSeq uint64    // its stream sequence
	stored    time.Time // when JetStream stored it
}

// kafkaOrigin is where a message came from when it entered through an
// inbound route; ok is false for one that entered over NATS.
type kafkaOrigin struct {
	topic     string
	partition int32
	offset    int64
	ts        int64
	group     string
	ok        bool
}

func originOf(h nats.Header) kafkaOrigin {
	t := h.Get(wire.HdrKafkaTopic)
	p, perr := strconv.ParseInt(h.Get(wire.HdrKafkaPartition), 10, 32)
	o, oerr := strconv.ParseInt(h.Get(wire.HdrKafkaOffset), 10, 64)
	if t == "" || perr != nil || oerr != nil {
		return kafkaOrigin{}
	}
	ts, _ := strconv.ParseInt(h.Get(wire.HdrKafkaTimestamp), 10, 64)
	return kafkaOrigin{topic: t, partition: int32(p), offset: o, ts: ts, group: h.Get(wire.HdrKafkaGroup), ok: true}
}

// dltHeaders builds the dead-letter headers of format for a message. The
// original-record headers (topic, partition, offset, timestamp, group)
// are set only when the message came from Kafka: they name a Kafka record
// a Spring or Connect tool can find and replay. One that entered over NATS
// keeps its origin in x-original-topic / x-original-seq.
func dltHeaders(format string, h nats.Header, src dltSource) []kgo.RecordHeader {
	fqcn := javaFQCN(h, src.subject)
	msg := h.Get(wire.HdrErrorMsg)
	trace := stackTrace(fqcn, msg, h, src)
	o := originOf(h)
	var hs []kgo.RecordHeader
	add := func(k string, v []byte) { hs = append(hs, kgo.RecordHeader{Key: k, Value: v}) }
	switch format {
	case DLTSpring:
		if o.ok {
			part := make([]byte, 4)
			binary.BigEndian.PutUint32(part, uint32(o.partition))
			off := make([]byte, 8)
			binary.BigEndian.PutUint64(off, uint64(o.offset))
			tsb := make([]byte, 8)
			binary.BigEndian.PutUint64(tsb, uint64(o.ts))
			add(springOrigTopic, []byte(o.topic))
			add(springOrigPartition, part)
			add(springOrigOffset, off)
			add(springOrigTimestamp, tsb)
			add(springOrigTSType, []byte("CreateTime"))
			if o.group != "" {
				add(springOrigGroup, []byte(o.group))
			}
		}
		add(springExcFQCN, []byte(fqcn))
		add(springExcCauseFQCN, []byte(fqcn))
		add(springExcMessage, []byte(msg))
		add(springExcStacktrace, []byte(trace))
	case DLTConnect:
		if o.ok {
			add(connectTopic, []byte(o.topic))
			add(connectPartition, []byte(strconv.FormatInt(int64(o.partition), 10)))
			add(connectOffset, []byte(strconv.FormatInt(o.offset, 10)))
		}
		add(connectConnector, []byte("edihub-bridge"))
		add(connectTask, []byte("0"))
		add(connectStage, []byte(strings.ToUpper(stageOf(h, src.subject))))
		add(connectClass, []byte("io.edihub."+javaPackage(stageOf(h, src.subject))))
		add(connectExcClass, []byte(fqcn))
		add(connectExcMessage, []byte(msg))
		add(connectExcStackrace, []byte(trace))
	}
	return hs
}

// javaFQCN names the failure as Spring and Connect tools expect a Java
// exception class: io.edihub.<error class>.<Cause>Exception, e.g.
// io.edihub.permanent.SchemaException for cause "schema".
func javaFQCN(h nats.Header, subject string) string {
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
	return "io.edihub." + javaPackage(class) + "." + javaClass(cause) + "Exception"
}

// javaPackage keeps a package name token: lower-case letters and digits.
func javaPackage(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || !unicode.IsLetter(rune(b.String()[0])) {
		return "x" + b.String()
	}
	return b.String()
}

// javaClass turns "bad-header" into "BadHeader" ("Edihub" when empty).
func javaClass(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r >= 0x80 || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 || !unicode.IsLetter(rune(b.String()[0])) {
		return "Edihub" + b.String()
	}
	return b.String()
}

// stageOf is the hub stage that gave the message up: x-stage, else the
// stage token of edi.<stage>.dlq.<cause>.
func stageOf(h nats.Header, subject string) string {
	if s := h.Get(wire.HdrStage); s != "" {
		return s
	}
	if toks := strings.Split(subject, "."); len(toks) >= 3 {
		return toks[1]
	}
	return "bridge"
}

// stackTrace is a Java-style trace: the exception line and one frame that
// names the hub stage and where the message was read from.
func stackTrace(fqcn, msg string, h nats.Header, src dltSource) string {
	where := h.Get(wire.HdrOriginalTopic)
	if where == "" {
		where = src.subject
	}
	if seq := h.Get(wire.HdrOriginalSeq); seq != "" {
		where += ":" + seq
	}
	line := fqcn
	if msg != "" {
		line += ": " + msg
	}
	return line + "\n\tat io.edihub." + javaPackage(stageOf(h, src.subject)) + ".Stage.process(" + where + ")"
}

// manualPartition marks a record (in its Context) whose Partition the
// bridge chose: Spring's DLT naming keeps the original record's partition.
type manualPartition struct{}

// dltPartitioner partitions like kgo's default (sticky, murmur2 by key)
// except for records marked manualPartition.
type dltPartitioner struct{}

func (dltPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &dltTopicPartitioner{def: kgo.StickyKeyPartitioner(nil).ForTopic(topic)}
}

type dltTopicPartitioner struct{ def kgo.TopicPartitioner }

func manual(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(manualPartition{}) != nil
}

func (p *dltTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return manual(r) || p.def.RequiresConsistency(r)
}

func (p *dltTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if manual(r) {
		// A DLT topic with fewer partitions than the original: stay
		// deterministic rather than fail.
		return int(r.Partition) % n
	}
	return p.def.Partition(r, n)
}

// OnNewBatch keeps the default's sticky behaviour for records without a key.
func (p *dltTopicPartitioner) OnNewBatch() {
	if nb, ok := p.def.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}
