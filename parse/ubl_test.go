package parse_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// ublCorpus finds ../shared/ubl as the ubl package's tests do, or skips.
func ublCorpus(t testing.TB) string {
	t.Helper()
	for _, d := range []string{"../../shared/ubl", "../../../shared/ubl"} {
		if _, err := os.Stat(filepath.Join(d, "valid")); err == nil {
			return d
		}
	}
	t.Skip("../shared/ubl not found")
	return ""
}

func readUBL(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ublCorpus(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	ublValid    = "valid/ConnectingEurope__eInvoicing-EN16931__ubl-tc434-example1.xml"
	ublCredit   = "valid/ConnectingEurope__eInvoicing-EN16931__ubl-tc434-creditnote1.xml"
	ublBusiness = "invalid/itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml"
)

var _ parse.UBLAgreements = (*partner.Registry)(nil)

// A UBL document is decided by content: accepted to one JSON view on
// edi.parsed.<partner>.INVOICE/.CREDITNOTE with its ledger key, refused
// under schema (guard, parser), business (EN 16931 rules) or
// partner-rejected (the profile's ubl: section), its rule ids in the dead
// letter's headers and an MLR when the profile asks.
func TestDecideUBL(t *testing.T) {
	valid, credit, business := readUBL(t, ublValid), readUBL(t, ublCredit), readUBL(t, ublBusiness)
	sig, err := partner.NewSigningKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	doctype := []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`)
	reg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{
		{ID: "ERR", Ack: partner.AckConfig{MLR: partner.AckErrors}},
		{ID: "ALL", Ack: partner.AckConfig{MLR: partner.AckAll}, UBL: partner.UBLConfig{Strictness: "lenient"}},
		{ID: "PEP", UBL: partner.UBLConfig{Profile: "peppol"}, Ack: partner.AckConfig{MLR: partner.AckErrors}},
		{ID: "CUST", UBL: partner.UBLConfig{CustomizationIDs: []string{"urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"}}},
		{ID: "SELL", UBL: partner.UBLConfig{Senders: []string{"0088:1"}}, Ack: partner.AckConfig{MLR: partner.AckErrors}},
		{ID: "OFF", UBL: partner.UBLConfig{Strictness: "off"}},
		{ID: "SIG", Signature: partner.SignatureConfig{Required: true, Keys: map[string]string{"k1": sig.PublicKey()}}, Ack: partner.AckConfig{MLR: partner.AckErrors}},
	}}, &partner.Options{Now: func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, partner string
		ags           bool
		data          []byte
		cause, rule   string
		subject       string
		mlr           string // x-ack-result of the one MLR, "" none
	}{
		{"no profiles: valid", "ANY", false, valid, "", "", "edi.parsed.ANY.INVOICE", ""},
		{"no profiles: credit note", "ANY", false, credit, "", "", "edi.parsed.ANY.CREDITNOTE", ""},
		{"no profiles: BR-CO-15", "ANY", false, business, wire.CauseBusiness, "BR-CO-15", "", ""},
		{"no profiles: DOCTYPE", "ANY", false, doctype, wire.CauseSchema, "DOCTYPE", "", ""},
		{"no profiles: other XML", "ANY", false, []byte(`<order/>`), wire.CauseSchema, "NOT-UBL", "", ""},
		{"errors: valid, no MLR", "ERR", true, valid, "", "", "edi.parsed.ERR.INVOICE", ""},
		{"errors: BR-CO-15, MLR", "ERR", true, business, wire.CauseBusiness, "BR-CO-15", "", "rejected"},
		{"errors: DOCTYPE, MLR", "ERR", true, doctype, wire.CauseSchema, "DOCTYPE", "", "rejected"},
		{"all: valid, MLR", "ALL", true, valid, "", "", "edi.parsed.ALL.INVOICE", "accepted"},
		{"peppol: TC 434 example is not Peppol", "PEP", true, valid, wire.CauseBusiness, "PEPPOL-EN16931-R004", "", "rejected"},
		{"customization not agreed", "CUST", true, valid, wire.CausePartnerRejected, "BT-24", "", ""},
		{"seller endpoint not agreed", "SELL", true, valid, wire.CausePartnerRejected, "BT-34", "", "rejected"},
		{"off: BR-CO-15 accepted", "OFF", true, business, "", "", "edi.parsed.OFF.INVOICE", ""},
		{"unknown partner", "NOPE", true, valid, wire.CausePartnerRejected, "", "", ""},
		{"unsigned: MLR names why", "SIG", true, valid, wire.CauseSignatureInvalid, "", "", "rejected"},
	} {
		w := parse.With{}
		if c.ags {
			w.Agreements = reg
		}
		d := parse.Decide(context.Background(), &parse.Input{Partner: c.partner, Stream: "INGEST", Seq: 7, Header: nats.Header{}, Data: c.data}, w)
		if d.Cause() != c.cause {
			t.Errorf("%s: cause %q (%v), want %q", c.name, d.Cause(), d.Err, c.cause)
			continue
		}
		if c.cause == "" {
			if len(d.Outputs) != 1 || d.Outputs[0].Subject != c.subject || d.Outputs[0].Header.Get(wire.HdrStandard) != wire.StandardUBL ||
				!strings.HasPrefix(string(d.Outputs[0].Data), "{") || len(d.Keys) != 1 || d.Standard != wire.StandardUBL {
				t.Errorf("%s: outputs %v keys %v, want one view on %s", c.name, d.Outputs, d.Keys, c.subject)
			}
		} else {
			if len(d.Outputs) != 0 || len(d.Keys) != 0 {
				t.Errorf("%s: refused with %d outputs, %d keys", c.name, len(d.Outputs), len(d.Keys))
			}
			h := deadLetterHeaders(d.Err)
			if got := h[wire.HdrRule]; !strings.Contains(" "+got+" ", " "+c.rule+" ") {
				t.Errorf("%s: x-rule %q, want it to name %s (%v)", c.name, got, c.rule, d.Err)
			}
		}
		switch {
		case c.mlr == "" && len(d.Acks) != 0:
			t.Errorf("%s: %d acks, want none", c.name, len(d.Acks))
		case c.mlr != "" && (len(d.Acks) != 1 || d.Acks[0].Subject != wire.OutboundSubject(c.partner, partner.TypeMLR) ||
			d.Acks[0].Header.Get(wire.HdrAckResult) != c.mlr || !strings.Contains(string(d.Acks[0].Data), "ApplicationResponse")):
			t.Errorf("%s: acks %v, want one %s MLR", c.name, d.Acks, c.mlr)
		case c.mlr == "rejected" && c.rule != "" && !strings.Contains(string(d.Acks[0].Data), c.rule):
			t.Errorf("%s: the MLR does not name %s:\n%s", c.name, c.rule, d.Acks[0].Data)
		case c.partner == "SIG" && !strings.Contains(string(d.Acks[0].Data), wire.ReasonSignatureMissing):
			t.Errorf("%s: the MLR does not say %s:\n%s", c.name, wire.ReasonSignatureMissing, d.Acks[0].Data)
		}
	}
}

// deadLetterHeaders are the headers a refusal gives its dead letter.
func deadLetterHeaders(err error) map[string]string {
	var fh hub.FailureHeaderer
	if e, ok := err.(interface{ Unwrap() error }); ok && e.Unwrap() != nil {
		err = e.Unwrap()
	}
	if f, ok := err.(hub.FailureHeaderer); ok {
		fh = f
		return fh.FailureHeaders()
	}
	return nil
}

// The ledger names a UBL document by partner, seller endpoint, number and
// date: the same invoice again is a duplicate, another partner's is not.
func TestDecideUBLDuplicate(t *testing.T) {
	valid := readUBL(t, ublValid)
	d := parse.Decide(context.Background(), &parse.Input{Partner: "P", Stream: "INGEST", Seq: 9, Header: nats.Header{}, Data: valid},
		parse.With{Ledger: seenLedger{}})
	if _, ok := d.Err.(*hub.DuplicateError); !ok || len(d.Keys) != 1 || len(d.Outputs) != 0 {
		t.Fatalf("duplicate: %v, %d keys, %d outputs", d.Err, len(d.Keys), len(d.Outputs))
	}
	k := d.Keys[0]
	if k.Partner != "P" || !strings.Contains(k.ControlRef, "INVOICE|") {
		t.Errorf("key %+v", k)
	}
	// an EDIFACT interchange is not taken for XML
	e := parse.Decide(context.Background(), &parse.Input{Partner: "P", Stream: "INGEST", Seq: 10, Header: nats.Header{},
		Data: []byte(edifacttest.Invoice("R9"))}, parse.With{})
	if e.Err != nil || e.Standard != "EDIFACT" {
		t.Errorf("EDIFACT: %v %s", e.Err, e.Standard)
	}
}

// The stage acts on a UBL decision as on an EDIFACT one: accepted, the
// view and the positive MLR travel together as the message's outputs;
// refused, nothing is emitted and the refusal carries its rule ids.
func TestStageUBLOutputsAndMLR(t *testing.T) {
	reg, err := partner.New(partner.Config{Profiles: []partner.Profile{{ID: "ALL", Ack: partner.AckConfig{MLR: partner.AckAll}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stage := parse.New(parse.Config{}, &parse.Options{Agreements: reg})
	m := &hub.Message{Subject: wire.IngestSubject("ALL"), Partner: "ALL", Stream: "INGEST", Seq: 3, Header: nats.Header{}, Data: readUBL(t, ublValid)}
	if err := stage.Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, o := range m.Outputs() {
		subjects = append(subjects, o.Subject)
	}
	if strings.Join(subjects, " ") != "edi.parsed.ALL.INVOICE edi.outbound.ALL.MLR" {
		t.Errorf("outputs %v, want the view and the MLR", subjects)
	}
	m = &hub.Message{Subject: wire.IngestSubject("ALL"), Partner: "ALL", Stream: "INGEST", Seq: 4, Header: nats.Header{}, Data: readUBL(t, ublBusiness)}
	err = stage.Handle(context.Background(), m)
	if h := deadLetterHeaders(err); len(m.Outputs()) != 0 || !strings.Contains(h[wire.HdrRule], "BR-CO-15") {
		t.Errorf("refused: %v, %d outputs, headers %v", err, len(m.Outputs()), h)
	}
}
