package bridge

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// crashBridge runs a bridge on its own NATS connection. crash cuts it off
// both sides at once, as a kill -9 would: Kafka drops its connections at
// the next produce (nothing more of what it holds lands), its NATS
// connection closes (nothing is acked or nak'ed), then Run may return.
type crashBridge struct {
	nc *nats.Conn
	r  *running
}

// produceSwitch makes a kfake cluster refuse every produce while on; it
// turns itself on after the first after produce requests.
type produceSwitch struct {
	on      atomic.Bool
	refused atomic.Int32
}

func newProduceSwitch(c *kfake.Cluster, after int) *produceSwitch {
	ps := &produceSwitch{}
	var n atomic.Int32
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if int(n.Add(1)) == after {
			ps.on.Store(true)
		}
		if ps.on.Load() {
			ps.refused.Add(1)
			return nil, errors.New("bridge crashed"), true
		}
		return nil, nil, false
	})
	return ps
}

func startCrashable(t *testing.T, h *hubNATS, cfg *Config, reg prometheus.Registerer) *crashBridge {
	t.Helper()
	nc, j, err := jetstream.Connect(h.url, "bridge-crashable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b, err := New(cfg, nc, j, testLogger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() { r.err = b.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return &crashBridge{nc: nc, r: r}
}

func (c *crashBridge) crash(t *testing.T, ps *produceSwitch) {
	// Die while holding a batch Kafka has not taken.
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return ps.refused.Load() > 0 }, "the bridge holds a batch it could not produce")
	defer ps.on.Store(false)
	c.nc.Close()
	c.r.cancel()
	select {
	case <-c.r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("crashed bridge did not return")
	}
}

// A bridge that dies holding messages of 20 partners leaves them unacked.
// The next instance delivers those first, so on Kafka no partner's record
// appears before an older one of the same partner (a record may appear
// twice: at least once).
func TestOutboundOrderSurvivesCrash(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	kc, brokers := startKafka(t, "edi.parsed")
	ps := newProduceSwitch(kc, 10)
	tr := readTopic(t, brokers, "edi.parsed")
	const partnersN, total = 20, 2000
	for i := range total {
		publish(t, h, &nats.Msg{Subject: fmt.Sprintf("edi.parsed.P%02d.INVOIC", i%partnersN), Data: []byte(valueOf(i))})
	}
	cfg := testConfig(brokers)
	cfg.BatchSize = 32
	// Without the reset the dead instance's messages would come back after
	// ack_wait, behind the newer ones the next instance produced by then.
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed", AckWait: 10 * time.Second}}
	reg := prometheus.NewRegistry()

	a := startCrashable(t, h, cfg, reg)
	a.crash(t, ps)
	crashedAt := tr.len()
	b := startCrashable(t, h, cfg, reg)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return distinct(tr) >= total }, "all %d records in Kafka", total)
	b.r.cancel()
	<-b.r.done
	if crashedAt >= total {
		t.Fatalf("the first bridge finished everything (%d) before the crash", crashedAt)
	}

	// Per partner, in Kafka order: each record seen for the first time
	// must be the partner's next one; repeats of earlier ones are allowed.
	next := map[string]int{}
	dups := 0
	for _, r := range tr.records() {
		v := string(r.Value)
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "rec-"))
		p, k := string(r.Key), n/partnersN
		if p != fmt.Sprintf("P%02d", n%partnersN) {
			t.Fatalf("%s keyed %q", v, p)
		}
		switch {
		case k == next[p]:
			next[p]++
		case k < next[p]:
			dups++
		default:
			t.Fatalf("partner %s: %s on Kafka before its record #%d: order lost", p, v, next[p])
		}
	}
	t.Logf("crash after %d records; %d repeats in Kafka", crashedAt, dups)
	if v, _ := metricValue(t, reg, "edihub_bridge_consumer_resets_total"); v != 1 {
		t.Fatalf("%v consumer resets, want the one at the second start", v)
	}

}

func distinct(tr *topicReader) int {
	seen := map[string]bool{}
	for _, r := range tr.records() {
		seen[string(r.Value)] = true
	}
	return len(seen)
}

// A delivery that never reached the route (taken here by a second fetch
// on the same durable, as an expired pull would lose it) shows as a gap in
// the consumer sequence; the route resets the consumer, and the next fetch
// starts again at the lost message, with the sequence the guard expects
// (no reset loop).
func TestOrderGuardResetsOnLostDelivery(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	for i := range 3 {
		publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: []byte(valueOf(i))})
	}
	cfg := testConfig([]string{"127.0.0.1:1"})
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	b, err := New(cfg, h.nc, h.js, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := b.out[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, stream := o.setup(ctx)
	if cons == nil {
		t.Fatal("no consumer")
	}
	fetch := func(n int) []js.Msg {
		t.Helper()
		batch, err := cons.Fetch(n, js.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var out []js.Msg
		for m := range batch.Messages() {
			out = append(out, m)
		}
		return out
	}
	lost := fetch(1) // rec-00000 delivered, never seen by the route
	if len(lost) != 1 {
		t.Fatalf("fetched %d", len(lost))
	}
	got := fetch(2)
	if o.inOrder(got) {
		t.Fatal("the gap was not noticed")
	}
	if err := o.reset(ctx, stream); err != nil {
		t.Fatal(err)
	}
	again := fetch(3)
	if len(again) != 3 || string(again[0].Data()) != valueOf(0) {
		t.Fatalf("after the reset: %d messages, first %q", len(again), again[0].Data())
	}
	if !o.inOrder(again) {
		t.Fatal("the guard rejects the deliveries after its own reset: it would reset forever")
	}
}
