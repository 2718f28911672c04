package ops

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A partner cannot pick where a replay goes: headers naming another
// partner's output subject (in any letter case) are the producer's, the
// target is computed from the partner the hub recorded, and a destination
// other than a partner's ingest subject is refused.
func TestReplayTargetIsComputedNeverRead(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	forged := nats.Header{
		"X-Original-Topic": {"edi.parsed.GLOBEX.INVOIC"},
		"x-original-topic": {"edi.parsed.GLOBEX.INVOIC"},
		"X-Partner-Id":     {"GLOBEX"},
	}
	jetstreamtest.PublishIngest(t, e.JS, "ACME", "junk", forged)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "DLQ") == 1 })

	rep, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}, To: "edi.parsed.GLOBEX.INVOIC"})
	if err == nil {
		t.Fatalf("replay to an output subject was accepted: %+v", rep)
	}
	for _, to := range []string{"edi.ingest.*", "edi.ingest.A.B", "$JS.API.STREAM.DELETE.AUDIT", "edi.audit.events"} {
		if _, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}, To: to}); err == nil {
			t.Errorf("replay to %q accepted", to)
		}
	}
	rep, err = e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}})
	if err != nil || rep.Replayed != 1 || rep.Items[0].Subject != wire.IngestSubject("ACME") {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	if n := jetstreamtest.CountMsgs(t, e.JS, "PARSED"); n != 0 {
		t.Fatalf("PARSED holds %d messages: the replay bypassed the parser", n)
	}
}

// A filter replays parked messages only when it names kind=parking: they
// wait for a person's decision.
func TestReplayFilterLeavesParkedMessages(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.deadLetters(t, "ACME", 2, "junk one", "junk two")
	if res, err := e.ops.Park(ctx, []string{"DLQ:1"}, "waiting for ACME"); err != nil || !res[0].OK {
		t.Fatalf("park: %+v %v", res, err)
	}
	f, err := ParseFilter("partner=ACME")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.ops.Replay(ctx, ReplayRequest{Filter: &f, DryRun: true})
	if err != nil || rep.Matched != 1 || rep.Items[0].ID != "DLQ:2" {
		t.Fatalf("filter without kind: %+v %v", rep, err)
	}
	f.Kinds = []string{wire.KindParking}
	rep, err = e.ops.Replay(ctx, ReplayRequest{Filter: &f, DryRun: true})
	if err != nil || rep.Matched != 1 || rep.Items[0].ID[:8] != "PARKING:" {
		t.Fatalf("kind=parking: %+v %v", rep, err)
	}
}
