package test

import (
	"github.com/edihub/edihub/edifact/edifacttest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// natsCLI finds the nats CLI (natscli): on PATH or where `go install` puts it.
func natsCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nats"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "nats")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Skip("the nats CLI is not installed (go install github.com/nats-io/natscli/nats@v0.5.0); skipping")
	return ""
}

// Test 7: a stock NATS client works with the hub unchanged: the nats CLI
// publishes to edi.ingest.ACME and reads edi.poison.> and edi.parsed.>.
func TestNatsCLI(t *testing.T) {
	nats := natsCLI(t)
	h := startHub(t, "--drill")
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(nats, append([]string{"--server", h.url}, args...)...)
		cmd.Env = append(os.Environ(), "NATS_CONTEXT=", "HOME="+t.TempDir()) // no user contexts
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nats %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cli("pub", "edi.ingest.ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "CLI00001"))
	cli("pub", "edi.ingest.ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "CLI00002"), "-H", "x-drill:panic")

	var parsed, poison string
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		parsed = cli("sub", "edi.parsed.>", "--stream", "PARSED", "--all", "--count", "1", "--raw")
		return strings.Contains(parsed, "CLI00001")
	})
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		poison = cli("sub", "edi.poison.>", "--stream", "POISON", "--all", "--count", "1", "--headers-only")
		return strings.Contains(poison, "x-poison-cause")
	})
	for _, want := range []string{"x-poison-cause: panic", "x-original-topic: edi.ingest.ACME", "x-message-id: CLI00002", "x-attempts: 3"} {
		if !strings.Contains(poison, want) {
			t.Errorf("nats sub on POISON lacks %q:\n%s", want, poison)
		}
	}
}
