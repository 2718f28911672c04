package bridge

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// A broker that comes back empty on the same address (a new topic id, the
// group and its offsets gone): the bridge re-joins, re-adopts the new
// topic and stores its records with new dedupe ids. (kfake's reset takes
// the re-adopt path; the silent stop issue 25 saw on a real broker was not
// reproduced with kfake.)
func TestBrokerResetIsReadopted(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "rs.in"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	brokers := []string{"127.0.0.1:" + strconv.Itoa(port)}
	batch := func(tag string, n int) []*kgo.Record {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "rs.in", Key: []byte("ACME"), Value: fmt.Appendf(nil, "%s-%d", tag, i)})
		}
		return recs
	}
	produce(t, kafkaClient(t, brokers), batch("old", 8)...)
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "rs.in"}}
	r := startBridge(t, h, cfg, prometheus.NewRegistry())
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return h.count(t, "INGEST") == 8 }, "8 records of the first broker stored")
	c.Close()
	c = start()
	t.Cleanup(c.Close)
	produce(t, kafkaClient(t, brokers), batch("new", 3)...)
	jetstreamtest.Eventually(t, 40*time.Second, func() bool { return h.count(t, "INGEST") == 11 }, "the 3 records of the reset broker stored too")
	r.stop(t)
}
