package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A copy an older hub stored carries a v1 x-hub-mac, which covers the
// original's stream and sequence but not x-partner-id. A replay of it goes
// where its original says, never where a rewritten x-partner-id says: a
// v1 copy naming another partner than its original was stored for is
// refused (name the destination), one naming the right partner replays;
// an edit of the first is stored without the hub's mark, of the second signed.
func TestReplayOfAnOlderHubsCopyGoesWhereItsOriginalSays(t *testing.T) {
	env, _, o := keyedOps(t)
	ctx := context.Background()
	jetstreamtest.PublishIngest(t, env.JS, "ACME", edifacttest.BadCount("S:14", "R:14", "V1"), nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	orig := jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[0]
	keys := o.o.Auditor.Keyring()
	if v, err := audit.CheckCopy(keys, orig.Header, orig.Data); err != nil || v != audit.CopyMACv2 {
		t.Fatalf("the hub's own dead letter: %v %v", v, err)
	}
	// v1 copies, as an older hub signed them, one with its partner rewritten
	v1Copy := func(partner string) string {
		h := nats.Header{}
		for k, v := range orig.Header {
			h[k] = append([]string(nil), v...)
		}
		h.Del(nats.MsgIdHdr) // another copy, not a re-send the server would drop
		h.Set(wire.HdrPartnerID, partner)
		kid, tag := keys.Sign("edihub-hub-copy-v1", []byte(strings.Join([]string{
			h.Get(wire.HdrOriginalStream), h.Get(wire.HdrOriginalSeq), h.Get(wire.HdrDrillMode), h.Get(wire.HdrDrill), audit.PayloadHash(orig.Data),
		}, "\n")))
		h.Set(wire.HdrHubMAC, kid+":"+tag)
		if v, err := audit.CheckCopy(keys, h, orig.Data); err != nil || v != audit.CopyMACv1 {
			t.Fatalf("v1 copy for %s: %v %v", partner, err, v)
		}
		ack, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: orig.Subject, Header: h, Data: orig.Data})
		if err != nil {
			t.Fatal(err)
		}
		return wire.MsgRef{Stream: ack.Stream, Seq: ack.Sequence}.String()
	}
	evil, acme := v1Copy("EVIL"), v1Copy("ACME")
	ingest := jetstreamtest.CountMsgs(t, env.JS, "INGEST")

	rep, err := o.Replay(ctx, ReplayRequest{IDs: []string{evil}, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	it := rep.Items[0]
	if it.Outcome != OutcomeFailed || it.Reason != "no-destination" || !strings.Contains(it.Error, "does not vouch") || !strings.Contains(it.Error, `"EVIL"`) {
		t.Fatalf("v1 copy naming another partner: %+v", it)
	}
	if n := jetstreamtest.CountMsgs(t, env.JS, "INGEST"); n != ingest {
		t.Fatalf("INGEST went from %d to %d: the refused copy was sent", ingest, n)
	}
	if err := o.confirmPartner(ctx, jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[1].Header, "EVIL"); !errors.Is(err, ErrUnvouchedPartner) {
		t.Fatalf("confirmPartner: %v", err)
	}

	// an edit of each: the one naming its original's partner is signed (v2)
	// again, the other is stored without the hub's mark
	for _, c := range []struct {
		id     string
		signed bool
	}{{evil, false}, {acme, true}} {
		er, err := o.Edit(ctx, c.id, []byte(edifacttest.Invoice("V1E")), "test")
		if err != nil {
			t.Fatal(err)
		}
		ref, err := wire.ParseMsgRef(er.Edited, "DLQ")
		if err != nil {
			t.Fatal(err)
		}
		m, err := o.getMsg(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := audit.CheckCopy(keys, m.Header, m.Data); (err == nil) != c.signed {
			t.Fatalf("edit of %s: signed %v, want %v", c.id, err == nil, c.signed)
		}
	}

	rep, err = o.Replay(ctx, ReplayRequest{IDs: []string{acme}, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if it := rep.Items[0]; it.Outcome == OutcomeFailed || it.Subject != wire.IngestSubject("ACME") {
		t.Fatalf("v1 copy naming its original's partner: %+v", it)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "INGEST") == ingest+1 })
}
