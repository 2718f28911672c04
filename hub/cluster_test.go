package hub

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/hub/metrics"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/lease"
	"github.com/edihub/edihub/wire"
)

func pinnedConfig() Config {
	c := fastConfig()
	t := true
	c.Cluster.Pinned = &t
	c.Cluster.PinnedTTL = time.Second
	return c
}

// Two instances share the partitions through pinned consumers; when one
// stops, the other takes its partitions over, and every partner's
// messages are in PARSED once each, in order.
func TestPinnedPartitionsMoveAndKeepOrder(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	cfg := pinnedConfig()
	// Each instance announces itself in a real membership bucket, which
	// says which partitions it works.
	_, j := jetstreamtest.Connect(t, srv.URL)
	member := func(name string) (*lease.Membership, context.CancelFunc) {
		m, err := lease.Open(context.Background(), j, &lease.Options{Bucket: "members", TTL: time.Second, Holder: name})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := m.Join(context.Background(), cfg.Partitions)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = ms.Run(ctx) }()
		t.Cleanup(cancel)
		return ms, cancel
	}
	ma, leaveA := member("a")
	mb, _ := member("b")
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return len(ma.Members()) == 2 && len(mb.Members()) == 2 })
	a := startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, func(o *Options) { o.Owners = ma })
	b := startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, func(o *Options) { o.Owners = mb })
	partners := jetstreamtest.PartnersInDistinctPartitions(4, cfg.Partitions)
	const per = 40
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			for _, p := range partners {
				jetstreamtest.PublishIngest(t, b.js, p, strconv.Itoa(i), nil)
			}
		}
	}
	publish(0, per/2)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, a.js, wire.DefaultParsedStream) >= len(partners)*per/4
	}, "the first half was not processed")
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return testCounter(t, a, "edihub_pipeline_messages_total") > 0 && testCounter(t, b, "edihub_pipeline_messages_total") > 0
	}, "the partitions were not shared: one instance processed nothing")
	a.stop()
	leaveA()
	publish(per/2, per)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, b.js, wire.DefaultParsedStream) == len(partners)*per
	}, "the instance left did not take every partition over")
	got := map[string][]string{}
	for _, m := range jetstreamtest.StreamMsgs(t, b.js, wire.DefaultParsedStream) {
		p := m.Header.Get(wire.HdrPartnerID)
		got[p] = append(got[p], string(m.Data))
	}
	for _, p := range partners {
		want := make([]string, per)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		if !slices.Equal(got[p], want) {
			t.Fatalf("partner %s: PARSED %v, want %v once each in order", p, got[p], want)
		}
	}
	if n := testCounter(t, b, "edihub_cluster_partition_pins_total"); n < float64(cfg.Partitions) {
		t.Fatalf("the remaining instance was pinned %v times, want every partition (%d)", n, cfg.Partitions)
	}
}

// Each time a partition is pinned to an instance, the first time too, the
// ledger is told (with the partners processed there before, if any): it
// reads what other instances recorded meanwhile.
func TestNotePinForgetsPartnersOnANewPin(t *testing.T) {
	var forgotten [][]string
	h := &Hub{cfg: pinnedConfig(), met: metrics.New(prometheus.NewRegistry()), forgetPartners: func(p []string) {
		slices.Sort(p)
		forgotten = append(forgotten, p)
	}}
	h.cfg.setDefaults()
	s := &source{h: h, name: "ingest-p0", partition: 0, partners: map[string]struct{}{}}
	s.notePin("pin-1", "ACME")
	if len(forgotten) != 1 || len(forgotten[0]) != 0 {
		t.Fatalf("the first pin told the ledger %v, want one call without partners", forgotten)
	}
	s.notePin("pin-1", "GLOBEX")
	if len(forgotten) != 1 {
		t.Fatalf("told the ledger %v while the pin stayed", forgotten)
	}
	s.notePin("pin-2", "ACME")
	if len(forgotten) != 2 || fmt.Sprint(forgotten[1]) != "[ACME GLOBEX]" {
		t.Fatalf("on a new pin told %v, want [ACME GLOBEX] second", forgotten)
	}
	s.notePin("pin-3", "")
	if fmt.Sprint(forgotten[2]) != "[ACME]" {
		t.Fatalf("second move told %v, want [ACME]", forgotten[2])
	}
}
