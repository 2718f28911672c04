package ops

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/hubtest"
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

// With the audit key, a replay trusts the recorded partner only on copies
// the hub signed: anyone who may publish on a DLQ subject could write
// x-partner-id, so an unsigned entry needs a named destination.
func TestReplayTrustsOnlyTheHubsCopies(t *testing.T) {
	keys, err := audit.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{Config: &cfg, Keyring: keys})
	o, err := NewOps(OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT", audit.WithKeyring(keys)), Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	jetstreamtest.PublishIngest(t, env.JS, "ACME", "junk", nil) // the hub's own dead letter: DLQ:1
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	forged := nats.Header{wire.HdrPartnerID: {"GLOBEX"}, wire.HdrStage: {"parse"}}
	if _, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.DLQSubject("parse", wire.CauseSchema), Header: forged, Data: []byte("forged")}); err != nil {
		t.Fatal(err)
	}
	rep, err := o.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1", "DLQ:2"}})
	if err != nil || rep.Replayed != 1 || rep.Items[0].Subject != wire.IngestSubject("ACME") ||
		rep.Items[1].Outcome != OutcomeFailed || rep.Items[1].Reason != "no-destination" {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	if n := jetstreamtest.CountMsgs(t, env.JS, "INGEST"); n != 2 { // the junk and its replay; nothing for GLOBEX
		t.Fatalf("INGEST holds %d", n)
	}
}
