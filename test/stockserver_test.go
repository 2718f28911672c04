package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// startStockNATS runs one nats-server process with its stock
// configuration: JetStream, and no max_payload (1 MiB).
func startStockNATS(t *testing.T) *natsNode {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.conf")
	port := freePort(t)
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listen: 127.0.0.1:%d\njetstream { store_dir: %q }\n", port, filepath.Join(dir, "js")), 0o600); err != nil {
		t.Fatal(err)
	}
	n := &natsNode{t: t, bin: natsServerBinary(t), name: "stock", conf: conf, url: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	n.start()
	t.Cleanup(n.stop)
	jetstreamtest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		nc, err := nats.Connect(n.url)
		if err == nil {
			nc.Close()
		}
		return err
	})
	return n
}

// tinyInvoic is a valid INVOIC of about size bytes of 6-byte segments,
// whose JSON view is 5.5 times as large.
func tinyInvoic(ref string, size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "UNB+UNOA:3+SENDER:14+RECEIVER:14+240315:0930+%s++INVOIC'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'", ref)
	n := 0
	for b.Len() < size-60 {
		b.WriteString("LIN+1'")
		n++
	}
	fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+%s'", n+3, ref)
	return b.Bytes()
}

// The real binary on a real nats-server with its default configuration
// (max_payload 1 MiB): serve with the default hub.edifact.max_size
// (10 MiB) and the claim check (so uploads) off refuses to start and
// names the setting; with a max_size the
// server takes and the claim check off, a 480 KB interchange whose view
// (2.6 MB) can never be stored is dead-lettered once with the reason,
// nothing retries it, and the partner's next interchange is parsed.
func TestStockServerLimits(t *testing.T) {
	n := startStockNATS(t)
	off := filepath.Join(t.TempDir(), "edihub.yaml")
	if err := os.WriteFile(off, []byte("hub:\n  claim_check: {enabled: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, 60*time.Second, "serve", "--config", off, "--nats-url", n.url, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "max_size is 10485760 bytes") || !strings.Contains(stderr, "raise max_payload") {
		t.Fatalf("serve with 10 MiB on a stock server: exit %d: %s", code, stderr)
	}

	// one partition: the next interchange waits behind the big one
	startClusterHubConfig(t, []*natsNode{n}, "hub:\n  partitions: 1\n  claim_check: {enabled: false}\n  edifact:\n    max_size: 1000000\nsandbox:\n  enabled: false\n")
	_, j := jetstreamtest.Connect(t, n.url)
	big := tinyInvoic("BIG1", 480<<10)
	jetstreamtest.PublishIngest(t, j, "ACME", string(big), nil)
	jetstreamtest.PublishIngest(t, j, "ACME", string(tinyInvoic("NEXT1", 2000)), nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if d, p := jetstreamtest.CountMsgs(t, j, "DLQ"), jetstreamtest.CountMsgs(t, j, "PARSED"); d != 1 || p != 1 {
			return fmt.Errorf("DLQ %d, PARSED %d", d, p)
		}
		return nil
	})
	dl := jetstreamtest.StreamMsgs(t, j, "DLQ")[0]
	if dl.Subject != "edi.parse.dlq.unknown" || !strings.Contains(dl.Header.Get("x-error-msg"), "max_payload") || !bytes.Equal(dl.Data, big) {
		t.Fatalf("dead letter on %s (%d bytes): %q", dl.Subject, len(dl.Data), dl.Header.Get("x-error-msg"))
	}
	if got := jetstreamtest.StreamMsgs(t, j, "PARSED")[0].Header.Get("x-message-id"); got != "NEXT1" {
		t.Fatalf("parsed %q, want the next interchange NEXT1", got)
	}
}
