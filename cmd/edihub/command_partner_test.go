package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// partnerConfig writes a config whose partners.dir holds one profile.
func partnerConfig(t *testing.T, profile string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "partners"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "partners", "acme.yaml"), []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "edihub.yaml")
	if err := os.WriteFile(cfg, []byte("partners:\n  dir: "+filepath.Join(dir, "partners")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const invoice = "../../partner/testdata/invoic_ok.edi"

// partner check decides offline as the parse stage would, prints the
// acknowledgement, and exits 1 for a refusal; keygen and send --sign-key
// make a signature that check accepts.
func TestPartnerCheckAndKeygen(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "acme.key")
	out, errOut, code := runCmd(t, "partner", "keygen", "--id", "acme-1", "--out", keyFile, "--json")
	var kg struct {
		PublicKey string `json:"public_key"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &kg) != nil || kg.PublicKey == "" {
		t.Fatalf("keygen: exit %d %q %q", code, out, errOut)
	}
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	cfg := partnerConfig(t, "id: ACME\nmessages: [\"INVOIC D:96A\"]\ntest: production\n"+
		"signature: {required: true, keys: {acme-1: \""+kg.PublicKey+"\"}}\nack: {contrl: errors}\n")

	out, _, code = runCmd(t, "partner", "ls", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "ACME") || !strings.Contains(out, "required") {
		t.Fatalf("ls: exit %d %q", code, out)
	}
	out, _, code = runCmd(t, "partner", "check", invoice, "--partner", "ACME", "--config", cfg)
	if code != exitFailed || !strings.Contains(out, "signature-invalid") || !strings.Contains(out, "CONTRL (rejected)") ||
		!strings.Contains(out, "UCI+INV0042") {
		t.Fatalf("unsigned: exit %d %q", code, out)
	}
	out, _, code = runCmd(t, "partner", "check", invoice, "--partner", "ACME", "--config", cfg, "--sign-key", keyFile, "--json")
	var d struct {
		Decision partner.Decision `json:"decision"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || !d.Decision.Accepted {
		t.Fatalf("signed: exit %d %q", code, out)
	}
	out, _, code = runCmd(t, "partner", "check", invoice, "--partner", "NOBODY", "--config", cfg, "--json")
	if code != exitFailed || json.Unmarshal([]byte(out), &d) != nil || d.Decision.Reason != wire.ReasonUnknownPartner {
		t.Fatalf("unknown partner: exit %d %q", code, out)
	}
	if _, errOut, code := runCmd(t, "partner", "keygen", "--id", "acme-1", "--out", keyFile); code != exitUsage || !strings.Contains(errOut, "exists") {
		t.Fatalf("keygen overwrote a key: exit %d %q", code, errOut)
	}
	bad := partnerConfig(t, "id: ACME\nack: {contrl: sometimes}\n")
	if _, errOut, code := runCmd(t, "partner", "ls", "--config", bad); code != exitFailed || !strings.Contains(errOut, "contrl") {
		t.Fatalf("a bad profile: exit %d %q", code, errOut)
	}
}

// send --sign-key signs what it publishes: the hub's parse stage, with the
// partner's profile requiring that key, accepts it.
func TestSendSignKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "k.key")
	if out, errOut, code := runCmd(t, "partner", "keygen", "--id", "k1", "--out", keyFile); code != exitOK {
		t.Fatalf("keygen: %d %q %q", code, out, errOut)
	}
	k, err := partner.ReadSigningKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	a := startApp(t, nil, nil)
	nc, _ := jetstreamtest.Connect(t, a.NATSURL())
	sub, err := nc.SubscribeSync(wire.IngestWildcard)
	if err != nil {
		t.Fatal(err)
	}
	// The server must have the subscription before send publishes from
	// its own connection, or the message passes by (seen under load).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCmd(t, "send", "--server", a.NATSURL(), "--partner", "ACME", "--sign-key", keyFile, invoice); code != exitOK {
		t.Fatalf("send: %d %q %q", code, out, errOut)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h := nats.Header{}
	ts, _ := strconv.ParseInt(m.Header.Get(wire.HdrSignatureTime), 10, 64)
	k.SignAt(h, "ACME", m.Data, time.Unix(ts, 0))
	if m.Header.Get(wire.HdrSignature) != h.Get(wire.HdrSignature) || m.Header.Get(wire.HdrSignatureKey) != "k1" {
		t.Fatalf("the published message is not signed: %v", m.Header)
	}
	if _, errOut, code := runCmd(t, "send", "--server", a.NATSURL(), "--partner", "ACME", "--sign-key", "/nonexistent/k", invoice); code != exitUsage || !strings.Contains(errOut, "keygen") {
		t.Fatalf("a missing key file: %d %q", code, errOut)
	}
}

// partner check decides a UBL document as the stage does: its rule ids and
// the MLR the profile asks for.
func TestPartnerCheckUBL(t *testing.T) {
	var corpus string
	for _, d := range []string{"../../../shared/ubl", "../../../../shared/ubl"} {
		if _, err := os.Stat(filepath.Join(d, "valid")); err == nil {
			corpus = d
		}
	}
	if corpus == "" {
		t.Skip("../shared/ubl not found")
	}
	cfg := partnerConfig(t, "id: ACME\nack: {mlr: errors}\n")
	valid := filepath.Join(corpus, "valid", "ConnectingEurope__eInvoicing-EN16931__ubl-tc434-example1.xml")
	bad := filepath.Join(corpus, "invalid", "itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml")
	if out, errOut, code := runCmd(t, "partner", "check", valid, "--partner", "ACME", "--config", cfg); code != exitOK || !strings.Contains(out, "accepted") {
		t.Fatalf("valid: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := runCmd(t, "partner", "check", bad, "--partner", "ACME", "--config", cfg)
	if code != exitFailed || !strings.Contains(out, "edi.parse.dlq.business") || !strings.Contains(out, "rule    BR-CO-15") ||
		!strings.Contains(out, "acknowledgement MLR (rejected) → edi.outbound.ACME.MLR") {
		t.Fatalf("BR-CO-15: %d\n%s\n%s", code, out, errOut)
	}
}
