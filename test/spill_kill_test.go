package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/wire"
)

// The real binary under a restart loop, hub.partner_max_in_flight 8: a
// partner's backlog of 32 sent at once spills it to a park consumer of
// its own, and a drill message in the backlog (past the bound, so it runs
// from the park) kills the process (SIGKILL) every time it runs. The park
// outlives every death and its drain holds until what it had out is back;
// the killer is quarantined as process-died; the neighbour in the same
// partition is not charged; every other message of both is parsed
// exactly once, each partner's in its sending order.
func TestKillerInASpillPark(t *testing.T) {
	h := startHubConfig(t, "  partner_max_in_flight: 8\n", "--drill")
	partners := inPartitionOf("SPILL", "NEIGHBOUR", 1)
	k := newKillRun(t, h)
	const backlog, killAt = 32, 24
	k.burst("SPILL", backlog, killAt)
	for i := range 8 {
		k.publish(partners[1], fmt.Sprintf("RNEIGH%02d", i))
	}
	k.check(partners)
	log := h.logTail(1 << 20)
	if !strings.Contains(log, "partner over its share of the partition's window spilled") {
		t.Fatalf("SPILL never spilled (no spill in the hub's log): the test did not run the killer in a spill park")
	}
	drains := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"spill":true`) && strings.Contains(line, "parked partner drains") {
			drains++
		}
	}
	if drains < 2 {
		t.Fatalf("%d spill drains in the hub's log, want the killer's park drained again after a death", drains)
	}
}

// burst publishes n interchanges of partner at once (asynchronously, in
// order on one connection), the one at killAt a drill message that kills
// the process: a backlog the hub is handed in one go. One whose ack did
// not come back (the killer took the server down) is published again
// until stored: its dedupe id makes it land once, at its first sequence.
func (k *killRun) burst(partner string, n, killAt int) {
	k.t.Helper()
	type sent struct {
		ref string
		hdr nats.Header
		ack js.PubAckFuture
	}
	out := make([]sent, n)
	for i := range out {
		s := sent{ref: fmt.Sprintf("B%s%02d", partner, i)}
		if i == killAt {
			s.ref, s.hdr = "KILL"+partner, nats.Header{wire.HdrDrill: {"exit"}}
		}
		msg := &nats.Msg{Subject: wire.IngestSubject(partner), Header: s.hdr,
			Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", s.ref))}
		f, err := k.j.PublishMsgAsync(msg, js.WithMsgID("kill-test:"+s.ref))
		if err != nil {
			k.t.Fatal(err)
		}
		s.ack = f
		out[i] = s
	}
	for i, s := range out {
		var seq uint64
		select {
		case a := <-s.ack.Ok():
			seq = a.Sequence
			k.sent[partner] = append(k.sent[partner], seq)
			k.n++
		case <-s.ack.Err():
			seq = k.send(partner, s.ref, s.hdr)
		case <-k.ctx.Done():
			k.t.Fatal("burst not acked in time")
		}
		if i == killAt {
			k.drillSeq = seq
		}
	}
}
