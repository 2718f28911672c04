package test

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/twmb/franz-go/pkg/kfake"
)

// The full form of the Kafka interop: kcat produces an interchange into
// Kafka, `edihub serve` with a bridge: section takes it to INGEST, the parse
// stage puts it into PARSED; a broken one lands in the schema DLQ, which the
// bridge routes out to Kafka, where kcat reads it with its headers.
func TestKcatThroughServe(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (Debian: apt-get install -y kcat); skipping the Kafka interop test")
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "partners.in", "edi.parse.dlq.schema"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker := kc.ListenAddrs()[0]
	h := startHubConfig(t, fmt.Sprintf(`
bridge:
  brokers: [%q]
  inbound:
    - topic: partners.in
  outbound:
    - filter: edi.parse.dlq.>
      topic: "{{subject}}"
`, broker))
	_, j := jetstreamtest.Connect(t, h.url)

	produce := func(key, payload string) {
		t.Helper()
		cmd := exec.Command(kcat, "-b", broker, "-P", "-t", "partners.in", "-k", key, "-H", "x-correlation-id=kcat-"+key)
		cmd.Stdin = strings.NewReader(payload)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat produce: %v\n%s", err, out)
		}
	}
	produce("ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "KCAT0001"))
	produce("ACME", "UNB+UNOC:3+S+R+261130:1200+BROKEN1'UNH+1+INVOIC:D:96A:UN'UNZ+1+BROKEN1'")

	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		s, err := j.Stream(context.Background(), "PARSED")
		if err != nil {
			return false
		}
		m, err := s.GetLastMsgForSubject(context.Background(), "edi.parsed.ACME.INVOIC")
		return err == nil && m.Header.Get("x-message-id") == "KCAT0001" && m.Header.Get("x-correlation-id") == "kcat-ACME"
	})

	var out string
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		cmd := exec.Command(kcat, "-b", broker, "-C", "-t", "edi.parse.dlq.schema", "-e", "-o", "beginning", "-f", "%k|%h|%s\n")
		b, err := cmd.Output()
		out = string(b)
		return err == nil && strings.Contains(out, "BROKEN1")
	})
	for _, want := range []string{"x-error-cause=schema", "x-original-topic=edi.ingest.ACME", "x-partner-id=ACME", "kafka_dlt-original-topic", "x-error-msg="} {
		if !strings.Contains(out, want) {
			t.Errorf("kcat output lacks %q:\n%s", want, out)
		}
	}
}
