package bridge

import (
	"context"
	"errors"
	"fmt"
	"github.com/edihub/edihub/audit"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// hubNATS is a real embedded nats-server with the hub's streams.
type hubNATS struct {
	url string
	nc  *nats.Conn
	js  js.JetStream
}

// startNATS starts jetstream.StartServer on a free port in a temp dir and
// creates INGEST (with the partition transform), PARSED, DLQ and POISON.
func startNATS(t testing.TB, maxPayload int32) *hubNATS {
	t.Helper()
	s := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir(), MaxPayload: maxPayload})
	nc, j, err := jetstream.Connect(s.ClientURL(), "bridge-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	for _, sc := range []js.StreamConfig{
		{Name: "INGEST", Subjects: []string{"edi.ingest.*"}, SubjectTransform: &js.SubjectTransformConfig{
			Source: "edi.ingest.*", Destination: "edi.ingest.{{partition(8,1)}}.{{wildcard(1)}}"}},
		{Name: "PARSED", Subjects: []string{"edi.parsed.>"}},
		{Name: "DLQ", Subjects: []string{"edi.parse.dlq.>"}},
		{Name: "POISON", Subjects: []string{"edi.poison.>"}},
	} {
		sc.Storage = js.FileStorage
		if _, err := jetstream.EnsureStream(ctx, j, sc); err != nil {
			t.Fatal(err)
		}
	}
	return &hubNATS{url: s.ClientURL(), nc: nc, js: j}
}

// streamMsgs returns every message stored in stream, in stream order.
func (h *hubNATS) streamMsgs(t testing.TB, stream string) []*js.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	s, err := h.js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*js.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, js.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (h *hubNATS) count(t testing.TB, stream string) int {
	t.Helper()
	s, err := h.js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(info.State.Msgs)
}

// startKafka starts a one-broker kfake cluster with the given topics, each
// with three partitions.
func startKafka(t testing.TB, topics ...string) (*kfake.Cluster, []string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()
}

// kafkaClient is a plain franz-go client for a test's own producing.
func kafkaClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// topicReader reads a Kafka topic from the start, without a group, and
// keeps every record it saw.
type topicReader struct {
	mu   sync.Mutex
	recs []*kgo.Record
	stop func()
}

func readTopic(t testing.TB, brokers []string, topic string) *topicReader {
	t.Helper()
	cl := kafkaClient(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	tr := &topicReader{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			f := cl.PollFetches(ctx)
			tr.mu.Lock()
			tr.recs = append(tr.recs, f.Records()...)
			tr.mu.Unlock()
		}
	}()
	tr.stop = func() { cancel(); <-done }
	t.Cleanup(tr.stop)
	return tr
}

func (tr *topicReader) records() []*kgo.Record {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]*kgo.Record(nil), tr.recs...)
}

func (tr *topicReader) len() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.recs)
}

// running is a bridge started in the background.
type running struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error
}

// stop cancels the bridge and waits for Run to return.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("bridge Run: %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bridge did not stop within 30s")
	}
}

// testConfig returns a config with short timings for tests.
// testKeys is the key ring the test bridges sign and check x-kafka-mac
// with, as serve hands its audit key ring to the bridge.
var testKeys = func() *audit.Keyring {
	k, err := audit.NewKeyring([]byte("bridge test key, 32 bytes long!!"))
	if err != nil {
		panic(err)
	}
	return k
}()

func testConfig(brokers []string) *Config {
	return &Config{
		Keys:            testKeys,
		Brokers:         brokers,
		BackoffMin:      20 * time.Millisecond,
		BackoffMax:      300 * time.Millisecond,
		ProduceTimeout:  2 * time.Second,
		PublishTimeout:  2 * time.Second,
		ShutdownTimeout: 3 * time.Second,
		LagInterval:     100 * time.Millisecond,
		LagLogInterval:  time.Second,
	}
}

// testLogger writes to the test log only with -v (EDIHUB_TEST_LOG=1 forces it).
func testLogger(t testing.TB) zerolog.Logger {
	if testing.Verbose() || os.Getenv("EDIHUB_TEST_LOG") != "" {
		return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	}
	return zerolog.Nop()
}

func startBridge(t testing.TB, h *hubNATS, cfg *Config, reg prometheus.Registerer) *running {
	t.Helper()
	b, err := New(cfg, h.nc, h.js, testLogger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() { r.err = b.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
		}
	})
	return r
}

func header(rec *kgo.Record, key string) (string, bool) {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

func valueOf(i int) string { return fmt.Sprintf("rec-%05d", i) }

// metricValue reads one series from reg by name and label pairs.
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels ...string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

// logBuffer keeps a bridge's log lines for a test to read.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is how many log lines contain s.
func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startBridgeLogged is startBridge with the log kept in the returned buffer
// (and in the test log with -v).
func startBridgeLogged(t testing.TB, h *hubNATS, cfg *Config, reg prometheus.Registerer) (*running, *logBuffer) {
	t.Helper()
	lb := &logBuffer{}
	log := zerolog.New(zerolog.MultiLevelWriter(lb, testLogWriter(t))).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	b, err := New(cfg, h.nc, h.js, log, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() { r.err = b.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
		}
	})
	return r, lb
}

func testLogWriter(t testing.TB) io.Writer {
	if testing.Verbose() || os.Getenv("EDIHUB_TEST_LOG") != "" {
		return zerolog.NewTestWriter(t)
	}
	return io.Discard
}
