package hub

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
)

func TestLeakProbeGrowth(t *testing.T) {
	cfg := LeakProbeConfig{}
	cfg.setDefaults()
	p := newLeakProbe(cfg)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	subj := "edi.parse.dlq.schema"
	fired := 0
	step := func(at time.Duration, n uint64) {
		fired += len(p.observe(leakSample{at: t0.Add(at), depth: map[string]uint64{subj: n}}))
	}
	// 5 dead letters in a minute: quiet
	step(0, 0)
	step(30*time.Second, 3)
	step(60*time.Second, 5)
	if fired != 0 {
		t.Fatalf("fired %d times for 5 messages", fired)
	}
	// a burst of 100 within the window: exactly one alert, however long
	// the burst stays in the window
	for i := 1; i <= 10; i++ {
		step(60*time.Second+time.Duration(i)*15*time.Second, 5+uint64(10*i))
	}
	if fired != 1 {
		t.Fatalf("fired %d times for a burst of 100, want 1", fired)
	}
	// the window slides past the burst: cleared; new growth fires again
	step(20*time.Minute, 105)
	step(21*time.Minute, 130)
	if fired != 2 {
		t.Fatalf("after the burst cleared, a new burst fired %d, want total 2", fired)
	}
}

func TestLeakProbeRatio(t *testing.T) {
	cfg := LeakProbeConfig{RatioMinProcessed: 100, RatioThreshold: 0.01}
	cfg.setDefaults()
	p := newLeakProbe(cfg)
	t0 := time.Now()
	if a := p.observe(leakSample{at: t0}); len(a) != 0 {
		t.Fatal(a)
	}
	if a := p.observe(leakSample{at: t0.Add(time.Minute), dead: 1, processed: 500}); len(a) != 0 {
		t.Fatalf("0.2%% fired: %v", a)
	}
	a := p.observe(leakSample{at: t0.Add(2 * time.Minute), dead: 20, processed: 1000})
	if len(a) != 1 || a[0].Name != "DeadLetterRatioHigh" {
		t.Fatalf("2%% did not fire: %v", a)
	}
}

// End to end: a burst of 100 permanent failures gives one
// DeadLetterQueueGrowing alert on the NATS sink.
func TestLeakProbeEndToEnd(t *testing.T) {
	cfg := fastConfig()
	cfg.LeakProbe.GrowthThreshold = 10
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		return PermanentError(wire.CauseSchema, errors.New("broken"))
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	alerts := make(chan *nats.Msg, 100)
	sub, _ := env.nc.ChanSubscribe("edi.alerts.DeadLetterQueueGrowing", alerts)
	defer sub.Unsubscribe()
	for i := 0; i < 100; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", "x", nil)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 100 })
	time.Sleep(5 * cfg.LeakProbe.Interval)
	plain := 0
	for len(alerts) > 0 {
		m := <-alerts
		if !strings.Contains(string(m.Data), `"suppressed"`) {
			plain++
		}
	}
	if plain != 1 {
		t.Fatalf("%d growth alerts for one burst, want 1", plain)
	}
	if got := testCounter(t, env, "edihub_dlq_depth_messages"); got != 100 {
		t.Fatalf("edihub_dlq_depth_messages = %v, want 100", got)
	}
}
