package partner_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

func file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// e2eHub runs a real hub (embedded NATS, the built-in parse stage) with
// the profiles given, the OUTBOUND stream provisioned.
func e2eHub(t *testing.T, profiles ...partner.Profile) (js.JetStream, *partner.Registry) {
	t.Helper()
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	reg, err := partner.New(partner.Config{Profiles: profiles}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Provision(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	cfg := hubtest.FastConfig()
	cfg.SetDefaults()
	hubtest.Run(t, &hubtest.Options{URL: srv.URL, Config: &cfg, Stages: []hub.Stage{parse.New(parse.Config{}, &parse.Options{Agreements: reg, JS: j})}})
	return j, reg
}

func yes() *bool { v := true; return &v }

// Each cause the profiles produce lands in edi.parse.dlq.<cause> through a
// real hub, with the headers the runbook needs; a negative CONTRL goes to
// the partner on OUTBOUND; an accepted interchange is parsed and
// acknowledged.
func TestEachCauseThroughTheHub(t *testing.T) {
	sig, err := partner.NewSigningKey("acme-2026")
	if err != nil {
		t.Fatal(err)
	}
	betaKey, _ := partner.NewSigningKey("beta-1")
	ack := partner.AckConfig{CONTRL: partner.AckAll, APERAK: true}
	acme := partner.Profile{ID: "ACME", Senders: []string{"4012345000009:14"}, Messages: []string{"INVOIC D:96A"},
		Test: partner.TestProduction, Ack: ack}
	wrongSender := partner.Profile{ID: "WRONG", Senders: []string{"1111111111111"}, Ack: ack}
	orders := partner.Profile{ID: "ORD", Messages: []string{"ORDERS D:01B"}, Ack: ack}
	signed := partner.Profile{ID: "SIGNED", Signature: partner.SignatureConfig{Required: true,
		Keys: map[string]string{"acme-2026": sig.PublicKey()}}, Ack: ack}
	beta := partner.Profile{ID: "BETA", Signature: partner.SignatureConfig{Required: true,
		Keys: map[string]string{"beta-1": betaKey.PublicKey()}}}
	strict := partner.Profile{ID: "STRICT", Strict: yes()}
	j, _ := e2eHub(t, acme, wrongSender, orders, signed, beta, strict)

	ok := file(t, "invoic_ok.edi")
	signedHdr := nats.Header{}
	sig.Sign(signedHdr, "SIGNED", []byte(ok))
	// a valid signature of BETA's key, sent as SIGNED: the key id is not SIGNED's
	otherHdr := nats.Header{}
	betaKey.Sign(otherHdr, "BETA", []byte(ok))

	type want struct{ subject, reason, extraKey, extraVal string }
	cases := []struct {
		partner, data string
		hdr           nats.Header
		want          want
	}{
		{"NOBODY", ok, nil, want{"edi.parse.dlq.partner-rejected", wire.ReasonUnknownPartner, "", ""}},
		{"WRONG", ok, nil, want{"edi.parse.dlq.partner-rejected", wire.ReasonSenderNotAllowed, "", ""}},
		{"ORD", ok, nil, want{"edi.parse.dlq.partner-rejected", wire.ReasonTypeNotAgreed, "", ""}},
		{"ACME", file(t, "invoic_test.edi"), nil, want{"edi.parse.dlq.partner-rejected", wire.ReasonTestNotAgreed, "", ""}},
		{"SIGNED", ok, nil, want{"edi.parse.dlq.signature-invalid", wire.ReasonSignatureMissing, "", ""}},
		{"SIGNED", ok, otherHdr, want{"edi.parse.dlq.signature-invalid", wire.ReasonSignatureKey, wire.HdrSignatureKeyID, "beta-1"}},
		{"ACME", file(t, "invoic_bad_total.edi"), nil, want{"edi.parse.dlq.business", wire.ReasonRuleFailed, wire.HdrRule, partner.RuleInvoicTotal}},
		{"STRICT", strings.Replace(ok, "LIEFERANT AG", "Lieferant AG", 1), nil, want{"edi.parse.dlq.schema", "", "", ""}},
	}
	for _, c := range cases {
		jetstreamtest.PublishIngest(t, j, c.partner, c.data, c.hdr)
	}
	// accepted ones: ACME's good invoice, and SIGNED's with its signature
	jetstreamtest.PublishIngest(t, j, "ACME", ok, nil)
	jetstreamtest.PublishIngest(t, j, "SIGNED", ok, signedHdr)

	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, j, "DLQ") == len(cases) && jetstreamtest.CountMsgs(t, j, "PARSED") == 2
	}, "every case decided")
	dlq := jetstreamtest.StreamMsgs(t, j, "DLQ")
	for i, c := range cases {
		var m *js.RawStreamMsg // partners run in different partitions: find the case by its INGEST sequence
		for _, d := range dlq {
			if d.Header.Get(wire.HdrOriginalSeq) == strconv.Itoa(i+1) {
				m = d
			}
		}
		if m == nil {
			t.Errorf("case %d (%s): no dead letter", i, c.partner)
			continue
		}
		if m.Subject != c.want.subject {
			t.Errorf("case %d (%s): landed in %s, want %s (%s)", i, c.partner, m.Subject, c.want.subject, m.Header.Get(wire.HdrErrorMsg))
			continue
		}
		if got := m.Header.Get(wire.HdrRejectReason); got != c.want.reason {
			t.Errorf("case %d: x-reject-reason %q, want %q", i, got, c.want.reason)
		}
		if c.want.extraKey != "" && m.Header.Get(c.want.extraKey) != c.want.extraVal {
			t.Errorf("case %d: %s = %q, want %q", i, c.want.extraKey, m.Header.Get(c.want.extraKey), c.want.extraVal)
		}
		if m.Header.Get(wire.HdrPartnerID) != c.partner || m.Header.Get(wire.HdrErrorMsg) == "" ||
			m.Header.Get(wire.HdrMessageID) != "INV0042" || m.Header.Get(wire.HdrErrorClass) != "permanent" {
			t.Errorf("case %d: runbook headers missing: %v", i, m.Header)
		}
		if c.want.extraKey == wire.HdrRule && !strings.Contains(m.Header.Get(wire.HdrErrorMsg), partner.RuleInvoicTotal) {
			t.Errorf("the failing rule does not name itself in x-error-msg: %q", m.Header.Get(wire.HdrErrorMsg))
		}
		if strings.Contains(strings.Join(flatten(m.Header), " "), betaKey.PublicKey()) {
			t.Errorf("case %d: a key is in the headers", i)
		}
	}

	// acknowledgements: negative CONTRL for the refused ones of partners
	// with a CONTRL agreement, APERAK and positive CONTRL for the business
	// refusal, positive CONTRL for the accepted ones
	out := jetstreamtest.StreamMsgs(t, j, wire.DefaultOutboundStream)
	count := map[string]int{}
	for _, m := range out {
		count[m.Subject+"/"+m.Header.Get(wire.HdrAckResult)]++
		if m.Header.Get(wire.HdrAckOf) != "INV0042" || !strings.HasPrefix(m.Header.Get(wire.HdrAckOrigin), "INGEST:") {
			t.Errorf("ack %s without its references: %v", m.Subject, m.Header)
		}
	}
	wantAcks := map[string]int{
		"edi.outbound.WRONG.CONTRL/rejected":  1,
		"edi.outbound.ORD.CONTRL/rejected":    1,
		"edi.outbound.ACME.CONTRL/rejected":   1, // the test interchange
		"edi.outbound.SIGNED.CONTRL/rejected": 2,
		"edi.outbound.ACME.APERAK/rejected":   1,
		"edi.outbound.ACME.CONTRL/accepted":   2, // the business refusal's syntax, and the good one
		"edi.outbound.SIGNED.CONTRL/accepted": 1,
	}
	for k, n := range wantAcks {
		if count[k] != n {
			t.Errorf("%s: %d acknowledgements, want %d (all: %v)", k, count[k], n, count)
		}
	}
	if len(out) != 9 {
		t.Errorf("%d acknowledgements, want 9: %v", len(out), count)
	}
}

