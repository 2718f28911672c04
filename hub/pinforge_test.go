package hub

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A partner that publishes a Nats-Pin-Id of its own (a new one on each
// message) on a pinned partition: the server's pin comes after it on
// delivery, and the hub reads that one (wire.PinID), so the partition sees
// one pin, not a move at every message (each a barrier and a new read of
// the ledger and the parks). Its messages and a neighbour's are parsed,
// each once, in order.
func TestForgedPinIDIsNotAPinMove(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	cfg := pinnedConfig()
	cfg.Partitions = 1
	env := startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	const n = 30
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "EVIL", fmt.Sprintf("EVIL%05d", i), nats.Header{wire.HdrPinID: []string{fmt.Sprint("forged-", i)}})
		jetstreamtest.PublishIngest(t, env.js, "GOOD", fmt.Sprintf("GOOD%05d", i), nil)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if err := checkPartnerParsed(env, t, "EVIL", n); err != nil {
			return err
		}
		return checkPartnerParsed(env, t, "GOOD", n)
	})
	if pins := testCounter(t, env, "edihub_cluster_partition_pins_total"); pins > 2 {
		t.Errorf("%v pins of one partition for %d messages with forged pin ids: the hub took a partner's header for the server's", pins, 2*n)
	}
}

func TestPinIDIsTheServersLast(t *testing.T) {
	for _, c := range []struct {
		vals []string
		want string
	}{{nil, ""}, {[]string{"srv"}, "srv"}, {[]string{"forged", "srv"}, "srv"}} {
		h := nats.Header{}
		if c.vals != nil {
			h[wire.HdrPinID] = c.vals
		}
		if got := wire.PinID(h); got != c.want {
			t.Errorf("PinID(%v) = %q, want %q", c.vals, got, c.want)
		}
	}
}
