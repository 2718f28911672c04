package bridge

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

func recHeader(r *kgo.Record, k string) string {
	v, _ := header(r, k)
	return v
}

// Outputs the hub stored aside reach Kafka with the payload inline, as
// fetched and checked, when the record fits max_record_bytes; one that
// does not becomes a dead-letter record on <topic>.DLT: the stub, the
// reference headers and the reason (Spring's headers too); one whose
// object is gone is quarantined with the reason. Nothing blocks the route.
func TestOutboundReferencedPayloads(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "edi.parsed", "edi.parsed.DLT")
	main, dlt := readTopic(t, brokers, "edi.parsed"), readTopic(t, brokers, "edi.parsed.DLT")
	ctx := context.Background()
	store, err := claimcheck.Open(ctx, h.js, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	aside := func(subject string, payload []byte, name string) *nats.Msg {
		t.Helper()
		m, err := store.Aside(ctx, &nats.Msg{Subject: subject, Header: nats.Header{wire.HdrPartnerID: {"ACME"}}, Data: payload}, name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fits := bytes.Repeat([]byte("f"), 40<<10)
	over := bytes.Repeat([]byte("o"), 200<<10)
	gone := aside("edi.parsed.ACME.INVOIC", []byte("will be deleted"), "INGEST:3:out:0")
	obj, err := h.js.ObjectStore(ctx, store.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	if err := obj.Delete(ctx, "INGEST:3:out:0"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*nats.Msg{
		aside("edi.parsed.ACME.INVOIC", fits, "INGEST:1:out:0"),
		aside("edi.parsed.ACME.INVOIC", over, "INGEST:2:out:0"),
		gone,
		{Subject: "edi.parsed.ACME.INVOIC", Data: []byte("inline")},
	} {
		publish(t, h, m)
	}
	cfg := testConfig(brokers)
	cfg.MaxRecordBytes = 64 << 10
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	reg := prometheus.NewRegistry()
	startBridge(t, h, cfg, reg)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return main.len() >= 2 && dlt.len() >= 1 }, "records on both topics")
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, h.js, "POISON") == 1 }, "the gone payload quarantined")

	recs := main.records()
	if !bytes.Equal(recs[0].Value, fits) || recHeader(recs[0], wire.HdrPayloadRef) != "" || string(recs[1].Value) != "inline" || string(recs[0].Key) != "ACME" {
		t.Fatalf("main topic: %d records, first %d bytes, ref %q, second %q", len(recs), len(recs[0].Value), recHeader(recs[0], wire.HdrPayloadRef), recs[1].Value)
	}
	d := dlt.records()[0]
	if !strings.Contains(string(d.Value), `"claim_check"`) || recHeader(d, wire.HdrPayloadRef) != store.Bucket()+"/INGEST:2:out:0" ||
		recHeader(d, wire.HdrErrorCause) != "oversize" || !strings.Contains(recHeader(d, "kafka_dlt-exception-message"), "over the producer's max record size") {
		t.Fatalf("dead-letter record %q, headers %v", d.Value, d.Headers)
	}
	if p := jetstreamtest.StreamMsgs(t, h.js, "POISON")[0]; !strings.Contains(p.Header.Get(wire.HdrErrorMsg), "the payload the message refers to cannot be sent") {
		t.Fatalf("quarantined gone payload: %v", p.Header)
	}
	if v, ok := metricValue(t, reg, "edihub_bridge_quarantined_total", "cause", "oversize"); !ok || v != 1 {
		t.Fatalf("quarantined{oversize} = %v %v", v, ok)
	}
}