// A producer cannot set the hub's headers: x-partner-id, x-reject-reason
// and x-rule of its own arrive as x-producer-*, the partner is the
// subject's, and a signature header under another partner's key id fails.
func TestForgedHeaders(t *testing.T) {
	k, _ := partner.NewSigningKey("k1")
	thiefKey, _ := partner.NewSigningKey("k9")
	j, _ := e2eHub(t, partner.Profile{ID: "ACME", Messages: []string{"ORDERS D:96A"}},
		partner.Profile{ID: "OWNER", Signature: partner.SignatureConfig{Required: true, Keys: map[string]string{"k1": k.PublicKey()}}},
		partner.Profile{ID: "THIEF", Signature: partner.SignatureConfig{Required: true, Keys: map[string]string{"k9": thiefKey.PublicKey()}}})
	ok := file(t, "invoic_ok.edi")
	h := nats.Header{}
	h.Set(wire.HdrPartnerID, "OWNER")
	h.Set("X-Reject-Reason", "none")
	h.Set(wire.HdrRule, "forged")
	h.Set(wire.HdrSignatureKeyID, "forged")
	jetstreamtest.PublishIngest(t, j, "ACME", ok, h)
	// THIEF replays OWNER's signed interchange with OWNER's key id
	stolen := nats.Header{}
	k.Sign(stolen, "OWNER", []byte(ok))
	jetstreamtest.PublishIngest(t, j, "THIEF", ok, stolen)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "DLQ") == 2 }, "both refused")
	for _, m := range jetstreamtest.StreamMsgs(t, j, "DLQ") {
		switch m.Header.Get(wire.HdrOriginalSeq) {
		case "1":
			if m.Subject != "edi.parse.dlq.partner-rejected" || m.Header.Get(wire.HdrPartnerID) != "ACME" ||
				m.Header.Get(wire.HdrRejectReason) != wire.ReasonTypeNotAgreed || m.Header.Get(wire.HdrRule) != "" ||
				m.Header.Get(wire.HdrSignatureKeyID) != "" {
				t.Errorf("forged headers were taken: %s %v", m.Subject, m.Header)
			}
			if m.Header.Get("x-producer-x-partner-id") != "OWNER" || m.Header.Get("x-producer-x-rule") != "forged" ||
				m.Header.Get("x-producer-x-reject-reason") != "none" {
				t.Errorf("the producer's headers are not kept as x-producer-*: %v", m.Header)
			}
		case "2":
			if m.Subject != "edi.parse.dlq.signature-invalid" || m.Header.Get(wire.HdrPartnerID) != "THIEF" ||
				m.Header.Get(wire.HdrRejectReason) != wire.ReasonSignatureKey || m.Header.Get(wire.HdrSignatureKeyID) != "k1" {
				t.Errorf("a signature under another partner's key id: %s %v", m.Subject, m.Header)
			}
		}
	}
}

