package test

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
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

// clusterLoad is what the cluster test publishes: modest (the machine is
// shared) but real.
const (
	clusterPartners = 40
	clusterPerPeer  = 60 // 2400 interchanges
)

// Three nats-server processes (R3) and three hub processes under
// supervisors. Under a steady load from 40 partners one hub is killed
// with SIGKILL, then the nats-server that leads INGEST; both come back.
// Every interchange ends exactly once in PARSED, DLQ or POISON, each
// partner's in order. Then `edihub drill --kind exit` against the cluster:
// the killer is quarantined after exactly the threshold although its
// attempts ran on different instances, and nothing else is. Then DLQ
// growth: exactly one leak-probe alert with three instances.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test: three nats-servers and three hubs")
	}
	nodes := startNATSCluster(t, 3)
	hubs := []*hubProc{startClusterHub(t, nodes, ""), startClusterHub(t, nodes, ""), startClusterHub(t, nodes, "")}
	nc, j := jetstreamtest.Connect(t, clusterURL(nodes))
	alerts := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe(wire.AlertSubjectPrefix+".>", alerts); err != nil {
		t.Fatal(err)
	}

	// The load: one goroutine per partner, each publishing its
	// interchanges in order, paced.
	partners := make([]string, clusterPartners)
	for i := range partners {
		partners[i] = fmt.Sprintf("P%02d", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var published atomic.Int64
	var wg sync.WaitGroup
	seqs := make([][]uint64, len(partners))
	errs := make(chan error, len(partners))
	for pi, p := range partners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(300 * time.Millisecond) // ~130 interchanges/s in all
			defer tick.Stop()
			for i := range clusterPerPeer {
				ref := fmt.Sprintf("%s%04d", p, i)
				msg := &nats.Msg{Subject: wire.IngestSubject(p), Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref)),
					Header: nats.Header{wire.HdrMsgID: {"load-" + ref}}}
				seq, err := publishUntilStored(ctx, j, msg)
				if err != nil {
					errs <- err
					return
				}
				seqs[pi] = append(seqs[pi], seq)
				published.Add(1)
				select {
				case <-tick.C:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	total := int64(clusterPartners * clusterPerPeer)
	waitPublished := func(n int64) {
		jetstreamtest.Eventually(t, 2*time.Minute, func() bool { return published.Load() >= n }, "publishing stalled")
	}

	waitPublished(total / 4)
	killedAt := time.Now()
	hubs[0].kill9()
	t.Logf("hub 1 killed with SIGKILL at %d published; its supervisor restarts it", published.Load())

	waitPublished(total / 2)
	leader := streamLeader(t, j, wire.DefaultIngestStream)
	var victim *natsNode
	for _, n := range nodes {
		if n.name == leader {
			victim = n
		}
	}
	if victim == nil {
		t.Fatalf("INGEST leader %q is none of the nodes", leader)
	}
	leaderKilledAt := time.Now()
	victim.kill9()
	t.Logf("nats-server %s (INGEST leader) killed with SIGKILL at %d published", leader, published.Load())
	waitPublished(total * 5 / 8)
	victim.start()
	t.Logf("nats-server %s restarted", leader)

	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all []uint64
	for _, s := range seqs {
		all = append(all, s...)
	}
	// Every interchange lands exactly once in PARSED, DLQ or POISON.
	var parsed, dlq, poison map[uint64]int
	jetstreamtest.CheckFor(t, 2*time.Minute, time.Second, func() error {
		parsed, dlq, poison = originSeqs(t, j, "PARSED"), originSeqs(t, j, "DLQ"), originSeqs(t, j, "POISON")
		missing := 0
		for _, s := range all {
			if parsed[s]+dlq[s]+poison[s] == 0 {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d interchanges not yet out of INGEST", missing, len(all))
		}
		return nil
	})
	for _, s := range all {
		if n := parsed[s] + dlq[s] + poison[s]; n != 1 {
			t.Errorf("INGEST seq %d found %d times (parsed %d, dlq %d, poison %d), want exactly once", s, n, parsed[s], dlq[s], poison[s])
		}
	}
	if len(dlq)+len(poison) != 0 {
		t.Errorf("healthy load: %d dead letters and %d quarantined, want none (a neighbour of a killed instance is no poison)", len(dlq), len(poison))
	}
	order, gaps := parsedOrder(t, j)
	for pi, p := range partners {
		if got := order[p]; fmt.Sprint(got) != fmt.Sprint(seqs[pi]) {
			t.Errorf("partner %s: PARSED in order %v, published %v", p, got, seqs[pi])
		}
	}
	t.Logf("longest pause of a partner in PARSED: %v across the hub kill, %v across the leader kill",
		gaps.around(killedAt), gaps.around(leaderKilledAt))
	if t.Failed() {
		return
	}

	t.Run("drill exit on the cluster", func(t *testing.T) { clusterDrillExit(t, nodes, hubs, j) })
	t.Run("one leak-probe alert", func(t *testing.T) { clusterLeakAlert(t, j, alerts) })
}

// clusterDrillExit: the killer runs on whichever instance holds its
// partition and kills it; it is quarantined after exactly the threshold.
func clusterDrillExit(t *testing.T, nodes []*natsNode, hubs []*hubProc, j js.JetStream) {
	exitsBefore := 0
	for _, h := range hubs {
		exitsBefore += h.exitCount()
	}
	poisonBefore := jetstreamtest.CountMsgs(t, j, "POISON")
	out, errOut, code := runCLI(t, 3*time.Minute, "drill", "--server", clusterURL(nodes), "--kind", "exit", "--healthy", "3", "--timeout", "150s")
	t.Logf("edihub drill --kind exit:\n%s%s", out, errOut)
	if code != 0 || !strings.Contains(out, "passed") {
		t.Fatalf("drill exited %d", code)
	}
	exits := -exitsBefore
	for _, h := range hubs {
		exits += h.exitCount()
	}
	msgs := jetstreamtest.StreamMsgs(t, j, "POISON")
	if len(msgs) != poisonBefore+1 {
		t.Fatalf("POISON holds %d new messages, want the drill message only", len(msgs)-poisonBefore)
	}
	p := msgs[len(msgs)-1]
	const threshold = 3
	msg := p.Header.Get(wire.HdrErrorMsg)
	if p.Header.Get(wire.HdrPoisonCause) != "process-died" || !strings.Contains(msg, fmt.Sprintf("died %d times while this message ran alone", threshold)) {
		t.Fatalf("quarantine: cause %q, %q; want process-died after exactly %d deaths", p.Header.Get(wire.HdrPoisonCause), msg, threshold)
	}
	// The first run was not yet a suspect's (its death is not counted),
	// then one death per solo run: threshold+1 instance deaths in all.
	if exits != threshold+1 {
		t.Fatalf("the instances died %d times, want %d (one unattributed, then the threshold)", exits, threshold+1)
	}
	t.Logf("quarantined after %d deaths across the instances: %s", threshold, msg)
	for _, h := range hubs {
		h.waitReady(t)
	}
}

// clusterLeakAlert: dead letters grow past the threshold; three instances
// send one DeadLetterQueueGrowing alert.
func clusterLeakAlert(t *testing.T, j js.JetStream, alerts chan *nats.Msg) {
	for len(alerts) > 0 {
		<-alerts
	}
	ctx := context.Background()
	for i := range 8 {
		msg := &nats.Msg{Subject: wire.IngestSubject("LEAK"), Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", fmt.Sprintf("LK%04d", i))),
			Header: nats.Header{wire.HdrDrill: {"error"}}}
		if _, err := publishUntilStored(ctx, j, msg); err != nil {
			t.Fatal(err)
		}
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return len(alerts) > 0 }, "no leak-probe alert")
	// Three probe intervals more for a second copy to show up, if any.
	deadline := time.After(2 * time.Second)
	var got []string
	collect := true
	for collect {
		select {
		case m := <-alerts:
			if strings.HasSuffix(m.Subject, ".DeadLetterQueueGrowing") {
				got = append(got, string(m.Data))
			}
		case <-deadline:
			collect = false
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d DeadLetterQueueGrowing alerts with three instances, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// partnerGaps records, per partner, the PARSED store times.
type partnerGaps map[string][]time.Time

// around is the longest pause between two consecutive PARSED messages of
// any partner that spans t.
func (g partnerGaps) around(at time.Time) time.Duration {
	var longest time.Duration
	for _, ts := range g {
		for i := 1; i < len(ts); i++ {
			if !ts[i-1].After(at) && ts[i].After(at) {
				longest = max(longest, ts[i].Sub(ts[i-1]))
			}
		}
	}
	return longest.Round(10 * time.Millisecond)
}

// parsedOrder reads PARSED in stream order: per partner the INGEST
// sequences of its interchanges, and when each was stored.
func parsedOrder(t testing.TB, j js.JetStream) (map[string][]uint64, partnerGaps) {
	t.Helper()
	order := map[string][]uint64{}
	gaps := partnerGaps{}
	for _, m := range jetstreamtest.StreamMsgs(t, j, "PARSED") {
		if ref := m.Header.Get(wire.HdrMessageRef); ref != "" && ref != "1" {
			continue
		}
		p := m.Header.Get(wire.HdrPartnerID)
		s, _ := strconv.ParseUint(m.Header.Get(wire.HdrOriginalSeq), 10, 64)
		order[p] = append(order[p], s)
		gaps[p] = append(gaps[p], m.Time)
	}
	return order, gaps
}
