package main

import (
	"encoding/json"
	"strings"
	"testing"
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
