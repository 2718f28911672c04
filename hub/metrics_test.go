package hub

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/hub/metrics"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// depthSeries reads edihub_dlq_depth_messages as "stage/cause" → value.
func depthSeries(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "edihub_dlq_depth_messages" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out[l["stage"]+"/"+l["cause"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestDLQDepthLabelsAreBoundedAndEmptiedSeriesGo(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	depth := map[string]uint64{
		"edi.parse.dlq.schema":          2,
		"edi.parse.dlq.\x1b[2J\x1b]0;x": 3, // a publisher's escape sequence
		"edi.parse.dlq.\u009b31m":       1,
		"edi.evil\u202e.dlq.schema":     4, // not a configured stage
	}
	for i := 0; i < 1000; i++ {
		depth[fmt.Sprintf("edi.parse.dlq.c%d", i)] = 1
	}
	m.SetDLQDepth([]string{"parse"}, depth)
	got := depthSeries(t, reg)
	want := map[string]float64{"parse/schema": 2, "parse/other": 1004, "other/schema": 4}
	if len(got) > len(want) {
		t.Fatalf("%d series from %d subjects, want %v", len(got), len(depth), want)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	m.SetDLQDepth([]string{"parse"}, map[string]uint64{"edi.parse.dlq.schema": 1, "edi.parse.dlq.business": 0})
	if got := depthSeries(t, reg); fmt.Sprint(got) != fmt.Sprint(map[string]float64{"parse/schema": 1}) {
		t.Fatalf("emptied subjects kept their series: %v", got)
	}
}

// End to end: a dead letter published under a cause token with an ANSI
// sequence shows on /metrics as cause "other", never as the sequence, and
// its series goes once the subject is purged.
func TestDLQDepthGaugeEndToEnd(t *testing.T) {
	cfg := fastConfig()
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error { return nil }}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	hostile := wire.DLQSubject("parse", "\x1b[2J\x1b]0;pwned\x07")
	if _, err := env.js.PublishMsg(context.Background(), &nats.Msg{Subject: hostile, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return depthSeries(t, env.reg)["parse/other"] == 1 })
	for k := range depthSeries(t, env.reg) {
		if strings.ContainsAny(k, "\x1b\x07") {
			t.Fatalf("label %q reaches /metrics", k)
		}
	}
	s, err := env.js.Stream(context.Background(), "DLQ")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(context.Background()); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return len(depthSeries(t, env.reg)) == 0 })
}
