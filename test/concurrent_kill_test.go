package test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

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
	_, j := jetstreamtest.Connect(t, h.url)
	const partitions = 4 // fastConfig
	partners := []string{"KILLER"}
	for i := 0; len(partners) < 4; i++ {
		if p := "NEIGHBOUR" + strconv.Itoa(i); wire.PartitionOf(p, partitions) == wire.PartitionOf("KILLER", partitions) {
			partners = append(partners, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sent := map[string][]uint64{} // partner → INGEST sequences in sending order
	var drillSeq uint64
	publish := func(partner, ref string, hdr nats.Header) uint64 {
		// the killer may take the server (embedded in the hub) down
		// meanwhile: published again until stored, once (dedupe id)
		seq, err := client.PublishUntilAcked(ctx, j, partner, "kill-test:"+ref,
			[]byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref)), hdr)
		if err != nil {
			t.Fatal(err)
		}
		sent[partner] = append(sent[partner], seq)
		return seq
	}
	for round := 0; round < 6; round++ {
		for _, p := range partners {
			if p == "KILLER" && round == 2 {
				drillSeq = publish(p, "KILL1", nats.Header{wire.HdrDrill: {"exit"}})
				continue
			}
			publish(p, fmt.Sprintf("R%s%d", p[:4]+p[len(p)-1:], round), nil)
		}
	}
	published := len(partners) * 6

	var parsed, poison map[uint64]int
	jetstreamtest.Eventually(t, 90*time.Second, func() bool {
		parsed, poison = originSeqs(t, j, "PARSED"), originSeqs(t, j, "POISON")
		return len(parsed)+len(poison) == published
	})
	if n := h.startCount(); n < 4 {
		t.Fatalf("the hub was started %d times; the killer should have killed it at least threshold (3) times", n)
	}
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
	// order: each partner's outputs in PARSED follow its sending order
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
