package bridge

import (
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

func publish(t testing.TB, h *hubNATS, m *nats.Msg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.js.PublishMsg(ctx, m); err != nil {
		t.Fatalf("publish %s: %v", m.Subject, err)
	}
}

// A bridge stopped mid-stream and replaced by a new one produces every
// PARSED message to Kafka exactly once, keyed by partner, each partner's
// records in stream order within their Kafka partition.
func TestOutboundExactlyOnceThroughRestart(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "edi.parsed")
	tr := readTopic(t, brokers, "edi.parsed")
	cfg := testConfig(brokers)
	cfg.BatchSize = 16
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	reg := prometheus.NewRegistry()

	const total = 1200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < total; i++ {
			p := partners[i%3]
			publish(t, h, &nats.Msg{Subject: "edi.parsed." + p + ".INVOIC", Data: []byte(valueOf(i))})
		}
	})
	a := startBridge(t, h, cfg, reg)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return tr.len() >= 200 }, "first bridge produced 200 records")
	a.stop(t)
	stoppedAt := tr.len()
	b := startBridge(t, h, cfg, reg)
	wg.Wait()
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return tr.len() >= total }, "all %d records in Kafka", total)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		v, ok := metricValue(t, reg, "edihub_bridge_lag_records", "route", "out-edi-parsed-all")
		return ok && v == 0
	}, "lag gauge at 0")
	b.stop(t)
	t.Logf("first bridge stopped after %d of %d records", stoppedAt, total)
	if stoppedAt >= total {
		t.Fatalf("the first bridge finished everything (%d); the restart did not happen mid-stream", stoppedAt)
	}

	seen := map[string]int{}
	last := map[string]int{}
	partOf := map[string]int32{}
	for _, r := range tr.records() {
		v := string(r.Value)
		seen[v]++
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "rec-"))
		key := string(r.Key)
		if key != partners[n%3] {
			t.Fatalf("%s: key %q, want the partner %s", v, key, partners[n%3])
		}
		if p, ok := partOf[key]; ok && p != r.Partition {
			t.Fatalf("partner %s in partitions %d and %d", key, p, r.Partition)
		}
		partOf[key] = r.Partition
		if prev, ok := last[key]; ok && n <= prev {
			t.Fatalf("partner %s: %s after rec-%05d: order lost", key, v, prev)
		}
		last[key] = n
	}
	for i := 0; i < total; i++ {
		if seen[valueOf(i)] != 1 {
			t.Fatalf("%s in Kafka %d times, want exactly once", valueOf(i), seen[valueOf(i)])
		}
	}
}

