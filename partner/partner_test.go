package partner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/directory"
	"github.com/edihub/edihub/wire"
)

var update = flag.Bool("update", false, "rewrite the golden acknowledgements in testdata/golden")

var fixedNow = func() time.Time { return time.Date(2026, 11, 30, 14, 5, 0, 0, time.UTC) }

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func yes() *bool { v := true; return &v }

// acmeProfile agrees INVOIC D:96A and ORDERS D:96A from one sender, for
// production, with every acknowledgement.
func acmeProfile() Profile {
	return Profile{ID: "ACME", Senders: []string{"4012345000009:14"}, Recipients: []string{"4098765000002"},
		Messages: []string{"INVOIC D:96A", "ORDERS D:96A", "850 005010"}, Test: TestProduction, Strict: yes(),
		Ack: AckConfig{CONTRL: AckAll, APERAK: true, X12: "999", X12All: true, TA1: AckErrors}}
}

// builtin decodes the shipped directories once for the package's tests.
var builtin = sync.OnceValues(directory.Builtin)

func newRegistry(t *testing.T, ps ...Profile) *Registry {
	t.Helper()
	set, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Profiles: ps}, &Options{Now: fixedNow, Directories: set})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decide runs what the parse stage runs, without a hub: Admit, the walk
// with Message per message, CheckInterchange.
func decide(r *Registry, partner string, h nats.Header, data []byte) (*edifact.Document, error) {
	opts := edifact.Config{}.Options(partner)
	if err := r.Admit(partner, h, data, opts); err != nil {
		return nil, err
	}
	doc, err := edifact.Walk(data, opts, func(em *edifact.Message) error {
		view, err := edifact.MessageJSON(em)
		if err != nil {
			return err
		}
		return r.Message(context.Background(), partner, em, view)
	})
	if err != nil {
		return nil, err
	}
	for _, ich := range doc.Interchanges {
		if err := r.CheckInterchange(partner, ich); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func TestDecisions(t *testing.T) {
	other := Profile{ID: "OTHER"}
	r := newRegistry(t, acmeProfile(), other)
	cases := []struct {
		name, partner, file string
		cause, reason       string
	}{
		{"accepted", "ACME", "invoic_ok.edi", "", ""},
		{"unknown partner", "NOBODY", "invoic_ok.edi", wire.CausePartnerRejected, wire.ReasonUnknownPartner},
		{"test interchange where production is agreed", "ACME", "invoic_test.edi", wire.CausePartnerRejected, wire.ReasonTestNotAgreed},
		{"INVOIC total", "ACME", "invoic_bad_total.edi", wire.CauseBusiness, wire.ReasonRuleFailed},
		{"date", "ACME", "invoic_bad_date.edi", wire.CauseBusiness, wire.ReasonRuleFailed},
		{"ORDERS without lines", "ACME", "orders_nolines.edi", wire.CauseBusiness, wire.ReasonRuleFailed},
		{"X12 850", "ACME", "x12_850.edi", wire.CausePartnerRejected, wire.ReasonSenderNotAllowed},
		{"a profile with no agreements takes anything well formed", "OTHER", "invoic_test.edi", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decide(r, c.partner, nil, read(t, c.file))
			if c.cause == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("want a %s refusal, got %v", c.cause, err)
			}
			if rej.Cause() != c.cause || rej.Reason != c.reason {
				t.Fatalf("got %s/%s (%v), want %s/%s", rej.Cause(), rej.Reason, err, c.cause, c.reason)
			}
		})
	}
}

func TestSenderAndTypeAgreements(t *testing.T) {
	p := acmeProfile()
	p.Senders = []string{"9999999999999:14"}
	r := newRegistry(t, p)
	_, err := decide(r, "ACME", nil, read(t, "invoic_ok.edi"))
	var rej *Rejection
	if !errors.As(err, &rej) || rej.Reason != wire.ReasonSenderNotAllowed || !strings.Contains(rej.Msg, "4012345000009") {
		t.Fatalf("a partner sending as another was not refused: %v", err)
	}
	p = acmeProfile()
	p.Messages = []string{"INVOIC D:01B"}
	r = newRegistry(t, p)
	_, err = decide(r, "ACME", nil, read(t, "invoic_ok.edi"))
	if !errors.As(err, &rej) || rej.Reason != wire.ReasonTypeNotAgreed || rej.Code != codeNoAgreement {
		t.Fatalf("a version not agreed was not refused: %v", err)
	}
}

