package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// dupLedger has seen every interchange of partner DUP, and no other.
type dupLedger struct{}

func (dupLedger) Duplicate(k parse.LedgerKey, _ string) (bool, error) { return k.Partner == "DUP", nil }
func (dupLedger) Commit([]parse.LedgerKey, string) ledger.Wait {
	return func(context.Context) error { return nil }
}
func (dupLedger) Granted(string, string) (bool, error) { return false, nil }

// oddCause is a refusal whose cause is none the hub knows: the stage
// dead-letters it as unknown.
type oddCause struct{}

func (oddCause) Error() string { return "refused for a reason of its own" }
func (oddCause) Cause() string { return "odd" }

// oddAgreements are the registry's agreements, plus a refusal of
// partner ODD's interchanges with a cause of its own.
type oddAgreements struct{ *partner.Registry }

func (a oddAgreements) CheckInterchange(p string, ich *edifact.Interchange) error {
	if p == "ODD" {
		return oddCause{}
	}
	return a.Registry.CheckInterchange(p, ich)
}

func partnerFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "partner", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The dry run's verdict is the stage's, for every DLQ cause and for a
// partner with a profile: both call parse.Decide. (The dry run used to run
// only the guard and the parser: for WRONG, a sender the profile does not
// allow, it said "would be parsed" where the stage dead-letters.)
func TestDryRunDecidesAsTheStage(t *testing.T) {
	sig, err := partner.NewSigningKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	ack := partner.AckConfig{CONTRL: partner.AckAll, APERAK: true}
	reg, err := partner.New(partner.Config{Profiles: []partner.Profile{
		{ID: "ACME", Senders: []string{"4012345000009:14"}, Messages: []string{"INVOIC D:96A"}, Test: partner.TestProduction, Ack: ack},
		{ID: "WRONG", Senders: []string{"1111111111111"}, Ack: ack},
		{ID: "SIGNED", Signature: partner.SignatureConfig{Required: true, Keys: map[string]string{"k1": sig.PublicKey()}}, Ack: ack},
		{ID: "DUP", Ack: ack},
		{ID: "ODD", Ack: ack},
		{ID: "UBL", Ack: partner.AckConfig{MLR: partner.AckAll}},
		{ID: "UBLSELL", UBL: partner.UBLConfig{Senders: []string{"0088:1"}}, Ack: partner.AckConfig{MLR: partner.AckErrors}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ags := oddAgreements{reg}
	ok := partnerFile(t, "invoic_ok.edi")
	signed := nats.Header{}
	sig.Sign(signed, "SIGNED", ok)
	cases := []struct {
		name, partner string
		data          []byte
		hdr           nats.Header
		cause         string // "": accepted; "duplicate": acked as one
	}{
		{"schema", "ACME", partnerFile(t, "invoic_bad_count.edi"), nil, wire.CauseSchema},
		{"business", "ACME", partnerFile(t, "invoic_bad_total.edi"), nil, wire.CauseBusiness},
		{"partner-rejected (sender)", "WRONG", ok, nil, wire.CausePartnerRejected},
		{"partner-rejected (test indicator)", "ACME", partnerFile(t, "invoic_test.edi"), nil, wire.CausePartnerRejected},
		{"partner-rejected (no profile)", "NOBODY", ok, nil, wire.CausePartnerRejected},
		{"signature-invalid", "SIGNED", ok, nil, wire.CauseSignatureInvalid},
		{"unknown", "ODD", ok, nil, wire.CauseUnknown},
		{"duplicate", "DUP", ok, nil, "duplicate"},
		{"accepted", "ACME", ok, nil, ""},
		{"accepted signed", "SIGNED", ok, signed, ""},
	}
	// UBL is decided the same way (parse.Decide tells it by content)
	if valid, bad := ublFile(t, "valid/ConnectingEurope__eInvoicing-EN16931__ubl-tc434-example1.xml"),
		ublFile(t, "invalid/itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml"); valid != nil && bad != nil {
		doctype := []byte(`<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY a "a">]><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`)
		cases = append(cases, []struct {
			name, partner string
			data          []byte
			hdr           nats.Header
			cause         string
		}{
			{"UBL accepted", "UBL", valid, nil, ""},
			{"UBL business (BR-CO-15)", "UBL", bad, nil, wire.CauseBusiness},
			{"UBL schema (DOCTYPE)", "UBL", doctype, nil, wire.CauseSchema},
			{"UBL partner-rejected (seller endpoint)", "UBLSELL", valid, nil, wire.CausePartnerRejected},
			{"UBL duplicate", "DUP", valid, nil, "duplicate"},
		}...)
	}
	var streams wire.StreamNames
	streams.SetDefaults()
	o := &Ops{o: OpsOptions{Streams: streams, Agreements: ags, Ledger: dupLedger{}}}
	stage := parse.New(parse.Config{}, &parse.Options{Agreements: ags, Ledger: dupLedger{}})
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.hdr
			if h == nil {
				h = nats.Header{}
			}
			m := &hub.Message{Subject: wire.IngestSubject(c.partner), Partner: c.partner, Stream: streams.Ingest, Seq: 7, Header: h, Data: c.data}
			err := stage.Handle(context.Background(), m)
			stageCause := ""
			var f *hub.Failure
			var dup *hub.DuplicateError
			switch {
			case errors.As(err, &dup):
				stageCause = "duplicate"
			case errors.As(err, &f) && f.Class == hub.Permanent:
				stageCause = f.Cause
			case err != nil:
				t.Fatalf("stage: %v, want a verdict", err)
			}
			if stageCause != c.cause {
				t.Fatalf("stage: %q (%v), want %q", stageCause, err, c.cause)
			}
			seen[stageCause] = true
			d := o.dryRun(c.data, h, Entry{}, wire.IngestSubject(c.partner), false)
			dryCause := d.Cause
			if strings.Contains(d.Verdict, "duplicate without outputs") {
				dryCause = "duplicate"
			}
			if dryCause != stageCause {
				t.Fatalf("dry run: %q (%s), stage: %q (%v)", dryCause, d.Verdict, stageCause, err)
			}
			if wantOK := c.cause == "" || c.cause == "duplicate"; d.OK != wantOK {
				t.Fatalf("dry run ok = %v, want %v: %s", d.OK, wantOK, d.Verdict)
			}
			if c.cause == "" {
				views := 0
				for _, out := range m.Outputs() {
					if strings.HasPrefix(out.Subject, "edi.parsed.") {
						views++
					}
				}
				if d.Messages != views || d.Acks != len(m.Outputs())-views || d.Acks == 0 {
					t.Fatalf("dry run: %d messages and %d acks, the stage emitted %d views and %d acks", d.Messages, d.Acks, views, len(m.Outputs())-views)
				}
			}
			if c.cause != "" && c.cause != "duplicate" && !strings.Contains(d.Verdict, "("+c.cause+")") {
				t.Fatalf("verdict %q does not name the cause %s", d.Verdict, c.cause)
			}
		})
	}
	for _, cause := range wire.Causes {
		if !seen[cause] {
			t.Errorf("no case dead-letters under %s", cause)
		}
	}
}

// ublFile reads a document of ../shared/ubl, or nil when it is absent.
func ublFile(t *testing.T, rel string) []byte {
	t.Helper()
	for _, d := range []string{"../../../shared/ubl", "../../../../shared/ubl"} {
		if b, err := os.ReadFile(filepath.Join(d, rel)); err == nil {
			return b
		}
	}
	t.Log("../shared/ubl not found: no UBL rows")
	return nil
}
