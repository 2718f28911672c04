package bridge

import (
	"context"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A stop (SIGTERM) while the broker answers nothing at all (every request
// swallowed: the worst a broker or a network can do) still returns within
// shutdown_timeout (plus a fixed half-second grace), with both routes
// holding work: an outbound batch in flight and an inbound group to leave.
func TestStopWithinShutdownTimeout(t *testing.T) {
	t.Parallel()
	h := startNATS(t, 0)
	kc, brokers := startKafka(t, "partners.in", "edi.parsed")
	cfg := testConfig(brokers)
	cfg.ShutdownTimeout = 2 * time.Second
	cfg.Inbound = []InRoute{{Topic: "partners.in"}}
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	reg := prometheus.NewRegistry()
	b, err := New(cfg, h.nc, h.js, testLogger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(cancel)

	produce(t, kafkaClient(t, brokers), &kgo.Record{Topic: "partners.in", Key: []byte("ACME"), Value: []byte("1")})
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 1 }, "the inbound route consumes")
	// From now on the broker swallows every request.
	kc.ControlKey(-1, func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		return nil, nil, true
	})
	publish(t, h, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: []byte("held")})
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		v, _ := metricValue(t, reg, "edihub_bridge_lag_records", "route", "out-edi-parsed-all")
		return v == 1
	}, "the outbound route holds the message")

	start := time.Now()
	cancel()
	limit := cfg.ShutdownTimeout + shutdownGrace + time.Second // + scheduling slack on a shared machine
	select {
	case err := <-done:
		t.Logf("stopped in %v (shutdown_timeout %v)", time.Since(start).Round(time.Millisecond), cfg.ShutdownTimeout)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("Run did not return within %v of the stop", limit)
	}
	if n := h.count(t, "PARSED"); n != 1 {
		t.Fatalf("PARSED %d", n)
	}
}

// With group_instance_id a restarted bridge takes its partitions back at
// once. The first one dies without leaving the group (its LeaveGroup is
// lost, as after a kill -9); the coordinator hands the same instance its
// assignment without waiting out the 20s session of the dead member.
func TestStaticMembershipResumesAtOnce(t *testing.T) {
	t.Parallel()
	restartResumesAtOnce(t, func(cfg *Config) { cfg.GroupInstanceID = "bridge-host-1" })
}
