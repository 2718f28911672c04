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
