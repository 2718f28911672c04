package bridge

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The broker goes away (kfake closed) and comes back on the same port
// with its data (kfake.DataDir): both routes hold what they have, retry
// with backoff, and then move the rest, every record exactly once.
func TestBrokerOutageAndReturn(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	dir := t.TempDir()
	c1, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SeedTopics(3, "partners.in", "edi.parsed"))
	if err != nil {
		t.Fatal(err)
	}
	addr := c1.ListenAddrs()[0]
	brokers := []string{addr}
	_, ps, _ := net.SplitHostPort(addr)
	port, err := strconv.Atoi(ps)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "partners.in"}}
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	cfg.HealthInterval = 100 * time.Millisecond
	reg := prometheus.NewRegistry()
	r, logs := startBridgeLogged(t, h, cfg, reg)
	brokerUp := func(want float64) func() bool {
		return func() bool { v, ok := metricValue(t, reg, "edihub_bridge_broker_up"); return ok && v == want }
	}
	jetstreamtest.Eventually(t, 10*time.Second, brokerUp(1), "edihub_bridge_broker_up 1")

	produceN := func(from, to int) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: "partners.in", Key: []byte(partners[i%3]), Value: []byte(valueOf(i))})
		}
		produce(t, cl, recs...)
	}
	publishN := func(from, to int) {
		for i := from; i < to; i++ {
			publish(t, h, &nats.Msg{Subject: "edi.parsed." + partners[i%3] + ".ORDERS", Data: []byte(valueOf(i))})
		}
	}

	produceN(0, 50)
	publishN(0, 50)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 50 }, "50 records in INGEST")
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		v, _ := metricValue(t, reg, "edihub_bridge_records_total", "direction", "out")
		return v == 50
	}, "50 records produced")

	c1.Close()
	publishN(50, 100)
	// Both routes notice: the inbound one fails to fetch, the outbound one
	// holds the 50 new messages unacked (kgo cannot fail a produce that was
	// on the wire without breaking idempotence, so it waits for the broker).
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		v, _ := metricValue(t, reg, "edihub_bridge_errors_total", "direction", "in", "op", "fetch")
		return v > 0
	}, "the inbound route saw the broker go")
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		v, _ := metricValue(t, reg, "edihub_bridge_lag_records", "route", "out-edi-parsed-all")
		return v == 50
	}, "the outbound route holds 50 messages")
	jetstreamtest.Eventually(t, 10*time.Second, brokerUp(0), "edihub_bridge_broker_up 0 while the broker is gone")
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return logs.count("Kafka brokers unreachable") == 1 }, "the outage logged")

	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.Ports(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c2.Close)
	produceN(50, 100)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") == 100 }, "100 records in INGEST")
	tr := readTopic(t, brokers, "edi.parsed")
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return tr.len() >= 100 }, "100 records in Kafka")
	jetstreamtest.Eventually(t, 10*time.Second, brokerUp(1), "edihub_bridge_broker_up 1 again")
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return logs.count("Kafka brokers back") == 1 }, "the return logged")
	r.stop(t)
	if n := logs.count("Kafka brokers unreachable"); n != 1 {
		t.Fatalf("the outage was logged as starting %d times, want once:\n%s", n, logs)
	}
	for _, l := range []string{`"route":"in-partners-in"`, `"route":"out-edi-parsed-all"`} {
		if !strings.Contains(logs.String(), l) {
			t.Fatalf("no log line of %s", l)
		}
	}
	if v, _ := metricValue(t, reg, "edihub_bridge_errors_total", "route", "out-edi-parsed-all", "op", "produce"); v == 0 {
		t.Fatal("no produce error counted for the outbound route")
	}
	if _, ok := metricValue(t, reg, "edihub_bridge_kafka_lag_records", "route", "in-partners-in", "topic", "partners.in", "partition", "2", "group", "edihub-bridge-in-partners-in"); !ok {
		t.Fatal("no per-partition lag for the inbound group")
	}

	seen := map[string]int{}
	for _, m := range h.streamMsgs(t, "INGEST") {
		seen["in:"+string(m.Data)]++
	}
	for _, rec := range tr.records() {
		seen["out:"+string(rec.Value)]++
	}
	for i := 0; i < 100; i++ {
		for _, dir := range []string{"in:", "out:"} {
			if n := seen[dir+valueOf(i)]; n != 1 {
				t.Fatalf("%s%s seen %d times, want exactly once", dir, valueOf(i), n)
			}
		}
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct records, want 200", len(seen))
	}
}

// An inbound topic that does not exist is said at once (and again every
// outage_log_interval), not discovered from a stuck lag line much later;
// an outbound route whose topic does not exist never says produce "works
// again" when it stops without having produced.
func TestMissingTopicsAreSaid(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "exists")
	cfg := testConfig(brokers)
	cfg.HealthInterval = 100 * time.Millisecond
	cfg.OutageLogInterval = 200 * time.Millisecond
	cfg.Inbound = []InRoute{{Topic: "no.such.topic"}}
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "no.such.out"}}
	r, logs := startBridgeLogged(t, h, cfg, nil)
	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: []byte("x")})
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		return logs.count("inbound topic no.such.topic does not exist") == 1 && logs.count("inbound topic no.such.topic still does not exist") >= 1
	}, "the missing inbound topic logged, and again while it stays missing")
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return logs.count("Kafka produce failed") >= 1 }, "the failing produce logged")
	r.stop(t)
	if n := logs.count("produce works again"); n != 0 {
		t.Fatalf("%d false \"produce works again\" lines:\n%s", n, logs)
	}
}

func TestSASLHintOnlyOnEOF(t *testing.T) {
	msg := "read from broker errored, killing connection after 0 successful responses (is SASL missing?)"
	if got := dropSASLHint(msg, []any{"err", io.EOF}); got != msg {
		t.Fatalf("EOF: hint dropped: %q", got)
	}
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	if got := dropSASLHint(msg, []any{"addr", "k:9092", "err", timeout}); strings.Contains(got, "SASL") {
		t.Fatalf("timeout: %q", got)
	}
}
