package audit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// scratchAudit is an audit stream created WITHOUT DenyDelete/DenyPurge, so
// that the test can do what an attacker with stream admin rights would.
func scratchAudit(t *testing.T, name, subject string) (js.JetStream, js.Stream) {
	t.Helper()
	_, j := jetstreamtest.Connect(t, jetstreamtest.StartServer(t, nil).URL)
	s, err := j.CreateStream(context.Background(), js.StreamConfig{Name: name, Subjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	return j, s
}

func appendEvents(t *testing.T, j js.JetStream, stream string, n int) []Event {
	t.Helper()
	a := New(j, stream)
	var out []Event
	for i := range n {
		ev, err := a.Append(context.Background(), Event{Actor: "alice", Action: "show", IDs: []string{"DLQ:" + string(rune('1'+i))},
			Details: map[string]string{"i": string(rune('a' + i))}}, "")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func verify(t *testing.T, j js.JetStream, stream, anchor string) Verification {
	t.Helper()
	v, err := Verify(context.Background(), j, stream, anchor)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyAuditDetectsMissingEvents(t *testing.T) {
	j, s := scratchAudit(t, "SCRATCH", "edi.audit.>")
	evs := appendEvents(t, j, "SCRATCH", 5)
	if v := verify(t, j, "SCRATCH", evs[4].Hash); !v.OK || v.Events != 5 || v.LastHash != evs[4].Hash {
		t.Fatalf("intact chain: %+v", v)
	}
	if v := verify(t, j, "SCRATCH", "feedfacefeedface"); !v.AnchorMissing {
		t.Fatalf("unknown anchor: %+v", v)
	}
	// A prefix of 12 hex digits, as listings show it, is an anchor.
	if v := verify(t, j, "SCRATCH", evs[2].Hash[:12]); !v.OK || v.AnchorMissing {
		t.Fatalf("12-digit anchor: %+v", v)
	}
	for _, bad := range []string{"feedface", "xyz0123456789ab"} {
		if _, err := Verify(context.Background(), j, "SCRATCH", bad); !errors.Is(err, ErrBadAnchor) {
			t.Fatalf("anchor %q: %v", bad, err)
		}
	}
	if err := s.DeleteMsg(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	v := verify(t, j, "SCRATCH", "")
	if v.OK || v.Problem.Kind != Missing || v.Problem.Seq != 3 {
		t.Fatalf("deleted event 3: %+v", v.Problem)
	}
	if err := s.DeleteMsg(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if v := verify(t, j, "SCRATCH", ""); v.Problem.Seq != 1 {
		t.Fatalf("deleted event 1 reported at %+v", v.Problem)
	}
}

func TestVerifyAuditDetectsTrailingDeletion(t *testing.T) {
	j, s := scratchAudit(t, "SCRATCH", "edi.audit.>")
	appendEvents(t, j, "SCRATCH", 3)
	if err := s.DeleteMsg(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if v := verify(t, j, "SCRATCH", ""); v.OK || v.Problem.Kind != Missing || v.Problem.Seq != 3 {
		t.Fatalf("deleted last event: %+v", v)
	}
}

// Events cannot be changed in place in JetStream, so a changed event means
// a rewritten stream: copy the chain with event 3 altered and verify the copy.
func TestVerifyAuditDetectsChangedEvents(t *testing.T) {
	j, _ := scratchAudit(t, "ORIG", "edi.audit.>")
	evs := appendEvents(t, j, "ORIG", 5)
	rewrite := func(stream string, f func(*Event)) {
		if _, err := j.CreateStream(context.Background(), js.StreamConfig{Name: stream, Subjects: []string{"copy." + stream}}); err != nil {
			t.Fatal(err)
		}
		for i, ev := range evs {
			if i == 2 {
				f(&ev)
			}
			b, _ := json.Marshal(ev)
			if _, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: "copy." + stream, Data: b}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rewrite("EDITED", func(ev *Event) { ev.Reason = "nothing to see here" })
	if v := verify(t, j, "EDITED", ""); v.OK || v.Problem.Kind != Altered || v.Problem.Seq != 3 {
		t.Fatalf("altered event 3: %+v", v.Problem)
	}
	// A careful attacker recomputes the hash: the next event's prev breaks.
	rewrite("REHASHED", func(ev *Event) { ev.Actor = "mallory"; ev.Hash = ev.computeHash() })
	if v := verify(t, j, "REHASHED", ""); v.OK || v.Problem.Kind != BrokenLink || v.Problem.Seq != 4 {
		t.Fatalf("re-hashed event 3: %+v", v.Problem)
	}
	rewrite("JUNK", func(ev *Event) { ev.Time = time.Time{}; ev.Details = map[string]string{"x": "\x1b[2J"} })
	if v := verify(t, j, "JUNK", ""); v.OK || v.Problem.Seq != 3 {
		t.Fatalf("junk event 3: %+v", v.Problem)
	}
}
