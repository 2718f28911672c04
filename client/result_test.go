package client

import (
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// The same bytes from the same partner get the same dedupe id (a re-send
// is dropped by the server); a signature makes it the signed bytes' id.
func TestNewMessageIDs(t *testing.T) {
	data := []byte("UNA:+.? 'UNB+UNOC:3+S+R+260101:1200+1'")
	var a, b Result
	ma, mb := NewMessage("ACME", "in\x1b[2J.edi", data, &a), NewMessage("ACME", "-", data, &b)
	if ma.Subject != wire.IngestSubject("ACME") || a.Bytes != len(data) {
		t.Fatalf("subject %s, bytes %d", ma.Subject, a.Bytes)
	}
	if a.MsgID != wire.SendMsgID("ACME", data) || a.MsgID != b.MsgID || ma.Header.Get(js.MsgIDHeader) != a.MsgID {
		t.Fatalf("dedupe ids %q %q (header %q)", a.MsgID, b.MsgID, ma.Header.Get(js.MsgIDHeader))
	}
	if a.CorrelationID == "" || a.CorrelationID == b.CorrelationID || ma.Header.Get(wire.HdrCorrelationID) != a.CorrelationID {
		t.Fatalf("correlation ids %q %q", a.CorrelationID, b.CorrelationID)
	}
	if f := ma.Header.Get(wire.HdrFilename); f == "" || f == "in\x1b[2J.edi" {
		t.Fatalf("file name header %q: want it escaped", f)
	}
	if f := mb.Header.Get(wire.HdrFilename); f != "" {
		t.Fatalf("standard input named %q", f)
	}
	Signed("ACME", mb, &b)
	if b.MsgID != a.MsgID {
		t.Fatal("an unsigned message's id changed")
	}
	mb.Header.Set(wire.HdrSignature, "sig")
	Signed("ACME", mb, &b)
	if b.MsgID != wire.SignedSendMsgID("ACME", data, "sig") || mb.Header.Get(js.MsgIDHeader) != b.MsgID {
		t.Fatalf("signed id %q", b.MsgID)
	}
}

func TestEventOutcome(t *testing.T) {
	for kind, want := range map[string]string{
		wire.EventDuplicateSkipped: OutcomeDuplicate, wire.EventDeadLettered: OutcomeDeadLettered,
		wire.EventQuarantined: OutcomeQuarantined, wire.EventRetryScheduled: OutcomeRetrying,
		wire.EventAttemptFailed: "", "forged": "",
	} {
		if got := EventOutcome(kind); got != want {
			t.Errorf("EventOutcome(%q) = %q, want %q", kind, got, want)
		}
	}
}
