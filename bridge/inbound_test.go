package bridge

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

var partners = []string{"ACME", "GLOBEX", "INITECH"}

// A bridge stopped mid-stream and replaced by a new one moves every record
// to INGEST exactly once, each partner's records in Kafka order.
func TestInboundExactlyOnceThroughRestart(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "partners.in")
	cl := kafkaClient(t, brokers)
	cfg := testConfig(brokers)
	cfg.BatchSize = 16 // many small batches, so the stop lands mid-stream
	cfg.Inbound = []InRoute{{Topic: "partners.in"}}
	reg := prometheus.NewRegistry()

	const total = 1200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < total; i += 100 {
			var recs []*kgo.Record
			for j := i; j < i+100; j++ {
				recs = append(recs, &kgo.Record{Topic: "partners.in", Key: []byte(partners[j%3]), Value: []byte(valueOf(j))})
			}
			produce(t, cl, recs...)
		}
	})

	a := startBridge(t, h, cfg, reg)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") >= 200 }, "first bridge moved 200 records")
	a.stop(t)
	stoppedAt := h.count(t, "INGEST")
	b := startBridge(t, h, cfg, reg)
	wg.Wait()
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") >= total }, "all %d records in INGEST", total)
	// The lag gauge reaches zero once the group committed everything.
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		v, ok := metricValue(t, reg, "edihub_bridge_lag_records", "route", "in-partners-in")
		return ok && v == 0
	}, "lag gauge at 0")
	b.stop(t)
	t.Logf("first bridge stopped after %d of %d records", stoppedAt, total)
	if stoppedAt >= total {
		t.Fatalf("the first bridge finished everything (%d); the restart did not happen mid-stream", stoppedAt)
	}

	seen := map[string]int{}
	last := map[string]int{}
	for _, m := range h.streamMsgs(t, "INGEST") {
		v := string(m.Data)
		seen[v]++
		toks := strings.Split(m.Subject, ".")
		partner := toks[len(toks)-1]
		if got := m.Header.Get("x-kafka-key"); got != partner {
			t.Fatalf("%s: x-kafka-key %q, subject partner %q", v, got, partner)
		}
		if id := m.Header.Get("Nats-Msg-Id"); !strings.HasPrefix(id, "kafka:kfake:") || !strings.Contains(id, ":partners.in/") {
			t.Fatalf("%s: Nats-Msg-Id %q", v, m.Header.Get("Nats-Msg-Id"))
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "rec-"))
		if prev, ok := last[partner]; ok && n <= prev {
			t.Fatalf("partner %s: %s stored after rec-%05d: order lost", partner, v, prev)
		}
		last[partner] = n
	}
	for i := 0; i < total; i++ {
		if seen[valueOf(i)] != 1 {
			t.Fatalf("%s stored %d times, want exactly once", valueOf(i), seen[valueOf(i)])
		}
	}
	if len(seen) != total {
		t.Fatalf("%d distinct records in INGEST, want %d", len(seen), total)
	}
	got, _ := metricValue(t, reg, "edihub_bridge_records_total", "direction", "in", "route", "in-partners-in")
	if got < total {
		t.Fatalf("records_total %v, want >= %d", got, total)
	}
}