func TestRuleNamesItself(t *testing.T) {
	p := acmeProfile()
	p.Rules = []Rule{{Name: "buyer-named", Type: "INVOIC", Expr: `msg.segments.exists(s, s.tag == "NAD" && s.elements[0][0] == "DP")`}}
	r := newRegistry(t, p)
	_, err := decide(r, "ACME", nil, read(t, "invoic_ok.edi"))
	var rej *Rejection
	if !errors.As(err, &rej) || rej.Rule != "buyer-named" || !strings.Contains(err.Error(), "buyer-named") {
		t.Fatalf("the failing rule does not name itself: %v", err)
	}
	if h := rej.FailureHeaders(); h[wire.HdrRule] != "buyer-named" || h[wire.HdrRejectReason] != wire.ReasonRuleFailed {
		t.Fatalf("headers %v", h)
	}
	p.Rules[0].Expr = `msg.segments.exists(s, s.tag == "NAD" && s.elements[0][0] == "BY")`
	r = newRegistry(t, p)
	if _, err := decide(r, "ACME", nil, read(t, "invoic_ok.edi")); err != nil {
		t.Fatalf("a true rule refused: %v", err)
	}
	p.Rules[0].Expr = `msg.segments.size(`
	if _, err := New(Config{Profiles: []Profile{p}}, nil); err == nil || !strings.Contains(err.Error(), "buyer-named") {
		t.Fatalf("a rule that does not compile was accepted: %v", err)
	}
}

func TestSignature(t *testing.T) {
	k, err := NewSigningKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigningKey("k2")
	p := acmeProfile()
	p.Signature = SignatureConfig{Required: true, Keys: map[string]string{"k1": k.PublicKey()}}
	q := Profile{ID: "BETA", Signature: SignatureConfig{Required: true, Keys: map[string]string{"k2": other.PublicKey()}}}
	r := newRegistry(t, p, q)
	data := read(t, "invoic_ok.edi")
	signed := func(k SigningKey, d []byte) nats.Header { h := nats.Header{}; k.Sign(h, "ACME", d); return h }
	check := func(name string, h nats.Header, reason string) {
		t.Helper()
		err := r.Admit("ACME", h, data, &edifact.Options{})
		var rej *Rejection
		if reason == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", name, err)
			}
			return
		}
		if !errors.As(err, &rej) || rej.Cause() != wire.CauseSignatureInvalid || rej.Reason != reason {
			t.Errorf("%s: got %v, want signature-invalid/%s", name, err, reason)
			return
		}
		if strings.Contains(err.Error(), k.PublicKey()) || strings.Contains(err.Error(), other.PublicKey()) {
			t.Errorf("%s: a key is in the error", name)
		}
	}
	check("good", signed(k, data), "")
	check("missing", nil, wire.ReasonSignatureMissing)
	check("another partner's key id", signed(other, data), wire.ReasonSignatureKey)
	forged := signed(other, data)
	forged.Set(wire.HdrSignatureKey, "k1") // BETA's signature under ACME's key id
	check("another key under our key id", forged, wire.ReasonSignatureMismatch)
	check("other payload", signed(k, []byte("UNB+")), wire.ReasonSignatureMismatch)
	forBeta := nats.Header{}
	k.Sign(forBeta, "BETA", data) // the same payload and key, signed for another partner
	check("signed for another partner", forBeta, wire.ReasonSignatureMismatch)
	old := nats.Header{}
	k.SignAt(old, "ACME", data, time.Now().Add(-DefaultSignatureWindow-time.Minute))
	check("signed before the window", old, wire.ReasonSignatureBad)
	late := signed(k, data)
	late.Set(wire.HdrSignatureTime, strconv.FormatInt(time.Now().Unix()-3600, 10)) // the time is signed too
	check("time changed", late, wire.ReasonSignatureMismatch)
	noTime := signed(k, data)
	noTime.Del(wire.HdrSignatureTime)
	check("no time", noTime, wire.ReasonSignatureBad)
	// One key listed for two partners is refused at load.
	shared := Profile{ID: "GAMMA", Signature: SignatureConfig{Required: true, Keys: map[string]string{"g1": k.PublicKey()}}}
	if _, err := Load(Config{Profiles: []Profile{p, shared}}); err == nil || !strings.Contains(err.Error(), "belongs to one partner") {
		t.Errorf("a key of two partners: %v", err)
	}
	h := signed(k, data)
	h.Set(wire.HdrSignature, "rsa:"+h.Get(wire.HdrSignature)[len(wire.SignatureScheme):])
	check("other scheme", h, wire.ReasonSignatureBad)
	h = signed(k, data)
	h.Add(wire.HdrSignature, h.Get(wire.HdrSignature))
	check("twice", h, wire.ReasonSignatureBad)
	h = signed(k, data)
	h.Set(wire.HdrSignature, wire.SignatureScheme+strings.Repeat("A", 1<<20))
	check("a megabyte of base64", h, wire.ReasonSignatureBad)
	h = signed(k, data)
	h.Set(wire.HdrSignatureKey, "k1\x1b[31m")
	check("control bytes in the key id", h, wire.ReasonSignatureBad)
	// a letter-case variant is not the header
	h = signed(k, data)
	h["X-Signature"] = h[wire.HdrSignature]
	delete(h, wire.HdrSignature)
	check("X-Signature", h, wire.ReasonSignatureMissing)

	err = r.Admit("ACME", signed(other, data), data, nil)
	var rej *Rejection
	if errors.As(err, &rej) && rej.FailureHeaders()[wire.HdrSignatureKeyID] != "k2" {
		t.Errorf("the key id is not in the dead letter's headers: %v", rej.FailureHeaders())
	}
	s := k.String()
	back, err := ParseSigningKey(s)
	if err != nil || back.ID != "k1" || !back.Key.Equal(k.Key) || len(back.Key) != ed25519.PrivateKeySize {
		t.Fatalf("signing key round trip: %v", err)
	}
}

func TestReloadKeepsTheOldSetOnABadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("acme.yaml", "id: ACME\nmessages: [\"INVOIC D:96A\"]\n")
	r, err := New(Config{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Set().Get("ACME"); !ok {
		t.Fatal("ACME not loaded")
	}
	write("beta.yaml", "id: BETA\n")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := r.Set().IDs(); strings.Join(got, ",") != "ACME,BETA" {
		t.Fatalf("after reload: %v", got)
	}
	write("beta.yaml", "id: BETA\nmesages: []\n") // misspelt key
	if err := r.Reload(); err == nil || !strings.Contains(err.Error(), "mesages") {
		t.Fatalf("a bad file was accepted: %v", err)
	}
	if got := r.Set().IDs(); strings.Join(got, ",") != "ACME,BETA" {
		t.Fatalf("a failed reload changed the set: %v", got)
	}
	write("dup.yaml", "id: ACME\n")
	write("beta.yaml", "id: BETA\n")
	if err := r.Reload(); err == nil || !strings.Contains(err.Error(), "already defined") {
		t.Fatalf("a partner defined twice was accepted: %v", err)
	}
}

// ReloadOn reloads on every signal until its context ends.
func TestReloadOnSignal(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("id: A\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal)
	done := make(chan struct{})
	go func() { defer close(done); r.ReloadOn(ctx, sig) }()
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("id: B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sig <- os.Interrupt // unbuffered: received once ReloadOn took it
	sig <- os.Interrupt // and the first reload is done when the second is taken
	cancel()
	<-done
	if got := strings.Join(r.Set().IDs(), ","); got != "A,B" {
		t.Fatalf("after the signal: %s", got)
	}
}

// A rule is the operator's, the message the partner's: a quadratic rule
// over a large message stops at the cost limit and refuses, naming the
// rule, instead of holding the partition.
func TestRuleCostIsBounded(t *testing.T) {
	p := Profile{ID: "ACME", Rules: []Rule{{Name: "quadratic", Expr: `msg.segments.all(a, msg.segments.all(b, a.tag != "" || b.tag != ""))`}}}
	set, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	// a small cost limit and the time limit at its maximum, so that the
	// cost is what stops it (cel-go's tracker slows down with the length
	// of the comprehension: the time limit is what bounds the large ones)
	r, err := New(Config{Profiles: []Profile{p}, RuleCostLimit: 20_000, RuleTimeLimit: maxRuleTimeLimit}, &Options{Now: fixedNow, Directories: set})
	if err != nil {
		t.Fatal(err)
	}
	_, err = decide(r, "ACME", nil, edifacttest.BigInvoice(120))
	var rej *Rejection
	if !errors.As(err, &rej) || rej.Rule != "quadratic" || !strings.Contains(err.Error(), "cost") {
		t.Fatalf("want the rule refused at its cost limit, got %v", err)
	}
}
