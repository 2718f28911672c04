package hub

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A handler that ignores its deadline: each attempt is recorded as a
// timeout, the partition goes on with a replacement loop, the message is
// quarantined at the threshold, and when too many abandoned handlers pile
// up the hub asks its supervisor for a restart.
func TestHangingHandlerTimesOutAndIsBounded(t *testing.T) {
	cfg := fastConfig()
	cfg.Attempts.Threshold = 2
	cfg.Attempts.Deadline = 300 * time.Millisecond
	cfg.Attempts.AckWait = 200 * time.Millisecond // heartbeats must keep it from redelivering
	cfg.Attempts.MaxAbandoned = 1
	var fatal atomic.Value
	var hangs atomic.Int32
	stage := echoStage("parse", func(m *Message) error {
		if string(m.Data) == "hang" {
			hangs.Add(1)
			time.Sleep(1500 * time.Millisecond) // ignores ctx, like a stuck parser
		}
		return nil
	})
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, func(o *Options) {
		o.OnFatal = func(reason string) { fatal.Store(reason) }
	})
	jetstreamtest.PublishIngest(t, env.js, "ACME", "hang", nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "behind", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "POISON") == 1 && jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1
	})
	p := jetstreamtest.StreamMsgs(t, env.js, "POISON")[0]
	if c := p.Header.Get(wire.HdrPoisonCause); c != "timeout" {
		t.Fatalf("x-poison-cause %q, want timeout (msg %q)", c, p.Header.Get(wire.HdrErrorMsg))
	}
	if n := hangs.Load(); n != 2 {
		t.Fatalf("the hanging handler ran %d times, want 2 (no redelivery while it ran: heartbeats)", n)
	}
	r, _ := fatal.Load().(string)
	if !strings.Contains(r, "ignored their deadline") {
		t.Fatalf("two abandoned handlers with a limit of 1 did not ask for a restart: %q", r)
	}
	// once the stuck handlers return, the gauge goes back to zero
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return env.hub.abandoned.Load() == 0 })
}