// Records that cannot be mapped land in POISON with their cause and the
// route goes on: the records after them arrive and the offsets are committed.
func TestInboundQuarantinesUnmappable(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 64<<10) // NATS max payload 64 KiB, so 100 KiB is oversize
	_, brokers := startKafka(t, "partners.in")
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "partners.in", Group: "g-poison"}}

	big := bytes.Repeat([]byte("X"), 100<<10)
	// One partition so the order of good and bad records is fixed.
	recs := []*kgo.Record{
		{Key: []byte("ACME"), Value: []byte("good-1")},
		{Value: []byte("no-key")},
		{Key: []byte("ACME"), Value: []byte("bad-header"), Headers: []kgo.RecordHeader{{Key: "x-note", Value: []byte("line1\r\nline2")}}},
		{Key: []byte("AC.ME"), Value: []byte("bad-partner")},
		{Key: []byte("ACME"), Value: big},
		{Key: []byte("ACME"), Value: []byte("good-2")},
	}
	for _, r := range recs {
		r.Topic, r.Partition = "partners.in", 0
	}
	produce(t, kafkaClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner())), recs...)

	r := startBridge(t, h, cfg, nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") == 2 && h.count(t, "POISON") == 4 }, "2 in INGEST, 4 in POISON")

	ingest := h.streamMsgs(t, "INGEST")
	if string(ingest[0].Data) != "good-1" || string(ingest[1].Data) != "good-2" {
		t.Fatalf("INGEST holds %q, %q", ingest[0].Data, ingest[1].Data)
	}
	wantCause := map[int64]string{1: causeNoPartner, 2: causeBadHeader, 3: causeBadPartner, 4: causeOversize}
	for _, m := range h.streamMsgs(t, "POISON") {
		if m.Subject != "edi.poison.bridge" {
			t.Fatalf("poison subject %q", m.Subject)
		}
		off, _ := strconv.ParseInt(m.Header.Get("x-kafka-offset"), 10, 64)
		if got := m.Header.Get("x-poison-cause"); got != wantCause[off] {
			t.Fatalf("offset %d: cause %q, want %q", off, got, wantCause[off])
		}
		for _, k := range []string{"x-error-msg", "x-detected-at", "x-kafka-partition"} {
			if m.Header.Get(k) == "" {
				t.Fatalf("offset %d: no %s header", off, k)
			}
		}
		if got := m.Header.Get("x-original-topic"); got != "partners.in" {
			t.Fatalf("offset %d: x-original-topic %q", off, got)
		}
		if got, want := m.Header.Get("Nats-Msg-Id"), ":partners.in/0/"+strconv.FormatInt(off, 10)+":poison"; !strings.HasPrefix(got, "kafka:kfake:") || !strings.HasSuffix(got, want) {
			t.Fatalf("offset %d: Nats-Msg-Id %q, want kafka:kfake:<topic id>%s", off, got, want)
		}
		if off == 4 {
			if m.Header.Get("x-payload-truncated") != "true" || m.Header.Get("x-payload-size") != strconv.Itoa(len(big)) || len(m.Data) >= len(big) {
				t.Fatalf("oversize poison copy: truncated=%q size=%q len=%d", m.Header.Get("x-payload-truncated"), m.Header.Get("x-payload-size"), len(m.Data))
			}
		} else if off == 2 && m.Header.Get("x-note") != "" {
			t.Fatal("the bad header was copied into the poison message")
		}
		t.Logf("offset %d: %s: %s", off, m.Header.Get("x-poison-cause"), m.Header.Get("x-error-msg"))
	}

	// Everything, poison included, is committed: a restart re-reads nothing.
	adm := kadm.NewClient(kafkaClient(t, brokers))
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		offs, err := adm.FetchOffsets(context.Background(), "g-poison")
		if err != nil {
			return false
		}
		o, ok := offs.Lookup("partners.in", 0)
		return ok && o.At == int64(len(recs))
	}, "offset %d committed", len(recs))
	r.stop(t)
}

// errors_tolerance none: a record that cannot be mapped stops the bridge
// (Run returns the error) instead of going to quarantine; what came
// before it is stored, it and what follows stay uncommitted.
func TestFailFastStopsAtUnmappable(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ff.in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	cfg := testConfig(brokers)
	cfg.ErrorsTolerance = "none"
	cfg.Inbound = []InRoute{{Topic: "ff.in"}}
	produce(t, kafkaClient(t, brokers),
		&kgo.Record{Topic: "ff.in", Key: []byte("ACME"), Value: []byte("good")},
		&kgo.Record{Topic: "ff.in", Value: []byte("no key, no partner")},
		&kgo.Record{Topic: "ff.in", Key: []byte("ACME"), Value: []byte("after")})
	b, err := New(cfg, h.nc, h.js, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "errors_tolerance is none") {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge did not stop")
	}
	if n, p := h.count(t, "INGEST"), h.count(t, "POISON"); n != 1 || p != 0 {
		t.Fatalf("INGEST %d POISON %d, want 1 and 0", n, p)
	}
}

// dlt_topic: an unmappable record is also written to a Kafka dead-letter
// topic, as it was, with Spring's headers naming where it came from.
func TestInboundUnmappableToKafkaDLT(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "dl.in", "dl.in.DLT")
	tr := readTopic(t, brokers, "dl.in.DLT")
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "dl.in", DLTTopic: "{{topic}}.DLT"}}
	r := startBridge(t, h, cfg, nil)
	produce(t, kafkaClient(t, brokers),
		&kgo.Record{Topic: "dl.in", Key: []byte("ACME"), Value: []byte("good")},
		&kgo.Record{Topic: "dl.in", Value: []byte("no partner"), Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("tp")}}})
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		return tr.len() == 1 && h.count(t, "POISON") == 1 && h.count(t, "INGEST") == 1
	}, "one stored, one quarantined and in the Kafka DLT")
	r.stop(t)
	rec := tr.records()[0]
	if string(rec.Value) != "no partner" {
		t.Fatalf("DLT value %q", rec.Value)
	}
	for k, want := range map[string]string{
		"kafka_dlt-original-topic": "dl.in", "kafka_dlt-exception-fqcn": "io.edihub.bridge.NoPartnerException",
		"kafka_dlt-original-consumer-group": "edihub-bridge-in-dl-in", "traceparent": "tp",
	} {
		if got, _ := header(rec, k); got != want {
			t.Errorf("%s %q, want %q", k, got, want)
		}
	}
	if err := (&Config{Brokers: []string{"k:1"}, Inbound: []InRoute{{Topic: "a"}, {Topic: "a.DLT", DLTTopic: "a"}}}).Validate(); err == nil || !strings.Contains(err.Error(), "feedback loop") {
		t.Fatalf("a DLT topic another route reads: %v", err)
	}
}
