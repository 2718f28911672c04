package ops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A partner who publishes the replay's Nats-Msg-Id first cannot make the
// server drop the hub's replay as a duplicate: the old predictable id
// (replay:DLQ:<n>) is not the one used, the new one is an HMAC with the
// audit key, and when the server does answer Duplicate for a message that
// is not the hub's copy the replay fails and the dead letter stays.
func TestReplayCannotBePreempted(t *testing.T) {
	env, _, o := keyedOps(t)
	ctx := context.Background()
	jetstreamtest.PublishIngest(t, env.JS, "ACME", "junk one", nil) // DLQ:1
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	jetstreamtest.PublishIngest(t, env.JS, "ACME", "junk two", nil) // DLQ:2
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 2 })

	// Another partner publishes the ids replays used to have.
	for _, id := range []string{"replay:DLQ:1", "replay:DLQ:2"} {
		jetstreamtest.PublishIngest(t, env.JS, "BETA", "attacker", nats.Header{nats.MsgIdHdr: {id}})
	}
	rep, err := o.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}})
	if err != nil || rep.Replayed != 1 {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	it := rep.Items[0]
	ref, err := wire.ParseMsgRef(it.NewID, "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := o.getMsg(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if it.Deduplicated || stored.Header.Get(wire.HdrReplayedFrom) != "DLQ:1" || string(stored.Data) != "junk one" {
		t.Fatalf("the replay was dropped for the attacker's message: %+v, stored %q %v", it, stored.Data, stored.Header)
	}

	// Even the right id, published first (a leaked id), is caught.
	id := o.copyMsgID("replay", "ACME", wire.MsgRef{Stream: "DLQ", Seq: 2}, "")
	jetstreamtest.PublishIngest(t, env.JS, "BETA", "attacker", nats.Header{nats.MsgIdHdr: {id}})
	rep, err = o.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:2"}})
	if err != nil || rep.Replayed != 0 || rep.Items[0].Outcome != OutcomeFailed {
		t.Fatalf("a pre-empted replay was reported as %+v %v", rep, err)
	}
	if _, err := o.getMsg(ctx, wire.MsgRef{Stream: "DLQ", Seq: 2}); err != nil {
		t.Fatalf("the pre-empted dead letter was deleted: %v", err)
	}
	if !strings.Contains(rep.Items[0].Error, ErrPreempted.Error()) {
		t.Fatalf("no reason given: %+v", rep.Items[0])
	}
}

// A forged x-edited-from published on a DLQ subject does not hide the real
// dead letter it names from the default listing.
func TestForgedEditedFromHidesNothing(t *testing.T) {
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{Config: &cfg})
	o, err := NewOps(OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT"), Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	jetstreamtest.PublishIngest(t, env.JS, "ACME", "junk", nil) // DLQ:1
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	forged := nats.Header{wire.HdrEditedFrom: {"DLQ:1"}, wire.HdrPartnerID: {"ACME"}}
	if _, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.DLQSubject("parse", wire.CauseSchema), Header: forged, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	entries, err := o.Inspect(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.ID == "DLQ:1" {
			return
		}
	}
	t.Fatalf("DLQ:1 is hidden by a forged x-edited-from: %+v", entries)
}
