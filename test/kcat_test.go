package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Interop with a stock Kafka client: kcat (librdkafka) produces an
// interchange that the real `edihub bridge` binary moves to
// edi.ingest.<partner>, and kcat consumes a dead letter the bridge moved
// from edi.parse.dlq.schema, x-* and Spring headers included.
//
// The full form (kcat → Kafka → bridge → parse stage → PARSED) needs
// `serve` with the bridge wired in; this is the half that stands alone.
func TestKcatInterop(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (Debian: apt-get install -y kcat); skipping the Kafka interop test")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "edihub")
	build := exec.Command("go", "build", "-o", bin, "../cmd/edihub")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build edihub: %v\n%s", err, out)
	}

	// The hub side: a real embedded NATS with INGEST and DLQ.
	s := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: filepath.Join(dir, "nats")})
	nc, j, err := ejs.Connect(s.ClientURL(), "kcat-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	for _, sc := range []js.StreamConfig{
		{Name: "INGEST", Subjects: []string{"edi.ingest.*"}, SubjectTransform: &js.SubjectTransformConfig{
			Source: "edi.ingest.*", Destination: "edi.ingest.{{partition(8,1)}}.{{wildcard(1)}}"}},
		{Name: "DLQ", Subjects: []string{"edi.parse.dlq.>"}},
		{Name: "POISON", Subjects: []string{"edi.poison.>"}},
	} {
		if _, err := ejs.EnsureStream(ctx, j, sc); err != nil {
			t.Fatal(err)
		}
	}

	// The Kafka side: kfake listens on a 127.0.0.1 port that kcat dials.
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "partners.in", "edi.parse.dlq.schema"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker := kc.ListenAddrs()[0]

	var bridgeLog kcatLog
	cmd := exec.Command(bin, "bridge", "--server", s.ClientURL(), "--brokers", broker,
		"--in", "topic=partners.in", "--out", "filter=edi.parse.dlq.>,topic={{subject}}", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = &bridgeLog, &bridgeLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("edihub bridge exited with %v on SIGTERM\n%s", err, bridgeLog.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("edihub bridge did not stop on SIGTERM\n%s", bridgeLog.String())
		}
	})

	// kcat → Kafka → bridge → edi.ingest.ACME. A file argument makes kcat
	// send the whole file as one record, line breaks included.
	interchange := "UNA:+.? '\nUNB+UNOC:3+ACME:14+HUB:14+240101:1200+KCAT1'\nUNH+1+ORDERS:D:96A:UN'\nUNT+2+1'\nUNZ+1+KCAT1'\n"
	file := filepath.Join(dir, "orders.edi")
	if err := os.WriteFile(file, []byte(interchange), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(kcat, "-b", broker, "-P", "-t", "partners.in", "-k", "ACME",
		"-H", "x-correlation-id=corr-kcat-1", file).CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	var got *js.RawStreamMsg
	kcatWait(t, 20*time.Second, func() bool {
		st, err := j.Stream(ctx, "INGEST")
		if err != nil || st.CachedInfo().State.Msgs == 0 {
			return false
		}
		got, err = st.GetMsg(ctx, st.CachedInfo().State.FirstSeq)
		return err == nil
	}, "the kcat record in INGEST", &bridgeLog)
	if !strings.HasPrefix(got.Subject, "edi.ingest.") || !strings.HasSuffix(got.Subject, ".ACME") {
		t.Fatalf("subject %q, want edi.ingest.<partition>.ACME", got.Subject)
	}
	if string(got.Data) != interchange {
		t.Fatalf("payload changed on the way:\n%q\nwant\n%q", got.Data, interchange)
	}
	if got.Header.Get("x-correlation-id") != "corr-kcat-1" || got.Header.Get("x-kafka-key") != "ACME" ||
		!strings.HasPrefix(got.Header.Get("Nats-Msg-Id"), "kafka:kfake:") || !strings.HasSuffix(got.Header.Get("Nats-Msg-Id"), ":partners.in/0/0") {
		t.Fatalf("headers: %v", got.Header)
	}

	// edi.parse.dlq.schema → bridge → Kafka → kcat.
	dl := nats.NewMsg("edi.parse.dlq.schema")
	dl.Data = []byte("UNB+UNOC:3+ACME+HUB'BROKEN")
	dl.Header.Set("x-partner-id", "ACME")
	dl.Header.Set("x-correlation-id", "corr-dlq-1")
	dl.Header.Set("x-error-class", "permanent")
	dl.Header.Set("x-error-msg", "UNH missing")
	dl.Header.Set("x-original-topic", "edi.ingest.3.ACME")
	dl.Header.Set("x-original-seq", "12")
	if _, err := j.PublishMsg(ctx, dl); err != nil {
		t.Fatal(err)
	}
	var line string
	kcatWait(t, 20*time.Second, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(cctx, kcat, "-b", broker, "-C", "-t", "edi.parse.dlq.schema",
			"-e", "-o", "beginning", "-q", "-f", `%k %h %s\n`).Output()
		line = strings.TrimSpace(string(out))
		return err == nil && line != ""
	}, "the dead letter readable by kcat", &bridgeLog)
	t.Logf("kcat read: %q", line)
	if !strings.HasPrefix(line, "ACME ") || !strings.HasSuffix(line, " UNB+UNOC:3+ACME+HUB'BROKEN") {
		t.Fatalf("key or payload wrong: %q", line)
	}
	for _, want := range []string{
		"x-partner-id=ACME", "x-correlation-id=corr-dlq-1", "x-error-class=permanent", "x-error-msg=UNH missing",
		"x-original-topic=edi.ingest.3.ACME", "x-original-seq=12",
		"kafka_dlt-exception-fqcn=io.edihub.permanent.SchemaException", "kafka_dlt-exception-message=UNH missing",
		"kafka_dlt-exception-cause-fqcn=io.edihub.permanent.SchemaException",
		"kafka_dlt-exception-stacktrace=io.edihub.permanent.SchemaException: UNH missing",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("kcat output lacks %q", want)
		}
	}
	// It entered over NATS: no Kafka record to name (x-original-* says where).
	if strings.Contains(line, "kafka_dlt-original-") {
		t.Errorf("kafka_dlt-original-* on a dead letter that never was in Kafka: %q", line)
	}
}

// kcatWait polls cond every 50ms until it holds or timeout passes, then
// fails with the bridge's log.
func kcatWait(t *testing.T, timeout time.Duration, cond func() bool, what string, log *kcatLog) {
	t.Helper()
	jetstreamtest.CheckFor(t, timeout, 50*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("%s\nbridge log:\n%s", what, log.String())
	})
}

// kcatLog collects the bridge process's output; exec writes it from its
// own goroutine while the test may read it.
type kcatLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *kcatLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *kcatLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
