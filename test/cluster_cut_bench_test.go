package test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// BenchmarkClusterFaults: steady load from 40 partners on three hubs of a
// three-node R3 cluster, then in turn: kill -9 of a hub (its supervisor
// restarts it), kill -9 of the JetStream meta leader's nats-server
// (restarted 5 s later), and a 20 s cut of the INGEST leader's node
// (SIGSTOP: its sockets stay open and answer nothing, as behind a cut
// link) followed by the heal (SIGCONT). Reported per event: the longest
// pause of any partner in PARSED spanning it (how long a partition stood
// still), and of INGEST (how long publishers could not store). Run:
//
//	go test ./test -run '^$' -bench ClusterFaults -benchtime 1x -v
func BenchmarkClusterFaults(b *testing.B) {
	nodes := startNATSCluster(b, 3)
	hubs := []*hubProc{startClusterHub(b, nodes, ""), startClusterHub(b, nodes, ""), startClusterHub(b, nodes, "")}
	_, j := jetstreamtest.Connect(b, clusterURL(nodes))
	jetstreamtest.Eventually(b, time.Minute, func() bool { return membersSeen(b, hubs) == 9 })
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		var published atomic.Int64
		var wg sync.WaitGroup
		steadyLoad(ctx, j, "C", "cut-", &wg, &published)
		at := map[string]time.Time{}
		time.Sleep(5 * time.Second) // steady state
		at["hub kill"] = time.Now()
		hubs[1].kill9()
		time.Sleep(15 * time.Second)

		meta := nodeNamed(b, nodes, metaLeader(b, nodes))
		at["meta leader kill"] = time.Now()
		meta.kill9()
		metaBack := leadersBack(b, nodes, meta, at["meta leader kill"])
		time.Sleep(5 * time.Second)
		meta.start()
		time.Sleep(15 * time.Second)
		metaLeaders := metaBack()

		cut := nodeNamed(b, nodes, streamLeader(b, j, wire.DefaultIngestStream))
		at["20 s cut of the INGEST leader"] = time.Now()
		signal(b, cut, syscall.SIGSTOP)
		cutBack := leadersBack(b, nodes, cut, at["20 s cut of the INGEST leader"])
		time.Sleep(12 * time.Second)
		during := consumerLeaders(b, nodes, cut)
		time.Sleep(8 * time.Second)
		cutLeaders := cutBack()
		at["heal"] = time.Now()
		signal(b, cut, syscall.SIGCONT)
		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		var pins, poison []string
		for _, h := range hubs {
			pins = append(pins, fmt.Sprint(metricValue(b, h.httpAddr, "edihub_cluster_partition_pins_total")))
			poison = append(poison, fmt.Sprint(metricValue(b, h.httpAddr, "edihub_poison_detected_total")))
		}
		b.Logf("leaders on live nodes again after the meta leader kill: %s; after the cut: %s", metaLeaders, cutLeaders)
		b.Logf("partition pins per hub since its (re)start: %s; quarantined: %s", strings.Join(pins, " "), strings.Join(poison, " "))

		jetstreamtest.CheckFor(b, 3*time.Minute, 500*time.Millisecond, func() error {
			if got := streamMsgs(b, j, "PARSED"); got < int(published.Load()) {
				if q := streamMsgs(b, j, wire.DefaultPoisonStream); got+q >= int(published.Load()) {
					b.Fatalf("%d of %d parsed, %d healthy interchanges quarantined", got, published.Load(), q)
				}
				return fmt.Errorf("%d of %d parsed", got, published.Load())
			}
			return nil
		})
		order, gaps := parsedOrder(b, j)
		// per partner, PARSED holds its interchanges in INGEST order, each once
		for p, seqs := range order {
			for i := 1; i < len(seqs); i++ {
				if seqs[i] <= seqs[i-1] {
					b.Errorf("partner %s: INGEST %d stored after %d in PARSED (out of order or twice)", p, seqs[i], seqs[i-1])
				}
			}
		}
		in := ingestGaps(b, j)
		var lines []string
		for _, ev := range []string{"hub kill", "meta leader kill", "20 s cut of the INGEST leader", "heal"} {
			p, w := gaps.around(at[ev]), in.around(at[ev])
			lines = append(lines, fmt.Sprintf("%s: partition pause %v, publishers %v", ev, p, w))
			unit := strings.ReplaceAll(strings.ReplaceAll(ev, " ", "-"), "-of-the-INGEST-leader", "")
			b.ReportMetric(p.Seconds(), "s-"+unit)
		}
		for i, h := range hubs {
			b.Logf("hub %d, warnings and errors from the cut to 10 s after the heal:\n%s", i, hubLogSummary(h, at["20 s cut of the INGEST leader"], at["heal"].Add(10*time.Second)))
		}
		b.Logf("meta leader %s, cut node %s, %d interchanges; partition consumer leaders 12 s into the cut: %s; longest partner pause in PARSED (and in INGEST):\n%s",
			meta.name, cut.name, published.Load(), during, strings.Join(lines, "\n"))
	}
}