// A dead letter bridged to Kafka carries Spring Kafka's kafka_dlt-* headers
// in Spring's encodings, next to our x-* headers.
func TestOutboundSpringDLTHeaders(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "edi.parse.dlq.schema")
	tr := readTopic(t, brokers, "edi.parse.dlq.schema")
	cfg := testConfig(brokers)
	cfg.Outbound = []OutRoute{{Filter: "edi.parse.dlq.>"}} // topic {{subject}}, spring_dlt on by default
	r := startBridge(t, h, cfg, nil)

	before := time.Now().UnixMilli()
	// One that entered over NATS, one that entered through a Kafka route.
	m1 := nats.NewMsg("edi.parse.dlq.schema")
	m1.Data = []byte("UNA:+.? 'UNB+UNOC:3+ACME+HUB'")
	m1.Header.Set("x-original-topic", "edi.ingest.3.ACME")
	m1.Header.Set("x-original-seq", "42")
	m1.Header.Set("x-error-class", "permanent")
	m1.Header.Set("x-error-msg", "segment UNH missing")
	m1.Header.Set("x-partner-id", "ACME")
	m1.Header.Set("x-correlation-id", "c-1")
	publish(t, h, m1)
	m2 := nats.NewMsg("edi.parse.dlq.schema")
	m2.Data = []byte("second")
	m2.Header.Set("x-original-topic", "edi.ingest.5.GLOBEX")
	m2.Header.Set("x-original-seq", "7")
	m2.Header.Set("x-error-msg", "bad")
	m2.Header.Set("x-kafka-key", "GLOBEX")
	m2.Header.Set("x-kafka-topic", "partners.in")
	m2.Header.Set("x-kafka-partition", "2")
	m2.Header.Set("x-kafka-offset", "1234567890123")
	m2.Header.Set("x-kafka-timestamp", "1700000000000")
	m2.Header.Set("x-partner-id", "GLOBEX")
	wire.SignKafkaOrigin(testKeys, "GLOBEX", m2.Header) // as the inbound route did
	publish(t, h, m2)

	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return tr.len() == 2 }, "2 dead letters in Kafka")
	r.stop(t)
	recs := tr.records()
	if string(recs[0].Value) != string(m1.Data) {
		recs[0], recs[1] = recs[1], recs[0]
	}
	want := []struct {
		key, topic, fqcn, msg string
		partition             int32
		offset                int64
		tsExact               int64 // 0: between before and now
	}{
		{"ACME", "", "io.edihub.permanent.SchemaException", "segment UNH missing", 3, 42, 0},
		{"GLOBEX", "partners.in", "io.edihub.error.SchemaException", "bad", 2, 1234567890123, 1700000000000},
	}
	for i, w := range want {
		rec := recs[i]
		if string(rec.Key) != w.key {
			t.Fatalf("record %d: key %q, want %q", i, rec.Key, w.key)
		}
		raw := func(k string) []byte {
			for _, hh := range rec.Headers {
				if hh.Key == k {
					return hh.Value
				}
			}
			t.Fatalf("record %d: no header %s (have %v)", i, k, rec.Headers)
			return nil
		}
		if got := string(raw("kafka_dlt-exception-fqcn")); got != w.fqcn {
			t.Fatalf("record %d: fqcn %q, want %q", i, got, w.fqcn)
		}
		if w.topic == "" {
			// Entered over NATS: no Kafka record to name.
			if v, ok := header(rec, "kafka_dlt-original-topic"); ok {
				t.Fatalf("record %d: kafka_dlt-original-topic %q on a message that never was in Kafka", i, v)
			}
			continue
		}
		if got := string(raw("kafka_dlt-original-topic")); got != w.topic {
			t.Fatalf("record %d: original topic %q, want %q", i, got, w.topic)
		}
		p := raw("kafka_dlt-original-partition")
		if len(p) != 4 || int32(binary.BigEndian.Uint32(p)) != w.partition {
			t.Fatalf("record %d: partition bytes %x, want 4-byte big-endian %d", i, p, w.partition)
		}
		o := raw("kafka_dlt-original-offset")
		if len(o) != 8 || int64(binary.BigEndian.Uint64(o)) != w.offset {
			t.Fatalf("record %d: offset bytes %x, want 8-byte big-endian %d", i, o, w.offset)
		}
		ts := raw("kafka_dlt-original-timestamp")
		if len(ts) != 8 {
			t.Fatalf("record %d: timestamp is %d bytes, want 8", i, len(ts))
		}
		tsv := int64(binary.BigEndian.Uint64(ts))
		if (w.tsExact != 0 && tsv != w.tsExact) || (w.tsExact == 0 && (tsv < before-1000 || tsv > time.Now().UnixMilli())) {
			t.Fatalf("record %d: timestamp %d", i, tsv)
		}
		if got := string(raw("kafka_dlt-exception-fqcn")); got != w.fqcn {
			t.Fatalf("record %d: fqcn %q, want %q", i, got, w.fqcn)
		}
		if got := string(raw("kafka_dlt-exception-message")); got != w.msg {
			t.Fatalf("record %d: message %q, want %q", i, got, w.msg)
		}
		if got := string(raw("x-error-msg")); got != w.msg {
			t.Fatalf("record %d: x-error-msg %q", i, got)
		}
		if _, ok := header(rec, "x-kafka-key"); ok {
			t.Fatalf("record %d: x-kafka-key travelled as a header instead of the key", i)
		}
	}
	if got, _ := header(recs[0], "x-correlation-id"); got != "c-1" {
		t.Fatalf("x-correlation-id %q", got)
	}
}

