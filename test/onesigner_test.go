package test

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// runCLIIn runs the binary in dir with only env added to a clean
// environment (no audit key): an operator in another folder.
func runCLIIn(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runBinary(t, 60*time.Second, func(cmd *exec.Cmd) {
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=carol"}, env...)
	}, args...)
}

// One signer, through the real binary: a dlq command run in a folder
// without the audit key is refused with the fix, or, with an operator
// token, done by the hub through its API (which signs the event); the
// audit trail verifies all along. The replay reports its outcome.
func TestCLIWithoutKeyActsThroughTheHubOrRefuses(t *testing.T) {
	const tok = "oncall-token-0123456789abcdef"
	h := startHubConfig(t, "api:\n  tokens:\n    - name: oncall\n      token: "+tok+"\n      role: operator\n")
	apiURL := "http://" + h.httpAddr
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		resp, err := http.Get(apiURL + "/api/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}, "the hub's API answers")
	_, j := jetstreamtest.Connect(t, h.url)
	jetstreamtest.PublishIngest(t, j, "ACME", edifacttest.BadCount("S:14", "R:14", "B1"), nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "DLQ") == 1 })
	elsewhere := t.TempDir()
	fixed := elsewhere + "/fixed.edi"
	if err := os.WriteFile(fixed, []byte(edifacttest.Invoice("B1")), 0o600); err != nil {
		t.Fatal(err)
	}

	// Reading needs no key.
	if out, errOut, code := runCLIIn(t, elsewhere, nil, "dlq", "ls", "--server", h.url); code != 0 {
		t.Fatalf("dlq ls elsewhere: %d %s %s", code, out, errOut)
	}
	// Acting without key or token: refused with the exact fix, nothing written.
	before := jetstreamtest.CountMsgs(t, j, "AUDIT")
	for _, args := range [][]string{{"dlq", "drop", "DLQ:1", "--reason", "x"}, {"dlq", "show", "DLQ:1"}, {"dlq", "edit", "DLQ:1", "--from-file", fixed}} {
		_, errOut, code := runCLIIn(t, elsewhere, nil, append(args, "--server", h.url)...)
		if code != 2 || !strings.Contains(errOut, "--data DIR") || !strings.Contains(errOut, "EDIHUB_AUDIT_KEY") {
			t.Fatalf("%v without a key: %d %s", args, code, errOut)
		}
		if args[1] != "edit" && !strings.Contains(errOut, "EDIHUB_TOKEN") {
			t.Fatalf("%v: the token is not offered: %s", args, errOut)
		}
	}
	if n := jetstreamtest.CountMsgs(t, j, "AUDIT"); n != before {
		t.Fatalf("a refused command wrote %d audit events", n-before)
	}

	// With an operator token the hub does it, and reports the outcome.
	env := []string{"EDIHUB_TOKEN=" + tok, "EDIHUB_API=" + apiURL}
	out, errOut, code := runCLIIn(t, elsewhere, env, "dlq", "replay", "DLQ:1", "--server", h.url, "--outcome", "20s")
	if code != 0 || !strings.Contains(out, "DLQ:1 → edi.ingest.ACME: replayed as INGEST:2 — dead-lettered again as DLQ:2 (schema)") ||
		!strings.Contains(out, "1 dead-lettered again") {
		t.Fatalf("replay through the API: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLIIn(t, elsewhere, env, "dlq", "show", "DLQ:2", "--server", h.url)
	if code != 0 || !strings.Contains(out, "x-replayed-from:") || !strings.Contains(out, "DLQ:1") {
		t.Fatalf("show of the new dead letter: %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = runCLIIn(t, elsewhere, env, "dlq", "show", "DLQ:1", "--server", h.url)
	// (the API escapes its error text: the arrow may arrive as \xE2\x86\x92)
	if code != 1 || !strings.Contains(errOut, "DLQ:1 was replayed as INGEST:2") || !strings.Contains(errOut, "DLQ:2 (dead-lettered again, cause schema)") {
		t.Fatalf("show of the replayed message: %d %s", code, errOut)
	}
	out, errOut, code = runCLIIn(t, elsewhere, env, "dlq", "park", "DLQ:2", "DLQ:99", "--server", h.url)
	if code != 1 || !strings.Contains(out, "PARKING:1") || !strings.Contains(out, "DLQ:99") {
		t.Fatalf("park through the API (one there, one not): %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, 30*time.Second, "audit", "verify", "--server", h.url, "--data", h.dataDir)
	if code != 0 {
		t.Fatalf("audit verify: %d\n%s\n%s", code, out, errOut)
	}
	out, _, _ = runCLI(t, 30*time.Second, "audit", "ls", "--server", h.url, "--action", "replay")
	if !strings.Contains(out, "oncall") {
		t.Fatalf("the replay is not the token's:\n%s", out)
	}
}
