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