// A redelivered refusal does not send its CONTRL twice: the ack's dedupe id
// comes from the INGEST message.
func TestNegativeAckIsSentOnce(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	reg, err := partner.New(partner.Config{Profiles: []partner.Profile{{ID: "ACME", Messages: []string{"ORDERS"},
		Ack: partner.AckConfig{CONTRL: partner.AckErrors}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Provision(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	data := []byte(file(t, "invoic_ok.edi"))
	st := parse.New(parse.Config{}, &parse.Options{Agreements: reg, JS: j})
	for range 3 {
		m := &hub.Message{Subject: "edi.ingest.ACME", Partner: "ACME", Stream: "INGEST", Seq: 7, Header: nats.Header{}, Data: data}
		err := st.Handle(t.Context(), m)
		var f *hub.Failure
		if !errors.As(err, &f) || f.Class != hub.Permanent || f.Cause != wire.CausePartnerRejected {
			t.Fatalf("an INVOIC where ORDERS is agreed: %v, want a permanent partner-rejected refusal", err)
		}
	}
	if n := jetstreamtest.CountMsgs(t, j, wire.DefaultOutboundStream); n != 1 {
		t.Fatalf("%d CONTRLs stored for one interchange decided three times, want 1", n)
	}
}

func flatten(h nats.Header) []string {
	var out []string
	for k, vs := range h {
		out = append(out, k)
		out = append(out, vs...)
	}
	return out
}
