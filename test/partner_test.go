package test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// Partner profiles through the real binary: `serve` with a partners.dir,
// `send --sign-key`, every cause in edi.parse.dlq.<cause> with its
// headers, acknowledgements on OUTBOUND, and a profile added by SIGHUP
// without a restart (a bad file first: the profiles in force stay).
func TestPartnersThroughServe(t *testing.T) {
	dir := t.TempDir()
	profiles := filepath.Join(dir, "partners")
	if err := os.Mkdir(profiles, 0o700); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "acme.key")
	if out, errOut, code := runCLI(t, 30*time.Second, "partner", "keygen", "--id", "acme-1", "--out", keyFile); code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errOut)
	}
	key, err := partner.ReadSigningKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(profiles, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("acme.yaml", `id: ACME
senders: ["4012345000009:14"]
messages: ["INVOIC D:96A"]
test: production
signature: {required: true, keys: {acme-1: "`+key.PublicKey()+`"}}
ack: {contrl: all, aperak: true}
`)
	h := startHubConfig(t, "partners:\n  dir: "+profiles+"\n")
	_, j := jetstreamtest.Connect(t, h.url)

	ok, err := os.ReadFile(filepath.Join("..", "partner", "testdata", "invoic_ok.edi"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"ok.edi":    string(ok),
		"test.edi":  strings.Replace(string(ok), "++INVOIC'", "++INVOIC++++1'", 1),
		"total.edi": strings.Replace(string(ok), "MOA+79:132.80", "MOA+79:140.00", 1),
		"dir.edi":   strings.Replace(string(ok), "QTY+47:10:PCE", "QTY+47:1O:PCE", 1),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	send := func(partnerID, file string, signed bool) {
		t.Helper()
		args := []string{"send", "--server", h.url, "--partner", partnerID}
		if signed {
			args = append(args, "--sign-key", keyFile)
		}
		if out, errOut, code := runCLI(t, 30*time.Second, append(args, filepath.Join(dir, file))...); code != 0 {
			t.Fatalf("send %s: %d %s %s", file, code, out, errOut)
		}
	}
	send("ACME", "ok.edi", true)    // 1 accepted
	send("ACME", "ok.edi", false)   // 2 signature-invalid
	send("NOBODY", "ok.edi", false) // 3 partner-rejected: no profile
	send("ACME", "test.edi", true)  // 4 partner-rejected: test interchange
	send("ACME", "total.edi", true) // 5 business
	send("ACME", "dir.edi", true)   // 6 schema: directory validation
	want := map[string][2]string{   // INGEST seq → subject, x-reject-reason
		"2": {"edi.parse.dlq.signature-invalid", wire.ReasonSignatureMissing},
		"3": {"edi.parse.dlq.partner-rejected", wire.ReasonUnknownPartner},
		"4": {"edi.parse.dlq.partner-rejected", wire.ReasonTestNotAgreed},
		"5": {"edi.parse.dlq.business", wire.ReasonRuleFailed},
		"6": {"edi.parse.dlq.schema", wire.ReasonDirectory},
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, j, "DLQ") == len(want) && jetstreamtest.CountMsgs(t, j, "PARSED") == 1
	}, "five refusals and one parsed message")
	for _, m := range jetstreamtest.StreamMsgs(t, j, "DLQ") {
		seq := m.Header.Get(wire.HdrOriginalSeq)
		w := want[seq]
		if m.Subject != w[0] || m.Header.Get(wire.HdrRejectReason) != w[1] || m.Header.Get(wire.HdrErrorMsg) == "" {
			t.Errorf("INGEST %s: %s reason %q (%s), want %s %s", seq, m.Subject, m.Header.Get(wire.HdrRejectReason),
				m.Header.Get(wire.HdrErrorMsg), w[0], w[1])
		}
		if seq == "5" && m.Header.Get(wire.HdrRule) != partner.RuleInvoicTotal {
			t.Errorf("business refusal without its rule: %v", m.Header)
		}
		if seq == "6" && !strings.Contains(m.Header.Get(wire.HdrErrorMsg), "code 37") {
			t.Errorf("directory refusal without its 0085 code: %q", m.Header.Get(wire.HdrErrorMsg))
		}
	}
	// CONTRL accepted for 1 and for 5 (its syntax was right), rejected for 2, 4, 6; APERAK for 5
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, wire.DefaultOutboundStream) == 6 },
		"six acknowledgements on OUTBOUND")
	var contrl6 string
	for _, m := range jetstreamtest.StreamMsgs(t, j, wire.DefaultOutboundStream) {
		if m.Header.Get(wire.HdrAckOrigin) == "INGEST:6" {
			contrl6 = string(m.Data)
		}
	}
	if !strings.Contains(contrl6, "UCS+8'UCD+37+2:2'") {
		t.Errorf("the CONTRL of the directory refusal does not name segment 8 element 2:2 code 37: %s", contrl6)
	}

	// SIGHUP: a bad file keeps the profiles in force, a good one adds BETA
	write("beta.yaml", "id: BETA\nmesages: []\n")
	h.mu.Lock()
	_ = h.cmd.Process.Signal(syscall.SIGHUP)
	h.mu.Unlock()
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return strings.Contains(h.log.String(), "partner profiles not reloaded")
	}, "the bad profile logged")
	write("beta.yaml", "id: BETA\n")
	h.mu.Lock()
	_ = h.cmd.Process.Signal(syscall.SIGHUP)
	h.mu.Unlock()
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return strings.Contains(h.log.String(), "partner profiles reloaded")
	}, "the good profile loaded")
	if _, err := j.PublishMsg(t.Context(), &nats.Msg{Subject: wire.IngestSubject("BETA"), Data: ok}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "PARSED") == 2 },
		"BETA's interchange parsed after the reload, without a restart")
	if n := h.startCount(); n != 1 {
		t.Errorf("serve started %d times", n)
	}
}
