package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// serve against a server with the stock max_payload (1 MiB) and the
// default parse.max_size (10 MiB), with the claim check (and so uploads)
// off, refuses to start, saying which setting to change, instead of
// taking interchanges it can never ingest.
func TestServeRefusesLimitsTheServerCannotTake(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	cfg := filepath.Join(t.TempDir(), "edihub.yaml")
	if err := os.WriteFile(cfg, []byte("hub:\n  claim_check: {enabled: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runServeCmd(t, "--config", cfg, "--nats-url", srv.URL, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(out, "parse.max_size is 10485760 bytes") || !strings.Contains(out, "raise max_payload") {
		t.Fatalf("exit %d: %s", code, out)
	}
}
