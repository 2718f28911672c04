package bridge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A topic deleted and re-created while the bridge runs starts its offsets
// at 0 again, well within JetStream's duplicate window. Every record of
// the new topic is stored: the dedupe id names the topic id, so offset 0
// of the new topic is not a duplicate of offset 0 of the old one.
func TestRecreatedTopicLosesNothing(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "re.in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "re.in"}}
	reg := prometheus.NewRegistry()
	r := startBridge(t, h, cfg, reg)

	cl := kafkaClient(t, brokers)
	batch := func(tag string) []*kgo.Record {
		var recs []*kgo.Record
		for i := range 5 {
			recs = append(recs, &kgo.Record{Topic: "re.in", Key: []byte("ACME"), Value: fmt.Appendf(nil, "%s-%d", tag, i)})
		}
		return recs
	}
	produce(t, cl, batch("old")...)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 5 }, "5 records of the first topic stored")

	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.DeleteTopic(ctx, "re.in"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "re.in"); err != nil {
		t.Fatal(err)
	}
	// A new client: the first one holds the old topic id.
	produce(t, kafkaClient(t, brokers), batch("new")...)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return h.count(t, "INGEST") == 10 }, "the 5 records of the re-created topic stored too")
	r.stop(t)

	ids := map[string]string{}
	for _, m := range h.streamMsgs(t, "INGEST") {
		ids[string(m.Data)] = m.Header.Get("Nats-Msg-Id")
	}
	for i := range 5 {
		o, n := ids[fmt.Sprintf("old-%d", i)], ids[fmt.Sprintf("new-%d", i)]
		if o == "" || n == "" || o == n || !strings.HasSuffix(o, fmt.Sprintf(":re.in/0/%d", i)) || !strings.HasSuffix(n, fmt.Sprintf(":re.in/0/%d", i)) {
			t.Fatalf("offset %d: ids %q and %q, want two different ids ending in re.in/0/%d", i, o, n, i)
		}
	}
	if d, _ := metricValue(t, reg, "edihub_bridge_duplicates_total"); d != 0 {
		t.Fatalf("%v duplicates reported", d)
	}
}
