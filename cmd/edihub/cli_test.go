package main

import (
	"context"
	"encoding/json"
	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/nats-io/nats.go"
)

// Under --json a failure is a JSON document on stdout too, with the exit
// code the command returns (the message also goes to stderr).
func TestJSONErrorsAreDocuments(t *testing.T) {
	out, errOut, code := runCmd(t, "dlq", "ls", "--json", "--server", "nats://127.0.0.1:1")
	var doc struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if code != exitUsage || errOut == "" || json.Unmarshal([]byte(out), &doc) != nil || doc.Error == "" || doc.ExitCode != code {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, _, _ := runCmd(t, "dlq", "ls", "--server", "nats://127.0.0.1:1"); out != "" {
		t.Fatalf("without --json stdout stays empty: %q", out)
	}
}

// Exit codes agree: a file that is not there is a usage mistake (2) for
// send as for edifact check, and every command that needs the hub says how
// to start it.
func TestExitCodesAgree(t *testing.T) {
	for _, args := range [][]string{
		{"send", "--partner", "ACME", "--server", "nats://127.0.0.1:1", "/nonexistent/a.edi"},
		{"edifact", "check", "/nonexistent/a.edi"},
	} {
		if out, errOut, code := runCmd(t, args...); code != exitUsage || !strings.Contains(out+errOut, "/nonexistent/a.edi") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"poison", "ls", "--server", "nats://127.0.0.1:1"},
		{"dlq", "ls", "--server", "nats://127.0.0.1:1"},
		{"send", "--partner", "ACME", "--server", "nats://127.0.0.1:1", "-"},
	} {
		if _, errOut, code := runCmd(t, args...); code != exitUsage || !strings.Contains(errOut, "is the hub running?") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// edifact json --as-parsed prints exactly the payloads the parse stage
// publishes, one array element per message.
func TestEdifactJSONAsParsed(t *testing.T) {
	data := "UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'UNT+3+1'UNH+2+ORDERS:D:96A:UN'BGM+220+2+9'UNT+3+2'UNZ+2+R1'"
	code, out, errOut := runEdifactCmd(t, data, "json", "--as-parsed", "-")
	var msgs []json.RawMessage
	if code != exitOK || json.Unmarshal([]byte(out), &msgs) != nil || len(msgs) != 2 {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
	m := &hub.Message{Partner: "ACME", Stream: "INGEST", Seq: 1, Header: nats.Header{}, Data: []byte(data)}
	if err := parse.Stage(parse.Config{}, nil).Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	for i, o := range m.Outputs() {
		if string(o.Data) != string(msgs[i]) {
			t.Fatalf("message %d:\n printed %s\npublished %s", i+1, msgs[i], o.Data)
		}
	}
}

// poison's help reads once and exits 0; a missing subcommand is exit 2.
func TestPoisonHelp(t *testing.T) {
	for _, args := range [][]string{{"poison", "-h"}, {"poison", "ticket", "--help"}, {"poison", "show", "-h"}} {
		_, errOut, code := runCmd(t, args...)
		if code != exitOK || !strings.Contains(errOut, "Usage: edihub poison") || strings.Contains(errOut, "ls ls") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	if _, _, code := runCmd(t, "poison"); code != exitUsage {
		t.Errorf("poison without a subcommand: exit %d", code)
	}
}

// send --json prints one document for the command, like every --json.
func TestSendJSONIsOneDocument(t *testing.T) {
	d := startDLQHub(t)
	f := filepath.Join(t.TempDir(), "a.edi")
	if err := os.WriteFile(f, []byte(edifacttest.Invoice("J1")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "send", "--json", "--server", d.url, "--partner", "ACME", f, f)
	var doc struct {
		Files []client.Result `json:"files"`
		Sent  int             `json:"sent"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || doc.Sent != 2 || len(doc.Files) != 2 || !doc.Files[1].OK {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
}
