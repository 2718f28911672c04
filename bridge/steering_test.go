package bridge

import (
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A NATS producer's x-kafka-* headers steer nothing: a parsed invoice of
// ACME with a forged x-kafka-key (or one the bridge signed for GLOBEX,
// copied over) is keyed ACME, from its subject; a dead letter of ACME
// with a forged origin (topic, partition, offset, a made-up MAC) goes to
// the route's topic, keyed ACME, without Spring's original-record
// headers. The forged values travel as x-producer-x-kafka-*.
func TestOutboundIgnoresForgedKafkaHeaders(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "parsed.out", "dlq.out", "victim.in.DLT")
	parsed := readTopic(t, brokers, "parsed.out")
	dlq := readTopic(t, brokers, "dlq.out")
	victim := readTopic(t, brokers, "victim.in.DLT")
	cfg := testConfig(brokers)
	cfg.Outbound = []OutRoute{
		{Name: "parsed", Filter: "edi.parsed.>", Topic: "parsed.out"},
		{Name: "dlq", Filter: "edi.parse.dlq.>", Topic: "dlq.out", DLTHeaders: DLTSpring, DLTTopic: "spring"},
	}
	r := startBridge(t, h, cfg, nil)

	forged := nats.NewMsg("edi.parsed.ACME.INVOIC")
	forged.Data = []byte("forged key")
	forged.Header.Set("x-kafka-key", "GLOBEX")
	forged.Header.Set("X-Kafka-Topic", "victim.in")
	publish(t, h, forged)

	replayed := nats.NewMsg("edi.parsed.ACME.INVOIC")
	replayed.Data = []byte("GLOBEX's signature")
	replayed.Header.Set("x-kafka-key", "GLOBEX")
	replayed.Header.Set("x-kafka-topic", "victim.in")
	wire.SignKafkaOrigin(testKeys, "GLOBEX", replayed.Header) // valid, for another partner
	publish(t, h, replayed)

	dl := nats.NewMsg("edi.parse.dlq.schema")
	dl.Data = []byte("forged origin")
	dl.Header.Set("x-partner-id", "ACME") // the hub's
	dl.Header.Set("x-error-class", "permanent")
	dl.Header.Set("x-kafka-key", "GLOBEX")
	dl.Header.Set("x-kafka-topic", "victim.in")
	dl.Header.Set("x-kafka-partition", "0")
	dl.Header.Set("x-kafka-offset", "99")
	dl.Header.Set("x-kafka-timestamp", "1700000000000")
	dl.Header.Set(wire.HdrKafkaMAC, testKeys.CurrentID()+":00ff")
	publish(t, h, dl)

	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return parsed.len() == 2 && dlq.len()+victim.len() == 1 }, "3 records in Kafka")
	r.stop(t)
	if victim.len() != 0 {
		t.Fatalf("a dead letter reached another partner's DLT: %v", victim.records()[0].Headers)
	}
	for _, rec := range append(parsed.records(), dlq.records()...) {
		if string(rec.Key) != "ACME" {
			t.Errorf("%q keyed %q, want ACME", rec.Value, rec.Key)
		}
		for _, n := range []string{"x-kafka-key", "x-kafka-topic", "x-kafka-offset", wire.HdrKafkaMAC, springOrigTopic, springOrigOffset, springOrigPartition} {
			if v, ok := header(rec, n); ok {
				t.Errorf("%q carries %s=%q", rec.Value, n, v)
			}
		}
		if v, _ := header(rec, "x-producer-x-kafka-topic"); v != "victim.in" {
			t.Errorf("%q: the producer's x-kafka-topic not kept aside: %v", rec.Value, rec.Headers)
		}
	}
}

// What an inbound route brought in keeps its Kafka key and origin all the
// way out: the bridge signed it for the partner it published it for.
func TestInboundSignsItsKafkaHeaders(t *testing.T) {
	rec := &kgo.Record{Topic: "partners.in", Partition: 1, Offset: 5, Timestamp: time.UnixMilli(1700000000000), Key: []byte("ACME"),
		Headers: []kgo.RecordHeader{{Key: "x-kafka-topic", Value: []byte("forged")}, {Key: "x-kafka-mac", Value: []byte("forged")}}}
	in := &inbound{b: &Bridge{cfg: &Config{Keys: testKeys}}, r: InRoute{Name: "in", Topic: "partners.in", Subject: "edi.ingest.{{partner}}", Group: "g"}, src: partnerSource{}}
	it := in.mapRecord(rec, 1<<20)
	if it.poison != nil {
		t.Fatalf("poison: %v", it.poison)
	}
	hd := it.msg.Header
	if hd.Get("x-kafka-topic") != "partners.in" || hd.Get("x-producer-x-kafka-topic") != "forged" || hd.Get("x-producer-x-kafka-mac") != "forged" {
		t.Fatalf("headers %v", hd)
	}
	if !wire.KafkaOriginSigned(testKeys, "ACME", hd) || wire.KafkaOriginSigned(testKeys, "GLOBEX", hd) {
		t.Fatal("x-kafka-mac does not verify for ACME alone")
	}
	if got := hubOwnedHeaders(testKeys, "ACME", hd); got.Get("x-kafka-topic") != "partners.in" {
		t.Fatalf("signed origin dropped: %v", got)
	}
}
