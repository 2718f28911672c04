package test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// BenchmarkClusterThroughput: a burst of interchanges from 40 partners
// through 1, 2 and 3 hub processes on a three-node R3 cluster (all on
// this machine: it shows the cost of coordination, not scaling). Run:
//
//	go test ./test -run '^$' -bench ClusterThroughput -benchtime 1x
func BenchmarkClusterThroughput(b *testing.B) {
	nodes := startNATSCluster(b, 3)
	_, j := jetstreamtest.Connect(b, clusterURL(nodes))
	round := 0
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			var hubs []*hubProc
			for range n {
				// The default lease (membership) TTL: the tests' 2 s is
				// for fast fail-over, not for a loaded machine.
				hubs = append(hubs, startClusterHubConfig(b, nodes, strings.Replace(clusterHubConfig, "lease_ttl: 2s", "lease_ttl: 10s", 1)))
			}
			// Every instance sees the others before the burst.
			jetstreamtest.Eventually(b, time.Minute, func() bool { return membersSeen(b, hubs) == n*n })
			for b.Loop() {
				round++
				const burst = 2000
				before := streamMsgs(b, j, "PARSED")
				start := time.Now()
				publishBurst(b, j, round, burst)
				jetstreamtest.CheckFor(b, 5*time.Minute, 50*time.Millisecond, func() error {
					if got := streamMsgs(b, j, "PARSED") - before; got < burst {
						return fmt.Errorf("%d of %d parsed", got, burst)
					}
					return nil
				})
				el := time.Since(start)
				b.ReportMetric(burst/el.Seconds(), "interchanges/s")
				var shares []string
				for _, h := range hubs {
					shares = append(shares, strconv.Itoa(int(okMessages(b, h.httpAddr))))
				}
				b.Logf("%d instances: %d interchanges in %v (%.0f/s); processed per instance so far: %s",
					n, burst, el.Round(time.Millisecond), burst/el.Seconds(), strings.Join(shares, ", "))
			}
			for _, h := range hubs {
				h.stop()
			}
		})
	}
}

// BenchmarkClusterFailover: steady load from 40 partners on three hubs;
// kill -9 one hub (its supervisor restarts it), then the INGEST leader's
// nats-server. Reported: the longest pause of any partner in PARSED
// across each kill, i.e. how long a partition stood still.
func BenchmarkClusterFailover(b *testing.B) {
	nodes := startNATSCluster(b, 3)
	hubs := []*hubProc{startClusterHub(b, nodes, ""), startClusterHub(b, nodes, ""), startClusterHub(b, nodes, "")}
	_, j := jetstreamtest.Connect(b, clusterURL(nodes))
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		var published atomic.Int64
		var wg sync.WaitGroup
		steadyLoad(ctx, j, "F", "fo-", &wg, &published)
		waitFor := func(n int64) {
			jetstreamtest.Eventually(b, time.Minute, func() bool { return published.Load() >= n })
		}
		waitFor(1000)
		hubKill := time.Now()
		hubs[1].kill9()
		waitFor(2500)
		leader := streamLeader(b, j, wire.DefaultIngestStream)
		var victim *natsNode
		for _, n := range nodes {
			if n.name == leader {
				victim = n
			}
		}
		leaderKill := time.Now()
		victim.kill9()
		waitFor(4000)
		victim.start()
		waitFor(5000)
		cancel()
		wg.Wait()
		jetstreamtest.CheckFor(b, 2*time.Minute, 500*time.Millisecond, func() error {
			if got := streamMsgs(b, j, "PARSED"); got < int(published.Load()) {
				return fmt.Errorf("%d of %d parsed", got, published.Load())
			}
			return nil
		})
		_, gaps := parsedOrder(b, j)
		in := ingestGaps(b, j)
		hubGap, leaderGap := gaps.around(hubKill), gaps.around(leaderKill)
		b.ReportMetric(hubGap.Seconds(), "s-partition-failover")
		b.ReportMetric(leaderGap.Seconds(), "s-leader-failover")
		b.ReportMetric(in.around(leaderKill).Seconds(), "s-ingest-write-pause")
		b.Logf("longest partner pause in PARSED: %v across kill -9 of a hub, %v across kill -9 of the INGEST leader (%s); "+
			"in INGEST (publishers stalled): %v and %v; %d interchanges",
			hubGap, leaderGap, leader, in.around(hubKill), in.around(leaderKill), published.Load())
	}
}

// ingestGaps records, per partner, when INGEST stored its interchanges.
func ingestGaps(tb testing.TB, j js.JetStream) partnerGaps {
	gaps := partnerGaps{}
	for _, m := range jetstreamtest.StreamMsgs(tb, j, wire.DefaultIngestStream) {
		if _, p, ok := wire.ParseIngestSubject(m.Subject); ok {
			gaps[p] = append(gaps[p], m.Time)
		}
	}
	return gaps
}

func streamMsgs(tb testing.TB, j js.JetStream, stream string) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return 0
	}
	return int(s.CachedInfo().State.Msgs)
}

// publishBurst publishes n interchanges from 40 partners asynchronously
// and waits for every ack.
func publishBurst(tb testing.TB, j js.JetStream, round, n int) {
	tb.Helper()
	for i := range n {
		p := fmt.Sprintf("B%02d", i%40)
		ref := fmt.Sprintf("R%dN%05d", round, i)
		if _, err := j.PublishMsgAsync(&nats.Msg{Subject: wire.IngestSubject(p), Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref))}); err != nil {
			tb.Fatal(err)
		}
	}
	select {
	case <-j.PublishAsyncComplete():
	case <-time.After(time.Minute):
		tb.Fatal("burst not acked in a minute")
	}
}

// membersSeen sums, over the hubs, how many members each saw last
// (edihub_cluster_members_count).
func membersSeen(tb testing.TB, hubs []*hubProc) int {
	n := 0
	for _, h := range hubs {
		n += int(metricValue(tb, h.httpAddr, "edihub_cluster_members_count"))
	}
	return n
}

// okMessages reads edihub_pipeline_messages_total{outcome="ok"} of a hub.
func okMessages(tb testing.TB, addr string) float64 {
	return metricValue(tb, addr, `edihub_pipeline_messages_total{`, `outcome="ok"`)
}

// metricValue sums the samples of a hub's /metrics whose line starts with
// prefix and contains every one of labels.
func metricValue(tb testing.TB, addr, prefix string, labels ...string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		ok := strings.HasPrefix(l, prefix)
		for _, lb := range labels {
			ok = ok && strings.Contains(l, lb)
		}
		if ok {
			if f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); err == nil {
				sum += f
			}
		}
	}
	return sum
}

// steadyLoad publishes from 40 partners (prefix00 to prefix39) one
// interchange every 200 ms each, stored before the next (Nats-Msg-Id
// msgID+ref), until ctx ends; wg counts the publishers, published what
// was stored.
func steadyLoad(ctx context.Context, j js.JetStream, prefix, msgID string, wg *sync.WaitGroup, published *atomic.Int64) {
	for pi := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ctx.Err() == nil; i++ {
				ref := fmt.Sprintf("%s%02d%05d", prefix, pi, i)
				msg := &nats.Msg{Subject: wire.IngestSubject(fmt.Sprintf("%s%02d", prefix, pi)), Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref)),
					Header: nats.Header{wire.HdrMsgID: {msgID + ref}}}
				if _, err := publishUntilStored(ctx, j, msg); err != nil {
					return
				}
				published.Add(1)
				select {
				case <-tick.C:
				case <-ctx.Done():
				}
			}
		}()
	}
}
