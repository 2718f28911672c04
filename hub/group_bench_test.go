package hub

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// One partner's backlog on a three-node cluster (every stream R3, where
// hub.group_settle auto groups): one message of a partner at a time,
// sixteen deep without groups, sixteen deep with them. Each iteration
// publishes n interchanges while no hub runs, then times a fresh hub from
// its stage's first call to the n-th settled message (CPU: the whole
// process, servers included, from the hub's start). The stage emits
// one output of 3.3 KB (a parsed 1 KB INVOIC's size); no ledger.
//
//	go test -run '^$' -bench GroupSettleReplicated -benchtime 2x ./hub/
func BenchmarkGroupSettleReplicated(b *testing.B) {
	url := jetstreamtest.StartCluster(b, 3)
	_, j := jetstreamtest.Connect(b, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ejs.WaitReady(ctx, j); err != nil {
		b.Fatal(err)
	}
	provision := Config{Partitions: 1}
	provision.Cluster.Replicas = 3
	_, _, stop := benchHub(b, url, provision, Stage{Name: "parse", Handle: func(context.Context, *Message) error { return nil }})
	stop() // the streams, before the first fill
	const n = 2000
	body := bytes.Repeat([]byte("x"), 1100)
	sent := 0
	for _, c := range []struct {
		name  string
		depth int
		group string
	}{
		{"depth1", 1, GroupSettleAuto},
		{"depth16-nogroups", 16, GroupSettleOff},
		{"depth16-groups", 16, GroupSettleAuto},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total, cpu time.Duration
			var grouped float64
			for b.Loop() {
				b.StopTimer()
				cfg := Config{Partitions: 1, PartitionConcurrency: 2 * c.depth, PartnerPipeline: c.depth, GroupSettle: c.group}
				cfg.Cluster.Replicas = 3
				var first atomic.Int64
				stage := Stage{Name: "parse", Handle: func(_ context.Context, m *Message) error {
					first.CompareAndSwap(0, time.Now().UnixNano())
					out := bytes.Repeat(m.Data, 3)
					m.Emit(wire.ParsedSubject(m.Partner, "INVOIC"), nats.Header{wire.HdrPartnerID: []string{m.Partner}}, out)
					return nil
				}}
				for i := 0; i < n; i++ {
					sent++
					if _, err := ejs.Publish(ctx, j, &nats.Msg{Subject: wire.IngestSubject("ACME"), Data: append([]byte(fmt.Sprint(sent, " ")), body...)},
						fmt.Sprint("bench-", sent)); err != nil {
						b.Fatal(err)
					}
				}
				h, reg, stop := benchHub(b, url, cfg, stage)
				b.StartTimer()
				cpu0 := processCPU()
				jetstreamtest.Eventually(b, 5*time.Minute, func() bool { return h.Processed() >= n })
				total += time.Since(time.Unix(0, first.Load()))
				cpu += processCPU() - cpu0
				grouped += jetstreamtest.MetricSum(b, reg, "edihub_partner_pipeline_grouped_messages_total")
				stop()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "msg/s")
			b.ReportMetric(grouped/float64(n*b.N), "grouped/msg")
			b.ReportMetric(float64(cpu.Microseconds())/float64(n*b.N), "cpu-µs/msg")
		})
	}
}

// processCPU is the process's user and system time so far (the three
// servers included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchHub runs a hub with cfg on url until stop.
func benchHub(b *testing.B, url string, cfg Config, stage Stage) (*Hub, *prometheus.Registry, func()) {
	nc, _, err := ejs.Connect(url, "hub-bench")
	if err != nil {
		b.Fatal(err)
	}
	store, err := counter.Open(filepath.Join(b.TempDir(), "counter.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	h, err := New(Options{Config: cfg, Conn: nc, Store: store, Stages: []Stage{stage}, Logger: zerolog.Nop(), Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	stop := jetstreamtest.RunUntilStopped(b, "hub", 30*time.Second, h.Run, func() {
		nc.Close()
		store.Close()
	})
	jetstreamtest.Eventually(b, 60*time.Second, h.Ready)
	return h, reg, stop
}
