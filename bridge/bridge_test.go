package bridge

import (
	"net"
	"strconv"
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
	reg := prometheus.NewRegistry()
	r := startBridge(t, h, cfg, reg)

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

	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.Ports(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c2.Close)
	produceN(50, 100)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") == 100 }, "100 records in INGEST")
	tr := readTopic(t, brokers, "edi.parsed")
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return tr.len() >= 100 }, "100 records in Kafka")
	r.stop(t)

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
