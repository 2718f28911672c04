package test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// The real binary under a restart loop, four partners hashed into one
// partition running side by side, one of them sending a drill message
// that kills the process (SIGKILL) every time it runs. The killer is
// quarantined as process-died after the threshold of deaths while it ran
// alone; no neighbour is charged (POISON holds the killer only); every
// interchange is found exactly once in PARSED or POISON, and each
// partner's outputs are in the order it sent them.
func TestKillerAmongConcurrentPartnersInOnePartition(t *testing.T) {
	h := startHubConfig(t, "", "--drill")
	partners := inPartitionOf("KILLER", "NEIGHBOUR", 3)
	k := newKillRun(t, h)
	for round := 0; round < 6; round++ {
		for _, p := range partners {
			if p == "KILLER" && round == 2 {
				k.drill(p, "KILL1")
				continue
			}
			k.publish(p, fmt.Sprintf("R%s%d", p[:4]+p[len(p)-1:], round))
		}
	}
	k.check(partners)
}

// One partner's backlog pipelined (hub.partner_pipeline 4) with a drill
// message in its middle that kills the process each time it runs, and a
// neighbour in the same partition: the messages taken ahead of and behind
// the killer are in the in-flight table when it dies, run alone once after
// the restart (uncharged), the killer alone until quarantined; nothing
// lost, duplicated or reordered for either partner.
func TestKillerInsideOnePartnersPipeline(t *testing.T) {
	h := startHubConfig(t, "  partition_concurrency: 8\n  partner_pipeline: 4\n", "--drill")
	partners := inPartitionOf("PIPE", "NEIGHBOUR", 1)
	k := newKillRun(t, h)
	for i := 0; i < 24; i++ {
		if i == 8 {
			k.drill("PIPE", "KILL1")
			continue
		}
		k.publish("PIPE", fmt.Sprintf("RPIPE%02d", i))
		if i%4 == 0 {
			k.publish(partners[1], fmt.Sprintf("RNEIGH%02d", i))
		}
	}
	k.check(partners)
}

// TestKillerInsideOnePartnersPipeline with group settles
// (hub.group_settle always, eight deep): the killer dies while groups of
// the messages before it settle and those behind it run ahead; nothing
// lost, duplicated or reordered, the killer alone charged. (How many
// settled in groups is logged: it depends on the machine's timing; the
// hub package's tests make them form.)
func TestKillerInsideOnePartnersGroups(t *testing.T) {
	h := startHubConfig(t, "  partition_concurrency: 16\n  partner_pipeline: 8\n  group_settle: always\n", "--drill")
	partners := inPartitionOf("PIPE", "NEIGHBOUR", 1)
	k := newKillRun(t, h)
	for i := 0; i < 40; i++ {
		if i == 12 {
			k.drill("PIPE", "KILL1")
			continue
		}
		k.publish("PIPE", fmt.Sprintf("RPIPE%02d", i))
		if i%4 == 0 {
			k.publish(partners[1], fmt.Sprintf("RNEIGH%02d", i))
		}
	}
	// the killer may still kill (and take the embedded server down) after
	// the last publish: wait for its quarantine before the checker reads
	jetstreamtest.Eventually(t, 90*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := k.j.Stream(ctx, "POISON")
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs >= 1
	})
	k.check(partners)
	// PARSED is a single-replica file stream: groups go as fast batches,
	// which leave no mark on what they store; the hub counts them
	t.Logf("%v messages settled in groups since the hub's last start", metricValue(t, k.h.httpAddr, "edihub_partner_pipeline_grouped_messages_total"))
}

// inPartitionOf is partner and the first n partners named prefix<i> that
// share its partition (fastConfig's 4).
func inPartitionOf(partner, prefix string, n int) []string {
	const partitions = 4 // fastConfig
	out := []string{partner}
	for i := 0; len(out) <= n; i++ {
		if p := prefix + strconv.Itoa(i); wire.PartitionOf(p, partitions) == wire.PartitionOf(partner, partitions) {
			out = append(out, p)
		}
	}
	return out
}

// killRun is what a kill test sent: each partner's INGEST sequences in
// sending order, and the drill message's.
type killRun struct {
	t        *testing.T
	h        *hubProc
	j        js.JetStream
	ctx      context.Context
	sent     map[string][]uint64
	drillSeq uint64
	n        int
}