// metaLeader names the JetStream meta leader, as the last node that ran
// all along last logged it.
func metaLeader(tb testing.TB, nodes []*natsNode) string {
	tb.Helper()
	var name string
	jetstreamtest.CheckFor(tb, 30*time.Second, 200*time.Millisecond, func() error {
		for _, n := range nodes {
			n.logMu.Lock()
			log := n.log.String()
			n.logMu.Unlock()
			self := strings.LastIndex(log, "Self is new JetStream cluster metadata leader")
			other := strings.LastIndex(log, "JetStream cluster new metadata leader: ")
			switch {
			case self > other:
				name = n.name
				return nil
			case other >= 0:
				rest := log[other+len("JetStream cluster new metadata leader: "):]
				name, _, _ = strings.Cut(rest, "/")
				return nil
			}
		}
		return fmt.Errorf("no node logged a meta leader")
	})
	return name
}

func nodeNamed(tb testing.TB, nodes []*natsNode, name string) *natsNode {
	tb.Helper()
	for _, n := range nodes {
		if n.name == name {
			return n
		}
	}
	tb.Fatalf("no node named %q", name)
	return nil
}

func signal(tb testing.TB, n *natsNode, sig syscall.Signal) {
	tb.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("%v to %s: %v", sig, n.name, err)
	}
}

// consumerLeaders names the leader of each partition consumer as a node
// other than cut sees it (a connection of its own: the benchmark's may be
// on the cut node).
func consumerLeaders(tb testing.TB, nodes []*natsNode, cut *natsNode) string {
	var url string
	for _, n := range nodes {
		if n != cut {
			url = n.url
			break
		}
	}
	nc, err := nats.Connect(url)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer nc.Close()
	j, _ := js.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := j.Stream(ctx, wire.DefaultIngestStream)
	if err != nil {
		return "unknown: " + err.Error()
	}
	var out []string
	list := s.ListConsumers(ctx)
	for ci := range list.Info() {
		if strings.HasPrefix(ci.Name, "ingest-p") && ci.Cluster != nil {
			out = append(out, ci.Name+"="+ci.Cluster.Leader)
		}
	}
	if err := list.Err(); err != nil {
		out = append(out, "error: "+err.Error())
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// hubLogSummary counts a hub's warn and error lines logged between from
// and to, by message, with the first time each was seen.
func hubLogSummary(h *hubProc, from, to time.Time) string {
	h.mu.Lock()
	text := h.log.String()
	h.mu.Unlock()
	type seen struct {
		n     int
		first time.Time
	}
	byMsg := map[string]*seen{}
	for _, l := range strings.Split(text, "\n") {
		var e struct {
			Level, Message, Error, Consumer string
			Time                            time.Time
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Level != "warn" && e.Level != "error" || e.Time.Before(from) || e.Time.After(to) {
			continue
		}
		k := e.Level + " " + e.Message + ": " + e.Error
		if byMsg[k] == nil {
			byMsg[k] = &seen{first: e.Time}
		}
		byMsg[k].n++
	}
	var out []string
	for k, v := range byMsg {
		out = append(out, fmt.Sprintf("  +%5.1fs ×%d %s", v.first.Sub(from).Seconds(), v.n, k))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// leadersBack polls, from a connection to the nodes other than victim,
// when each stream of the message path and each partition consumer
// answers with a leader other than victim again, from the event at t0:
// the server's part of a pause (its elections). stop reports it.
func leadersBack(tb testing.TB, nodes []*natsNode, victim *natsNode, t0 time.Time) (stop func() string) {
	var urls []string
	for _, n := range nodes {
		if n != victim {
			urls = append(urls, n.url)
		}
	}
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		return func() string { return "unknown: " + err.Error() }
	}
	j, _ := js.New(nc)
	streams := []string{wire.DefaultIngestStream, "PARSED", "KV_edihub-ledger", "KV_edihub-attempts"}
	back := map[string]time.Duration{}
	var lastConsumer time.Duration
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		consumers := map[string]bool{}
		for time.Since(t0) < 40*time.Second {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for _, name := range streams {
				if _, ok := back[name]; ok {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if s, err := j.Stream(ctx, name); err == nil {
					if c := s.CachedInfo().Cluster; c != nil && c.Leader != "" && c.Leader != victim.name {
						back[name] = time.Since(t0)
					}
				}
				cancel()
			}
			if len(consumers) < 8 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if s, err := j.Stream(ctx, wire.DefaultIngestStream); err == nil {
					list := s.ListConsumers(ctx)
					for ci := range list.Info() {
						if strings.HasPrefix(ci.Name, "ingest-p") && ci.Cluster != nil && ci.Cluster.Leader != "" &&
							ci.Cluster.Leader != victim.name && !consumers[ci.Name] {
							consumers[ci.Name], lastConsumer = true, time.Since(t0)
						}
					}
				}
				cancel()
			}
		}
	}()
	return func() string {
		close(done)
		<-finished
		nc.Close()
		var out []string
		for _, name := range streams {
			if d, ok := back[name]; ok {
				out = append(out, fmt.Sprintf("%s +%.1fs", name, d.Seconds()))
			} else {
				out = append(out, name+" not back")
			}
		}
		return strings.Join(out, ", ") + fmt.Sprintf(", last partition consumer +%.1fs", lastConsumer.Seconds())
	}
}
