package partner

import (
	"strings"
	"testing"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// TestAckRefsCountPerPartner: item 12. Our acknowledgement control
// references (UNB 0020 of the CONTRL, ISA13 of the TA1/999) count per
// partner in KV: the same INGEST sequence after the stream was recreated
// (INGEST:1 twice) does not reuse a reference, and a fresh counter starts
// at the minutes since 2020 (fixedNow: 2026-11-30 14:05).
func TestAckRefsCountPerPartner(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	p := acmeProfile()
	p.Ack.TA1 = AckAll
	r, err := New(Config{Profiles: []Profile{p}}, &Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Provision(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	data := read(t, "invoic_ok.edi")
	doc, derr := decide(r, "ACME", nil, data)
	if derr != nil {
		t.Fatal(derr)
	}
	var refs []string
	for range 3 {
		acks := r.AcksAt("ACME", "INGEST:1", "", data, doc, nil, r.NextAckRef(t.Context(), "ACME"))
		if len(acks) != 1 {
			t.Fatalf("%d acks", len(acks))
		}
		ref := acks[0].Header.Get(wire.HdrMessageID)
		if !strings.Contains(string(acks[0].Data), "+"+ref+"'UNH") {
			t.Fatalf("UNB 0020 is not %s: %s", ref, acks[0].Data)
		}
		refs = append(refs, ref)
	}
	// 2026-11-30 14:05 UTC is 3 636 845 minutes after 2020-01-01
	want := []string{"A36368450", "A36368460", "A36368470"}
	if strings.Join(refs, ",") != strings.Join(want, ",") {
		t.Fatalf("references %v, want %v", refs, want)
	}
	// partner check (Try, Acks) takes no number from the counter
	if d := r.Try(t.Context(), "ACME", nil, data, nil); len(d.Acks) != 1 || d.Acks[0].Header.Get(wire.HdrMessageID) != "A10" {
		t.Fatalf("check's acknowledgement reference %v", d.Acks)
	}
}
