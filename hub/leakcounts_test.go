package hub

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// The leak probe's ratio counts every instance's traffic: what one hub
// processed and dead-lettered is what another (here started after it, as
// when the probe's lease moves) counts, though its own counters are zero.
func TestClusterCountsSeeOtherInstancesTraffic(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	bad := func(m *Message) error {
		if string(m.Data) == "BAD" {
			return PermanentError(wire.CauseSchema, errors.New("not an interchange"))
		}
		return nil
	}
	b := startHub(t, srv.URL, "", fastConfig(), []Stage{echoStage("parse", bad)}, nil)
	for i := range 20 {
		data := "UNB+ok'"
		if i%10 == 3 {
			data = "BAD"
		}
		jetstreamtest.PublishIngest(t, b.js, fmt.Sprintf("P%02d", i%7), data, nil)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, b.js, "PARSED") == 18 && jetstreamtest.CountMsgs(t, b.js, "DLQ") == 2
	}, "18 parsed, 2 dead letters")
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return b.hub.Processed() == 20 })
	b.stop()

	a := startHub(t, srv.URL, "", fastConfig(), []Stage{echoStage("parse", bad)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dead, processed, err := a.hub.clusterCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dead != 2 || processed != 20 || a.hub.Processed() != 0 {
		t.Fatalf("cluster counts: %d dead of %d processed (this instance processed %d), want 2 of 20 (and 0)", dead, processed, a.hub.Processed())
	}
	// One waiting in a partition is not processed yet.
	a.stop()
	_, j := jetstreamtest.Connect(t, srv.URL)
	jetstreamtest.PublishIngest(t, j, "P01", "UNB+ok'", nil)
	var tried atomic.Int32
	c := startHub(t, srv.URL, "", fastConfig(), []Stage{echoStage("parse", func(m *Message) error {
		tried.Add(1)
		return TransientError(wire.CauseUnknown, errors.New("downstream away"))
	})}, nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return tried.Load() >= 2 }, "the message is tried and waits")
	if _, p, err := c.hub.clusterCounts(ctx); err != nil || p != 20 {
		t.Fatalf("with one message waiting in its partition: processed %d (%v), want 20", p, err)
	}
}
