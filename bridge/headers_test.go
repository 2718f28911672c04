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
	if err := kafkaToNATS(rec, h); err != nil {
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
	key, hs, err := natsToKafka(h)
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
		err := kafkaToNATS(&kgo.Record{Headers: []kgo.RecordHeader{kh}}, nats.Header{})
		if _, ok := err.(*headerError); !ok {
			t.Errorf("%q=%q: %v", kh.Key, kh.Value, err)
		}
	}
}

func TestSpringDLTEncodings(t *testing.T) {
	stored := time.UnixMilli(1700000000999)
	h := nats.Header{}
	h.Set("x-original-topic", "edi.ingest.7.ACME")
	h.Set("x-original-seq", "-1") // not a number: the stream sequence is used
	h.Set("x-error-cause", "business")
	got := map[string][]byte{}
	for _, kh := range springDLTHeaders(h, dltSource{subject: "edi.parse.dlq.business", streamSeq: 77, stored: stored}) {
		got[kh.Key] = kh.Value
	}
	if int32(binary.BigEndian.Uint32(got[springOrigPartition])) != 7 || len(got[springOrigPartition]) != 4 {
		t.Fatalf("partition %x", got[springOrigPartition])
	}
	if binary.BigEndian.Uint64(got[springOrigOffset]) != 77 || binary.BigEndian.Uint64(got[springOrigTimestamp]) != 1700000000999 {
		t.Fatalf("offset %x timestamp %x", got[springOrigOffset], got[springOrigTimestamp])
	}
	if string(got[springExcFQCN]) != "edihub.error.business" || string(got[springOrigTSType]) != "CreateTime" {
		t.Fatalf("fqcn %q type %q", got[springExcFQCN], got[springOrigTSType])
	}
}
