package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersionNamesTheBuild(t *testing.T) {
	out, errOut, code := runCmd(t, "version")
	if code != 0 || !strings.HasPrefix(out, "edihub ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %d %q %q", code, out, errOut)
	}
	out, _, code = runCmd(t, "version", "--json")
	var b buildInfo
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Go == "" || b.Modules["github.com/nats-io/nats.go"] == "" {
		t.Fatalf("version --json: %d %q", code, out)
	}
}

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