func newKillRun(t *testing.T, h *hubProc) *killRun {
	_, j := jetstreamtest.Connect(t, h.url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return &killRun{t: t, h: h, j: j, ctx: ctx, sent: map[string][]uint64{}}
}

// publish sends one interchange of partner. The killer may take the
// server (embedded in the hub) down meanwhile: published again until
// stored, once (dedupe id).
func (k *killRun) publish(partner, ref string) uint64 { return k.send(partner, ref, nil) }

// drill sends partner's message that kills the process when it runs.
func (k *killRun) drill(partner, ref string) {
	k.drillSeq = k.send(partner, ref, nats.Header{wire.HdrDrill: {"exit"}})
}

func (k *killRun) send(partner, ref string, hdr nats.Header) uint64 {
	seq, err := client.PublishUntilAcked(k.ctx, k.j, partner, "kill-test:"+ref,
		[]byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref)), hdr)
	if err != nil {
		k.t.Fatal(err)
	}
	k.sent[partner] = append(k.sent[partner], seq)
	k.n++
	return seq
}

// check waits until every interchange sent is in PARSED or POISON, then
// fails unless each is there exactly once, POISON holds the killer only
// (process-died) after it killed the hub at least threshold times, and
// each partner's outputs are in its sending order.
func (k *killRun) check(partners []string) {
	checkKilledOnce(k.t, k.j, k.sent, partners, k.drillSeq, k.n, 90*time.Second)
	if n := k.h.startCount(); n < 4 {
		k.t.Fatalf("the hub was started %d times; the killer should have killed it at least threshold (3) times", n)
	}
}

// checkKilledOnce waits (up to wait) until PARSED and POISON together hold
// the published interchanges, then checks that every one is there exactly
// once, that POISON holds only drillSeq (the killer, as process-died: no
// neighbour charged), and that each partner's outputs in PARSED follow its
// sending order.
func checkKilledOnce(t *testing.T, j js.JetStream, sent map[string][]uint64, partners []string, drillSeq uint64, published int, wait time.Duration) {
	t.Helper()
	var parsed, poison map[uint64]int
	jetstreamtest.Eventually(t, wait, func() bool {
		// the killer can take the embedded server down during a read:
		// that read fails and the next one tries again
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p, err := readOriginSeqs(ctx, j, "PARSED")
		if err != nil {
			return false
		}
		q, err := readOriginSeqs(ctx, j, "POISON")
		if err != nil {
			return false
		}
		parsed, poison = p, q
		return len(parsed)+len(poison) == published
	})
	for _, seqs := range sent {
		for _, seq := range seqs {
			if n := parsed[seq] + poison[seq]; n != 1 {
				t.Errorf("INGEST seq %d found %d times (parsed %d, poison %d), want exactly once", seq, n, parsed[seq], poison[seq])
			}
		}
	}
	if len(poison) != 1 || poison[drillSeq] != 1 {
		t.Fatalf("POISON holds %v, want only the killer's drill message %d: a neighbour was charged", poison, drillSeq)
	}
	for _, m := range jetstreamtest.StreamMsgs(t, j, "POISON") {
		if c := m.Header.Get(wire.HdrPoisonCause); c != "process-died" {
			t.Errorf("killer quarantined with cause %q, want process-died", c)
		}
	}
	got := map[string][]uint64{}
	for _, m := range jetstreamtest.StreamMsgs(t, j, "PARSED") {
		o, _ := strconv.ParseUint(m.Header.Get(wire.HdrOriginalSeq), 10, 64)
		p := m.Header.Get(wire.HdrPartnerID)
		if n := len(got[p]); n > 0 && got[p][n-1] == o {
			continue // another message of the same interchange
		}
		got[p] = append(got[p], o)
	}
	for _, p := range partners {
		var want []uint64
		for _, seq := range sent[p] {
			if seq != drillSeq {
				want = append(want, seq)
			}
		}
		if fmt.Sprint(got[p]) != fmt.Sprint(want) {
			t.Errorf("%s: PARSED in order %v, want %v (lost, duplicated or reordered)", p, got[p], want)
		}
	}
}
