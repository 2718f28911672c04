package parse_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// Decide returns the acknowledgements as data: a positive CONTRL beside
// the views when accepted, a negative one (and no views) when refused;
// the stage acts on them, Decide sends nothing (there is no connection
// here to send on).
func TestDecideReturnsAcksAsData(t *testing.T) {
	reg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{
		{ID: "ACME", Messages: []string{"INVOIC"}, Ack: partner.AckConfig{CONTRL: partner.AckAll}},
		{ID: "ORD", Messages: []string{"ORDERS"}, Ack: partner.AckConfig{CONTRL: partner.AckAll}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		partner, data string
		cause         string
		views         int
		ackResult     string
	}{
		{"ACME", edifacttest.Invoice("R1"), "", 1, "accepted"},
		{"ORD", edifacttest.Invoice("R2"), wire.CausePartnerRejected, 0, "rejected"},
		{"ACME", edifacttest.BadCount("SENDER1:14", "RECEIVER1:14", "R3"), wire.CauseSchema, 0, "rejected"},
	} {
		d := parse.Decide(context.Background(), &parse.Input{Partner: c.partner, Stream: "INGEST", Seq: 42, Header: nats.Header{},
			Data: []byte(c.data)}, parse.With{Agreements: reg})
		if d.Cause() != c.cause || len(d.Outputs) != c.views {
			t.Errorf("%s %s: cause %q, %d views (%v); want %q, %d", c.partner, c.ackResult, d.Cause(), len(d.Outputs), d.Err, c.cause, c.views)
			continue
		}
		if len(d.Acks) != 1 || d.Acks[0].Header.Get(wire.HdrAckResult) != c.ackResult ||
			d.Acks[0].Header.Get(wire.HdrAckOrigin) != "INGEST:42" || d.Acks[0].Subject != wire.OutboundSubject(c.partner, partner.TypeCONTRL) {
			t.Errorf("%s: acks %v, want one %s CONTRL of INGEST:42", c.partner, d.Acks, c.ackResult)
		}
	}
	// accept: message: the INVOIC is published, the ORDERS (not agreed)
	// refused alone: one dead letter of the interchange naming it, a CONTRL
	// with UCI 7, UCM 7 and UCM 4, the ledger keys of the interchange
	mixed := strings.Replace(edifacttest.Invoice("R5"), "UNZ+1+R5'", "UNH+2+ORDERS:D:96A:UN'BGM+220+PO1+9'UNT+3+2'UNZ+2+R5'", 1)
	for _, c := range []struct {
		accept           string
		views, refused   int
		cause, ackResult string
	}{
		{partner.AcceptMessage, 1, 1, "", partner.AckPartial},
		{partner.AcceptInterchange, 0, 0, wire.CausePartnerRejected, "rejected"},
	} {
		mreg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{
			{ID: "MIX", Messages: []string{"INVOIC"}, Accept: c.accept, Ack: partner.AckConfig{CONTRL: partner.AckAll}},
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := parse.Decide(context.Background(), &parse.Input{Partner: "MIX", Stream: "INGEST", Seq: 44, Header: nats.Header{},
			Data: []byte(mixed)}, parse.With{Agreements: mreg})
		if d.Cause() != c.cause || len(d.Outputs) != c.views || len(d.Refused) != c.refused || len(d.Acks) != 1 ||
			d.Acks[0].Header.Get(wire.HdrAckResult) != c.ackResult {
			t.Errorf("accept %s: cause %q, %d views, %d refused, acks %v (%v)", c.accept, d.Cause(), len(d.Outputs), len(d.Refused), d.Acks, d.Err)
			continue
		}
		if c.refused == 0 {
			if d.DeadLetter != nil {
				t.Errorf("accept %s: a dead letter beside the refusal", c.accept)
			}
			continue
		}
		dl := d.DeadLetter
		if dl == nil || dl.Subject != wire.DLQSubject("parse", wire.CausePartnerRejected) || dl.Header.Get(wire.HdrRefusedMessages) != "2" ||
			dl.Header.Get(wire.HdrOriginalSeq) != "44" || string(dl.Data) != mixed || len(d.Keys) != 1 ||
			d.Outputs[0].Header.Get(wire.HdrMessageRef) != "1" {
			t.Errorf("accept message: dead letter %v, keys %v, outputs %v", dl, d.Keys, d.Outputs)
		}
		if !strings.Contains(string(d.Acks[0].Data), "UCM+1+INVOIC:D:96A:UN+7'UCM+2+ORDERS:D:96A:UN+4+17") {
			t.Errorf("CONTRL %s", d.Acks[0].Data)
		}
	}
	// a duplicate is answered with a negative CONTRL (0085 26, duplicate
	// detected, ISO 9735-1 annex B), so a partner that resends because its
	// CONTRL never came learns why
	d := parse.Decide(context.Background(), &parse.Input{Partner: "ACME", Stream: "INGEST", Seq: 43, Header: nats.Header{},
		Data: []byte(edifacttest.Invoice("R4"))}, parse.With{Agreements: reg, Ledger: seenLedger{}})
	if _, ok := d.Err.(*hub.DuplicateError); !ok || len(d.Acks) != 1 || len(d.Keys) != 1 || len(d.Outputs) != 0 ||
		d.Acks[0].Header.Get(wire.HdrAckResult) != "rejected" || !strings.Contains(string(d.Acks[0].Data), "+4+26") {
		t.Errorf("duplicate: %v, %d acks, %d keys, %d outputs", d.Err, len(d.Acks), len(d.Keys), len(d.Outputs))
	}
}

// seenLedger has seen every interchange.
type seenLedger struct{}

func (seenLedger) Duplicate(parse.LedgerKey, string) (bool, error) { return true, nil }
func (seenLedger) Commit([]parse.LedgerKey, string) ledger.Wait {
	return func(context.Context) error { return nil }
}
func (seenLedger) Granted(string, string) (bool, error) { return false, nil }
