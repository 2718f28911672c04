package bridge

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestKafkaToNATSAndBack(t *testing.T) {
	rec := &kgo.Record{Topic: "t", Partition: 2, Offset: 9, Timestamp: time.UnixMilli(1700000000123),
		Key: []byte{0, 1, 0xfe}, Headers: []kgo.RecordHeader{
			{Key: "x-a", Value: []byte("1")}, {Key: "x-a", Value: []byte("2")},
			{Key: "x-kafka-offset", Value: []byte("forged")}, {Key: "other", Value: []byte{0, 1}},
		}}
	h := nats.Header{}
	if err := kafkaToNATS(rec, h, nil); err != nil {
		t.Fatal(err)
	}
	if got := h.Values("x-a"); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Fatalf("x-a: %v", got)
	}
	if h.Get("x-kafka-offset") != "9" || h.Get("x-kafka-partition") != "2" || h.Get("x-kafka-timestamp") != "1700000000123" {
		t.Fatalf("provenance: %v", h)
	}
	if h.Get("other") != "" || h.Get(wire.HdrKafkaKeyEnc) != "base64" {
		t.Fatalf("headers: %v", h)
	}
	key, hs, err := natsToKafka(h, nil)
	if err != nil || string(key) != string(rec.Key) {
		t.Fatalf("key %x, %v", key, err)
	}
	for _, kh := range hs {
		if kh.Key == wire.HdrKafkaKey || kh.Key == wire.HdrKafkaKeyEnc {
			t.Fatalf("%s sent as a header", kh.Key)
		}
	}
	if hs[0].Key != "x-a" || string(hs[0].Value) != "1" || string(hs[1].Value) != "2" {
		t.Fatalf("headers not sorted or repeated values out of order: %v", hs)
	}
}

func TestKafkaToNATSRefusesBadHeaders(t *testing.T) {
	for _, kh := range []kgo.RecordHeader{
		{Key: "x-a", Value: []byte("a\nb")},
		{Key: "x-a", Value: []byte{0xff, 0xfe}},
		{Key: "x-a b", Value: []byte("v")},
		{Key: "x-a:b", Value: []byte("v")},
	} {
		err := kafkaToNATS(&kgo.Record{Headers: []kgo.RecordHeader{kh}}, nats.Header{}, nil)
		if _, ok := err.(*headerError); !ok {
			t.Errorf("%q=%q: %v", kh.Key, kh.Value, err)
		}
	}
}

func TestDLTHeaderSets(t *testing.T) {
	stored := time.UnixMilli(1700000000999)
	src := dltSource{subject: "edi.parse.dlq.bad-header", streamSeq: 77, stored: stored}
	nh := nats.Header{}
	nh.Set("x-original-topic", "edi.ingest.7.ACME")
	nh.Set("x-original-seq", "12")
	nh.Set("x-error-class", "permanent")
	nh.Set("x-error-msg", "header x: broken")
	got := map[string][]byte{}
	for _, kh := range dltHeaders(DLTSpring, nh, src) {
		got[kh.Key] = kh.Value
	}
	if _, ok := got[springOrigTopic]; ok {
		t.Fatal("kafka_dlt-original-topic on a message that did not come from Kafka")
	}
	if string(got[springExcFQCN]) != "io.edihub.permanent.BadHeaderException" || string(got[springExcCauseFQCN]) != "io.edihub.permanent.BadHeaderException" {
		t.Fatalf("fqcn %q cause %q", got[springExcFQCN], got[springExcCauseFQCN])
	}
	if want := "io.edihub.permanent.BadHeaderException: header x: broken\n\tat io.edihub.parse.Stage.process(edi.ingest.7.ACME:12)"; string(got[springExcStacktrace]) != want {
		t.Fatalf("stacktrace %q", got[springExcStacktrace])
	}

	kh := nats.Header{}
	kh.Set("x-kafka-topic", "partners.in")
	kh.Set("x-kafka-partition", "7")
	kh.Set("x-kafka-offset", "77")
	kh.Set("x-kafka-timestamp", "1700000000999")
	kh.Set("x-kafka-group", "edihub-bridge-in")
	got = map[string][]byte{}
	for _, h := range dltHeaders(DLTSpring, kh, src) {
		got[h.Key] = h.Value
	}
	if string(got[springOrigTopic]) != "partners.in" || len(got[springOrigPartition]) != 4 || int32(binary.BigEndian.Uint32(got[springOrigPartition])) != 7 {
		t.Fatalf("topic %q partition %x", got[springOrigTopic], got[springOrigPartition])
	}
	if binary.BigEndian.Uint64(got[springOrigOffset]) != 77 || binary.BigEndian.Uint64(got[springOrigTimestamp]) != 1700000000999 {
		t.Fatalf("offset %x timestamp %x", got[springOrigOffset], got[springOrigTimestamp])
	}
	if string(got[springOrigGroup]) != "edihub-bridge-in" || string(got[springOrigTSType]) != "CreateTime" || string(got[springExcFQCN]) != "io.edihub.error.BadHeaderException" {
		t.Fatalf("group %q type %q fqcn %q", got[springOrigGroup], got[springOrigTSType], got[springExcFQCN])
	}
	got = map[string][]byte{}
	for _, h := range dltHeaders(DLTConnect, kh, src) {
		got[h.Key] = h.Value
	}
	for k, want := range map[string]string{
		"__connect.errors.topic": "partners.in", "__connect.errors.partition": "7", "__connect.errors.offset": "77",
		"__connect.errors.exception.class.name": "io.edihub.error.BadHeaderException", "__connect.errors.stage": "PARSE",
		"__connect.errors.connector.name": "edihub-bridge",
	} {
		if string(got[k]) != want {
			t.Errorf("%s %q, want %q", k, got[k], want)
		}
	}
	if len(dltHeaders(DLTNone, kh, src)) != 0 {
		t.Fatal("none adds headers")
	}
}
