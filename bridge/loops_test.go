package bridge

import (
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

func TestSubjectsOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"edi.poison.>", "edi.poison.bridge", true},
		{"edi.>", "edi.poison.bridge", true},
		{">", "edi.poison.bridge", true},
		{"edi.*.bridge", "edi.poison.bridge", true},
		{"edi.*.*", "edi.ingest.>", true},
		{"edi.parsed.>", "edi.poison.bridge", false},
		{"edi.parse.dlq.>", "edi.ingest.>", false},
		{"edi.poison", "edi.poison.>", false},
		{"edi.*.dlq.>", "edi.ingest.#num.*", false},
		{"edi.ingest.3.*", "edi.ingest.#num.*", true},
		{"edi.ingest.>", "edi.ingest.#num.*", true},
		{"edi.poison.bridge.x", "edi.poison.bridge", false},
	} {
		if got := subjectsOverlap(c.a, c.b); got != c.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := subjectsOverlap(c.b, c.a); got != c.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

// Routes that would read back what the bridge writes are refused before
// anything runs, each with the route and the subject it covers.
func TestConfigRefusesFeedbackLoops(t *testing.T) {
	for _, c := range []struct {
		in   []InRoute
		out  OutRoute
		want string
	}{
		{out: OutRoute{Filter: "edi.poison.>", Topic: "p"}, want: "the poison subject edi.poison.bridge"},
		{out: OutRoute{Filter: ">", Topic: "all"}, want: "the poison subject"},
		{out: OutRoute{Filter: "edi.*.bridge", Topic: "b"}, want: "the poison subject"},
		{in: []InRoute{{Topic: "partners.in"}}, out: OutRoute{Filter: "edi.ingest.>", Topic: "x"}, want: "inbound in-partners-in's subject"},
		{in: []InRoute{{Topic: "partners.in"}}, out: OutRoute{Filter: "edi.ingest.3.*", Topic: "x"}, want: "inbound in-partners-in's subject"},
		{in: []InRoute{{Topic: "edi.parsed"}}, out: OutRoute{Filter: "edi.parsed.>", Topic: "edi.parsed"}, want: "which inbound in-edi-parsed reads"},
		{in: []InRoute{{Topic: "edi.parsed.ACME.INVOIC"}}, out: OutRoute{Filter: "edi.parsed.>"}, want: "which inbound"},
	} {
		cfg := &Config{Brokers: []string{"k:9092"}, Inbound: c.in, Outbound: []OutRoute{c.out}}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "feedback loop") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("filter %s topic %q: %v, want a feedback-loop error naming %q", c.out.Filter, c.out.Topic, err, c.want)
		}
	}
	ok := &Config{Brokers: []string{"k:9092"}, Inbound: []InRoute{{Topic: "partners.in"}},
		Outbound: []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}, {Filter: "edi.parse.dlq.>"}}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a loop-free config refused: %v", err)
	}
}

// A record Kafka refuses as too large is quarantined once and never read
// back, even by two bridges whose routes point at each other's poison
// subjects (which no single config check can see): without the
// x-bridge-copy mark they would quarantine the same payload forever.
func TestRefusedRecordCannotLoop(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 4<<20)
	_, brokers := startKafka(t, "big.out", "poison.a.out", "poison.b.out")
	cfgA := testConfig(brokers)
	cfgA.MaxRecordBytes = 64 << 10
	cfgA.PoisonSubject = "edi.poison.a"
	cfgA.Outbound = []OutRoute{
		{Name: "a-parsed", Filter: "edi.parsed.>", Topic: "big.out"},
		{Name: "a-poison", Filter: "edi.poison.b", Topic: "poison.b.out"},
	}
	cfgB := testConfig(brokers)
	cfgB.MaxRecordBytes = 64 << 10
	cfgB.PoisonSubject = "edi.poison.b"
	cfgB.Outbound = []OutRoute{{Name: "b-poison", Filter: "edi.poison.a", Topic: "poison.a.out"}}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := startBridge(t, h, cfgA, regA)
	b := startBridge(t, h, cfgB, regB)

	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: make([]byte, 200<<10)})
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		q, _ := metricValue(t, regA, "edihub_bridge_quarantined_total", "route", "a-parsed")
		s, _ := metricValue(t, regB, "edihub_bridge_skipped_total", "route", "b-poison")
		return q == 1 && s == 1
	}, "A quarantined the record once and B skipped A's copy")
	a.stop(t)
	b.stop(t)
	if n := h.count(t, "POISON"); n != 1 {
		t.Fatalf("POISON holds %d messages, want the one quarantine copy", n)
	}
	if q, _ := metricValue(t, regB, "edihub_bridge_quarantined_total"); q != 0 {
		t.Fatalf("B quarantined %v copies of A's copy", q)
	}
	pm := h.streamMsgs(t, "POISON")[0]
	if pm.Header.Get("x-bridge-copy") != "a-parsed" {
		t.Fatalf("poison copy not marked: %v", pm.Header)
	}
}
