package bridge

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// A second consumer group reads the whole topic again, as a bridge killed
// before its commit does: every record is a duplicate, none is stored
// twice, all are counted, and the log says so once per partition instead
// of once per record.
func TestRereadRecordsAreLoggedOncePerPartition(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "rr.in")
	cl := kafkaClient(t, brokers)
	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Topic: "rr.in", Key: []byte("ACME"), Value: fmt.Appendf(nil, "r-%d", i)})
	}
	produce(t, cl, recs...)
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "rr.in", Group: "first"}}
	r := startBridge(t, h, cfg, prometheus.NewRegistry())
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") == 30 }, "30 records stored")
	r.stop(t)

	cfg = testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "rr.in", Group: "second"}}
	reg := prometheus.NewRegistry()
	r, lb := startBridgeLogged(t, h, cfg, reg)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		d, _ := metricValue(t, reg, "edihub_bridge_duplicates_total")
		return d == 30
	}, "30 re-read records counted")
	r.stop(t)
	if n := h.count(t, "INGEST"); n != 30 {
		t.Fatalf("INGEST holds %d messages after the re-read, want 30", n)
	}
	if n := lb.count("re-reading records JetStream already has"); n != 1 {
		t.Fatalf("%d re-read log lines for one partition, want 1:\n%s", n, lb)
	}
}
