package main

import (
	"context"
	"strings"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// audit verify against an AUDIT stream made without DenyDelete, as an
// attacker with stream admin rights could leave it: a deleted event is
// named and the exit code is 1.
func TestAuditVerifyNamesTheMissingEvent(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir()})
	nc, j, err := ejs.Connect(srv.ClientURL(), "audit-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	s, err := j.CreateStream(ctx, js.StreamConfig{Name: "AUDIT", Subjects: []string{"edi.audit.>"}})
	if err != nil {
		t.Fatal(err)
	}
	a := audit.New(j, "AUDIT")
	for _, action := range []string{"show", "drop", "replay"} {
		if _, err := a.Append(ctx, audit.Event{Actor: "alice", Action: action, Reason: "\x1b[2Jsneaky"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	d := &dlqHub{url: srv.ClientURL()}
	out, _, code := d.cmd(t, "audit", "ls", "--since", "1h", "--limit", "2")
	if code != 0 || strings.Contains(out, "show") || !strings.Contains(out, "replay") || strings.Contains(out, "\x1b") ||
		!strings.Contains(out, `\x1B[2Jsneaky`) {
		t.Fatalf("audit ls: %d\n%q", code, out)
	}
	if out, _, code := d.cmd(t, "audit", "verify"); code != 0 || !strings.Contains(out, "3 events") {
		t.Fatalf("intact: %d %s", code, out)
	}
	if err := s.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := d.cmd(t, "audit", "verify")
	if code != 1 || !strings.Contains(errOut, "broken at event 2 (missing)") {
		t.Fatalf("deleted event 2: %d %s", code, errOut)
	}
	out, _, code = d.cmd(t, "audit", "verify", "--json")
	if code != 1 || !strings.Contains(out, `"kind":"missing"`) {
		t.Fatalf("verify --json: %d %s", code, out)
	}
	if _, _, code := d.cmd(t, "audit", "frob"); code != 2 {
		t.Fatalf("unknown subcommand: %d", code)
	}
}
