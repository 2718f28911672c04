package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// syncBuffer is a bytes.Buffer safe for the command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runBridgeCmd(ctx context.Context, args ...string) (int, string) {
	var errb syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &errb, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(ctx, e, append([]string{"bridge"}, args...))
	return code, errb.String()
}

func TestBridgeCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no routes"},
		{[]string{"--brokers", "127.0.0.1:9092", "--in", "subject=x"}, "topic= is required"},
		{[]string{"--brokers", "127.0.0.1:9092", "--out", "filter=edi..x"}, "not a subject filter"},
		{[]string{"--in", "topic=t"}, "no Kafka brokers"},
		{[]string{"--brokers", "127.0.0.1:9092", "--in", "topic=t", "extra"}, "unexpected arguments"},
		{[]string{"--config", "/does/not/exist.yaml"}, "read config"},
	} {
		code, stderr := runBridgeCmd(context.Background(), tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stderr := runBridgeCmd(context.Background(), "--server", "nats://127.0.0.1:1", "--brokers", "127.0.0.1:9092", "--in", "topic=t")
	if code != exitUsage || !strings.Contains(stderr, "is the hub running") {
		t.Errorf("unreachable hub: exit %d, %q", code, stderr)
	}
}

func TestBridgeConfigSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edihub.yaml")
	mustWrite(t, path, `
data_dir: data
hub:
  whatever: serve checks this, not the bridge
bridge:
  brokers: [k1:9092]
  inbound:
    - topic: partners.in
  outbound:
    - filter: edi.parse.dlq.>
`)
	cfg, err := bridgeConfig(path, "k2:9092,k3:9092", []string{"topic=more.in"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Brokers, ",") != "k2:9092,k3:9092" || len(cfg.Inbound) != 2 || len(cfg.Outbound) != 1 {
		t.Fatalf("%+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, path, "bridge:\n  brokerz: [k1:9092]\n")
	if _, err := bridgeConfig(path, "", nil, nil); err == nil || !strings.Contains(err.Error(), "brokerz") {
		t.Fatalf("misspelt key: %v", err)
	}
}

// `edihub bridge --in` moves a Kafka record to edi.ingest.<partner> and
// exits 0 on cancel.
func TestBridgeCommandMovesRecords(t *testing.T) {
	s := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir()})
	nc, j, err := ejs.Connect(s.ClientURL(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST", Subjects: []string{"edi.ingest.*"}}); err != nil {
		t.Fatal(err)
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "partners.in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "partners.in", Key: []byte("ACME"), Value: []byte("UNB+...")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stderr := runBridgeCmd(rctx, "--server", s.ClientURL(), "--brokers", kc.ListenAddrs()[0], "--in", "topic=partners.in", "--log-level", "warn")
		done <- result{code, stderr}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := j.Stream(ctx, "INGEST")
		if err == nil && st.CachedInfo().State.Msgs == 1 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("record not in INGEST: %+v", <-done)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m, err := mustStream(t, j).GetLastMsgForSubject(ctx, "edi.ingest.ACME")
	if err != nil || string(m.Data) != "UNB+..." {
		t.Fatalf("%v %v", m, err)
	}
	cancel()
	if r := <-done; r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

func mustStream(t *testing.T, j js.JetStream) js.Stream {
	t.Helper()
	st, err := j.Stream(context.Background(), "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A misspelt key in the bridge: section is reported with its line in the
// file, not its line within the section.
func TestBridgeConfigErrorLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edihub.yaml")
	yml := "# hub config\nnats:\n  url: nats://127.0.0.1:4222\nledger:\n  path: x\n\nbridge:\n  brokers: [127.0.0.1:9092]\n  inbound:\n    - topic: partners.in\n      partner_form: key\n"
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr := runBridgeCmd(context.Background(), "--config", path)
	if code != exitUsage || !strings.Contains(stderr, "line 11") || !strings.Contains(stderr, "partner_form") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// configs/bridge.yaml, the production example, reads and validates.
func TestBridgeExampleConfig(t *testing.T) {
	cfg, err := readBridgeSection("../../configs/bridge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Security.SASL.Mechanism != "SCRAM-SHA-512" || len(cfg.Inbound) != 2 || len(cfg.Outbound) != 3 {
		t.Fatalf("%+v", cfg)
	}
}
