package bridge

import (
	"testing"
	"time"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestInboundPoisonCopy(t *testing.T) {
	rec := &kgo.Record{Topic: "partners.in", Partition: 1, Offset: 42, Key: []byte("AC.ME"), Value: []byte("payload"),
		Headers: []kgo.RecordHeader{{Key: "x-ok", Value: []byte("kept")}, {Key: "x-bad", Value: []byte("a\nb")}}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := inboundPoison("edi.poison.bridge", "in-x", rec, unmap(causeBadPartner, "partner %q\nbad", "AC.ME"), 1<<20, now)
	if string(m.Data) != "payload" || m.Subject != "edi.poison.bridge" {
		t.Fatalf("%s %q", m.Subject, m.Data)
	}
	for k, want := range map[string]string{
		"x-poison-cause": causeBadPartner, "x-error-msg": `partner "AC.ME" bad`, "x-original-topic": "partners.in",
		"x-kafka-partition": "1", "x-kafka-offset": "42", "x-detected-at": "2026-01-02T03:04:05Z",
		"x-kafka-key": "AC.ME", "x-ok": "kept", "x-bad": "", "x-bridge-route": "in-x",
	} {
		if got := m.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	ti := topicIdentity{prefix: "cluster-1:AAAAAAAAAAAAAAAAAAAAAA"}
	if id := ti.recordID(rec, ":poison"); id != "kafka:cluster-1:AAAAAAAAAAAAAAAAAAAAAA:partners.in/1/42:poison" {
		t.Fatalf("id %q", id)
	}
	if id := outboundPoisonID("PARSED", 7); id != "PARSED:7:bridge-poison" {
		t.Fatalf("id %q", id)
	}
}

func TestFitPayloadTruncatesAndSays(t *testing.T) {
	h := nats.Header{}
	h.Set("x-a", "b")
	data := make([]byte, 5000)
	out := fitPayload(h, data, 2048)
	if len(out) >= 2048 || h.Get(wire.HdrPayloadTruncated) != "true" || h.Get(wire.HdrPayloadSize) != "5000" {
		t.Fatalf("len %d, headers %v", len(out), h)
	}
	h2 := nats.Header{}
	if out := fitPayload(h2, data[:10], 2048); len(out) != 10 || h2.Get(wire.HdrPayloadTruncated) != "" {
		t.Fatal("a small payload was changed")
	}
	// an error message quoting hostile bytes stays a legal one-line header
	m := inboundPoison("edi.poison.k", "r", &kgo.Record{Topic: "t"}, &unmappable{cause: "c", msg: "a\r\nb\x00c"}, 2048, time.Now())
	if s := m.Header.Get(wire.HdrErrorMsg); s != "a  b\\x00c" || !wire.ValidHeaderValue(s) {
		t.Fatalf("x-error-msg: %q", s)
	}
}