// Kafka → NATS → Kafka keeps value, key (text and binary) and every x-*
// header, repeated ones in order; names the hub owns come back as
// x-producer-<name>. Two bridges, with the hub's step between them played
// by the test: an outbound route never reads what an inbound one wrote.
func TestRoundTripKeepsHeadersAndKeys(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "rt.in", "rt.out")
	tr := readTopic(t, brokers, "rt.out")
	cfgIn := testConfig(brokers)
	cfgIn.Inbound = []InRoute{{Topic: "rt.in", PartnerFrom: "header:x-partner-id"}}
	cfgOut := testConfig(brokers)
	cfgOut.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "rt.out"}}
	rIn := startBridge(t, h, cfgIn, nil)
	rOut := startBridge(t, h, cfgOut, nil)

	in := []*kgo.Record{
		{Topic: "rt.in", Key: []byte("ACME"), Value: []byte("text key"), Headers: []kgo.RecordHeader{
			{Key: "x-partner-id", Value: []byte("ACME")},
			{Key: "x-correlation-id", Value: []byte("corr-1")},
			{Key: "x-multi", Value: []byte("first")},
			{Key: "x-multi", Value: []byte("second")},
			{Key: "X-Upper-Case", Value: []byte("kept as written")},
			{Key: "x-bridge-copy", Value: []byte("forged mark")},
			{Key: "not-listed", Value: []byte("not ours")},
		}},
		{Topic: "rt.in", Key: []byte{0x00, 0xff, 0x10, 'k'}, Value: []byte("binary key"), Headers: []kgo.RecordHeader{
			{Key: "x-partner-id", Value: []byte("GLOBEX")},
			{Key: "x-message-id", Value: []byte("ICR-0001")},
		}},
		{Topic: "rt.in", Value: []byte("no key"), Headers: []kgo.RecordHeader{{Key: "x-partner-id", Value: []byte("INITECH")}}},
	}
	produce(t, kafkaClient(t, brokers), in...)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == len(in) }, "%d records in INGEST", len(in))
	// The hub's step: each ingested message becomes edi.parsed.<partner>.X
	// with the producer's headers, hub-owned names kept aside.
	for _, m := range h.streamMsgs(t, "INGEST") {
		if m.Header.Get("x-bridge-copy") != "in-rt-in" {
			t.Fatalf("inbound copy not marked by its route: %v", m.Header)
		}
		out := nats.NewMsg("edi.parsed." + strings.Split(m.Subject, ".")[3] + ".X")
		out.Data = m.Data
		for k, vs := range m.Header {
			if strings.HasPrefix(k, "Nats-") {
				continue
			}
			out.Header[wire.ProducerName(k)] = vs
		}
		publish(t, h, out)
	}
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return tr.len() == len(in) }, "%d records round-tripped", len(in))
	rIn.stop(t)
	rOut.stop(t)

	out := map[string]*kgo.Record{}
	for _, rec := range tr.records() {
		out[string(rec.Value)] = rec
	}
	for _, src := range in {
		got := out[string(src.Value)]
		if got == nil {
			t.Fatalf("%q did not come back", src.Value)
		}
		wantKey := src.Key
		if wantKey == nil {
			// No Kafka key: the outbound side keys by the partner token.
			p, _ := header(src, "x-partner-id")
			wantKey = []byte(p)
		}
		if string(got.Key) != string(wantKey) {
			t.Fatalf("%q: key %x, want %x", src.Value, got.Key, wantKey)
		}
		var wantX, gotX []string
		for _, hh := range src.Headers {
			if isXHeader(hh.Key) {
				wantX = append(wantX, wire.ProducerName(hh.Key)+"="+string(hh.Value))
			}
		}
		for _, hh := range got.Headers {
			if isXHeader(hh.Key) && !strings.HasPrefix(hh.Key, "x-kafka-") && !strings.HasPrefix(hh.Key, "x-producer-x-bridge-copy") {
				gotX = append(gotX, hh.Key+"="+string(hh.Value))
			}
		}
		wantX = slices.DeleteFunc(wantX, func(s string) bool { return strings.HasPrefix(s, "x-producer-x-bridge-copy") })
		if !sameMultiset(wantX, gotX) {
			t.Fatalf("%q: x-* headers %v, want %v", src.Value, gotX, wantX)
		}
		if i := indexOf(wantX, "x-multi=first"); i >= 0 {
			if j := indexOf(gotX, "x-multi=first"); j < 0 || j+1 >= len(gotX) || gotX[j+1] != "x-multi=second" {
				t.Fatalf("repeated header out of order: %v", gotX)
			}
		}
		if _, ok := header(got, "not-listed"); ok {
			t.Fatal("a non-x header that is not listed crossed the bridge")
		}
		if v, ok := header(got, "x-bridge-copy"); ok {
			t.Fatalf("x-bridge-copy %q reached Kafka", v)
		}
		if ts, _ := header(got, "x-kafka-offset"); ts == "" {
			t.Fatalf("%q: no x-kafka-offset provenance", src.Value)
		}
	}
}

func sameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, s := range a {
		n[s]++
	}
	for _, s := range b {
		n[s]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Messages Kafka cannot take (an illegal topic name from the template, a
// record over the producer's limit) land in POISON and the route goes on.
func TestOutboundQuarantinesUnmappable(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 4<<20)
	_, brokers := startKafka(t, "edi.parsed.ACME.INVOIC")
	tr := readTopic(t, brokers, "edi.parsed.ACME.INVOIC")
	cfg := testConfig(brokers)
	cfg.MaxRecordBytes = 64 << 10
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>"}} // topic {{subject}}
	r := startBridge(t, h, cfg, nil)

	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: []byte("good-1")})
	bad := nats.NewMsg("edi.parsed.AC+ME.INVOIC")
	bad.Data = []byte("bad topic")
	bad.Header.Set("x-correlation-id", "c-9")
	publish(t, h, bad)
	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: make([]byte, 100<<10)})
	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: []byte("good-2")})

	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return tr.len() == 2 && h.count(t, "POISON") == 2 }, "2 in Kafka, 2 in POISON")
	r.stop(t)
	recs := tr.records()
	if string(recs[0].Value) != "good-1" || string(recs[1].Value) != "good-2" {
		t.Fatalf("Kafka holds %q, %q", recs[0].Value, recs[1].Value)
	}
	poison := h.streamMsgs(t, "POISON")
	wants := []struct{ cause, seq string }{{causeBadTopic, "2"}, {causeOversize, "3"}}
	for i, w := range wants {
		m := poison[i]
		if got := m.Header.Get("x-poison-cause"); got != w.cause {
			t.Fatalf("poison %d: cause %q, want %q (%s)", i, got, w.cause, m.Header.Get("x-error-msg"))
		}
		if got := m.Header.Get("x-original-seq"); got != w.seq {
			t.Fatalf("poison %d: x-original-seq %q, want %s", i, got, w.seq)
		}
		if got, want := m.Header.Get("Nats-Msg-Id"), "PARSED:"+w.seq+":bridge-poison"; got != want {
			t.Fatalf("poison %d: Nats-Msg-Id %q, want %q", i, got, want)
		}
		t.Logf("poison %d: %s: %s", i, m.Header.Get("x-poison-cause"), m.Header.Get("x-error-msg"))
	}
	if poison[0].Header.Get("x-correlation-id") != "c-9" || poison[0].Header.Get("x-original-topic") != "edi.parsed.AC+ME.INVOIC" {
		t.Fatalf("poison copy lost headers: %v", poison[0].Header)
	}
}
