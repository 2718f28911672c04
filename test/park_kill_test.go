package test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A paused partner's messages, parked, with a killer among them: the real
// binary under a restart loop. While PAUSED is paused its neighbour in the
// same partition is parsed and none of PAUSED's runs; after the resume its
// parked messages drain, the killer kills the process (SIGKILL) each time
// it runs, the park outlives every death, and the killer is quarantined as
// process-died; the neighbour is not charged; every other message of both
// is parsed exactly once, each partner's in its sending order.
func TestKillerInAParkedPartnersDrain(t *testing.T) {
	h := startHubConfig(t, `
  bulkhead:
    enabled: true
    min_messages: 1000
`, "--drill")
	_, j := jetstreamtest.Connect(t, h.url)
	neighbour := inPartitionOf("PAUSED", "QUIET", 1)[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	store, err := hub.OpenPauses(ctx, j, hub.DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, hub.Pause{Partner: "PAUSED", At: time.Now().UTC(), By: "test", Failures: 9, Messages: 9}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { // the hub has seen the pause
		r, err := http.Get("http://" + h.httpAddr + "/metrics")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return strings.Contains(string(b), `edihub_bulkhead_partner_paused_info{partner="PAUSED"} 1`)
	})

	sent := map[string][]uint64{}
	var drillSeq uint64
	publish := func(partner, ref string, hdr nats.Header) uint64 {
		seq, err := client.PublishUntilAcked(ctx, j, partner, "park-kill:"+ref,
			[]byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", ref)), hdr)
		if err != nil {
			t.Fatal(err)
		}
		sent[partner] = append(sent[partner], seq)
		return seq
	}
	const rounds = 12
	for i := range rounds {
		if i == 4 {
			drillSeq = publish("PAUSED", "KILL1", nats.Header{wire.HdrDrill: {"exit"}})
		} else {
			publish("PAUSED", fmt.Sprintf("P%02d", i), nil)
		}
		publish(neighbour, fmt.Sprintf("Q%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return len(originSeqs(t, j, "PARSED")) == rounds })
	for seq := range originSeqs(t, j, "PARSED") {
		for _, s := range sent["PAUSED"] {
			if s == seq {
				t.Fatalf("PAUSED's %d parsed while it was paused", seq)
			}
		}
	}
	if n := h.startCount(); n != 1 {
		t.Fatalf("the hub was started %d times before the resume, want once", n)
	}

	// The killer may take the server (embedded in the hub) down before the
	// resume's answer comes back: asked again until it is not paused.
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := store.Resume(c, "PAUSED")
		return err == nil || errors.Is(err, hub.ErrNotPaused)
	})
	// Threshold (3) deaths, then the fourth process quarantines the killer
	// and stays up: only then are the streams read (a read while the
	// server is down fails the test).
	jetstreamtest.Eventually(t, 120*time.Second, func() bool {
		if h.startCount() < 4 {
			return false
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := j.Stream(c, "POISON")
		if err != nil {
			return false
		}
		info, err := st.Info(c)
		return err == nil && info.State.Msgs > 0
	})
	checkKilledOnce(t, j, sent, slices.Sorted(maps.Keys(sent)), drillSeq, 2*rounds, 120*time.Second)
	if dlq := jetstreamtest.CountMsgs(t, j, "DLQ"); dlq != 0 {
		t.Errorf("DLQ holds %d, want none", dlq)
	}
}
