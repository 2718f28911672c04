package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// ublCorpus is ../shared/ubl from the repository (or a worktree one level
// deeper), as the ubl package's tests find it; the test skips without it.
func ublCorpus(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../shared/ubl", "../../../shared/ubl"} {
		if _, err := os.Stat(filepath.Join(d, "valid")); err == nil {
			return d
		}
	}
	t.Skip("../shared/ubl not found")
	return ""
}

// UBL through the real binary: `edihub send` of a valid invoice of the
// corpus is parsed to edi.parsed.<partner>.INVOICE; a failing one is
// dead-lettered under business with its rule id in x-rule and gets a
// rejecting MLR on edi.outbound.<partner>.MLR (the profile asks for
// errors); `dlq show` prints it one element a line with the failing
// element marked; `dlq edit` with a valid document and `dlq replay`
// (its dry run first) take it through the pipeline.
func TestUBLThroughServe(t *testing.T) {
	corpus := ublCorpus(t)
	valid := filepath.Join(corpus, "valid", "ConnectingEurope__eInvoicing-EN16931__ubl-tc434-example1.xml")
	credit := filepath.Join(corpus, "valid", "ConnectingEurope__eInvoicing-EN16931__ubl-tc434-creditnote1.xml")
	bad := filepath.Join(corpus, "invalid", "itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml")
	dir := t.TempDir()
	profiles := filepath.Join(dir, "partners")
	if err := os.Mkdir(profiles, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profiles, "einv.yaml"), []byte("id: EINV\nubl: {strictness: strict, profile: en16931}\nack: {mlr: errors}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHubConfig(t, "partners:\n  dir: "+profiles+"\n")
	_, j := jetstreamtest.Connect(t, h.url)
	send := func(file string) {
		t.Helper()
		if out, errOut, code := runCLI(t, 30*time.Second, "send", "--server", h.url, "--partner", "EINV", file); code != 0 {
			t.Fatalf("send %s: %d %s %s", file, code, out, errOut)
		}
	}
	send(valid) // INGEST 1: parsed
	send(bad)   // INGEST 2: business, BR-CO-15, MLR
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, j, "PARSED") == 1 && jetstreamtest.CountMsgs(t, j, "DLQ") == 1
	}, "one parsed invoice and one dead letter")
	parsed := jetstreamtest.StreamMsgs(t, j, "PARSED")[0]
	if parsed.Subject != "edi.parsed.EINV.INVOICE" || parsed.Header.Get(wire.HdrStandard) != wire.StandardUBL ||
		parsed.Header.Get(wire.HdrMessageID) != "12115118" || !strings.Contains(string(parsed.Data), `"BT-1"`) {
		t.Errorf("parsed: %s %v\n%.300s", parsed.Subject, parsed.Header, parsed.Data)
	}
	dl := jetstreamtest.StreamMsgs(t, j, "DLQ")[0]
	if dl.Subject != "edi.parse.dlq.business" || !strings.Contains(dl.Header.Get(wire.HdrRule), "BR-CO-15") ||
		!strings.HasPrefix(dl.Header.Get(wire.HdrRuleXPath), "/Invoice") || !strings.Contains(dl.Header.Get(wire.HdrErrorMsg), "BR-CO-15") {
		t.Errorf("dead letter: %s %v", dl.Subject, dl.Header)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, wire.DefaultOutboundStream) == 1 },
		"one MLR on OUTBOUND")
	mlr := jetstreamtest.StreamMsgs(t, j, wire.DefaultOutboundStream)[0]
	if mlr.Subject != "edi.outbound.EINV.MLR" || mlr.Header.Get(wire.HdrAckResult) != "rejected" || mlr.Header.Get(wire.HdrAckOrigin) != "INGEST:2" ||
		mlr.Header.Get(nats.MsgIdHdr) != wire.AckMsgID("INGEST:2", 0) ||
		!strings.Contains(string(mlr.Data), "BR-CO-15") || !strings.Contains(string(mlr.Data), ">RE<") {
		t.Errorf("MLR: %s %v\n%s", mlr.Subject, mlr.Header, mlr.Data)
	}

	dlqID := "DLQ:1"
	out, errOut, code := runCLI(t, 30*time.Second, "dlq", "show", "--server", h.url, "--data", h.dataDir, dlqID)
	if code != 0 || !strings.Contains(out, "/Invoice/cbc:ID") || !strings.Contains(out, "<- ") || !strings.Contains(out, "BR-CO-15") {
		t.Fatalf("dlq show: %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, 30*time.Second, "dlq", "edit", "--server", h.url, "--data", h.dataDir, dlqID, "--from-file", credit, "--reason", "sent again as the credit note"); code != 0 {
		t.Fatalf("dlq edit: %d %s %s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, 30*time.Second, "dlq", "replay", "--server", h.url, "--dry-run", dlqID)
	if code != 0 || !strings.Contains(out, "would be parsed") {
		t.Fatalf("dlq replay --dry-run of the edit: %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, 30*time.Second, "dlq", "replay", "--server", h.url, "--data", h.dataDir, dlqID); code != 0 {
		t.Fatalf("dlq replay: %d %s %s", code, out, errOut)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		for _, m := range jetstreamtest.StreamMsgs(t, j, "PARSED") {
			if m.Subject == "edi.parsed.EINV.CREDITNOTE" {
				return true
			}
		}
		return false
	}, "the edited credit note parsed after the replay")
}
