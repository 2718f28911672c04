package ops

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// Junk in AUDIT (a PubAck someone aimed at it, a forged event) is reported
// as foreign with its sequence while the authentic chain stays OK, and an
// operator's audited acknowledgement turns the verdict green again. The
// keyed genesis event makes an unkeyed event after it unauthenticated, not
// legacy.
func TestAuditSurvivesForeignMessages(t *testing.T) {
	env, auditor, o := keyedOps(t)
	ctx := context.Background()
	if err := auditor.Genesis(ctx, "edihub-serve"); err != nil {
		t.Fatal(err)
	}
	junk := []string{`{"stream":"INGEST","seq":7}`, `{"action":"drop","actor":"mallory","time":"2026-01-01T00:00:00Z","hash":"x"}`}
	var junkSeqs []uint64
	for _, j := range junk {
		ack, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.AuditSubject, Data: []byte(j)})
		if err != nil {
			t.Fatal(err)
		}
		junkSeqs = append(junkSeqs, ack.Sequence)
	}
	// An unkeyed but well-formed event after the genesis: not legacy.
	unkeyed := audit.New(env.JS, "AUDIT")
	_, err := unkeyed.Append(ctx, audit.Event{Action: "drop", Actor: "mallory", IDs: []string{"DLQ:1"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", "junk", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	if _, err := o.Show(ctx, "DLQ:1", ShowOptions{}); err != nil { // an authentic event after the junk
		t.Fatal(err)
	}

	v, err := o.AuditVerify(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !v.ChainOK || v.OK || len(v.Foreign) != 3 || v.Legacy != 0 {
		t.Fatalf("want the chain OK, three foreign messages, no legacy; got %+v", v)
	}
	var foreign []uint64
	for _, p := range v.Foreign {
		foreign = append(foreign, p.Seq)
	}
	if foreign[0] != junkSeqs[0] || foreign[1] != junkSeqs[1] || v.Foreign[2].Kind != audit.Unauthenticated {
		t.Fatalf("foreign messages: %+v (junk at %v)", v.Foreign, junkSeqs)
	}
	if err := o.AcknowledgeForeign(ctx, foreign, ""); !errors.Is(err, ErrReasonRequired) {
		t.Fatalf("acknowledge without a reason: %v", err)
	}
	if err := o.AcknowledgeForeign(ctx, []uint64{1}, "not junk"); !errors.Is(err, ErrNotForeign) {
		t.Fatalf("acknowledge the genesis event: %v", err)
	}
	if err := o.AcknowledgeForeign(ctx, foreign, "PubAck flood from before the accounts; INC-77"); err != nil {
		t.Fatal(err)
	}
	v, err = o.AuditVerify(ctx, "")
	if err != nil || !v.OK || !v.ChainOK || len(v.Foreign) != 3 || !v.Foreign[0].Acknowledged {
		t.Fatalf("after the acknowledgement: %+v %v", v, err)
	}
	if ev := lastAudit(t, env.JS); ev.Action != audit.AckForeignAction || ev.Actor != "alice" || len(ev.IDs) != 3 {
		t.Fatalf("acknowledgement event: %+v", ev)
	}
	// Junk after the acknowledgement turns it red again.
	if _, err := env.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.AuditSubject, Data: []byte("more junk")}); err != nil {
		t.Fatal(err)
	}
	if v, err := o.AuditVerify(ctx, ""); err != nil || v.OK || !v.ChainOK {
		t.Fatalf("new junk: %+v %v", v, err)
	}
}
