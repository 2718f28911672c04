package hub

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
)

// testEnv is a real embedded server, a real bbolt file and a hub.
type testEnv struct {
	t     *testing.T
	url   string
	nc    *nats.Conn
	js    js.JetStream
	store *counter.Store
	hub   *Hub
	reg   *prometheus.Registry
	stop  func()
}

func runServer(t *testing.T) string {
	t.Helper()
	s, err := ejs.StartServer(&ejs.ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// fastConfig shortens every wait so tests never sleep for real minutes.
func fastConfig() Config {
	c := Config{Partitions: 4}
	c.Attempts.Threshold = 3
	c.Attempts.Deadline = 2 * time.Second
	c.Attempts.AckWait = time.Second
	c.Attempts.BackoffBase = 20 * time.Millisecond
	c.Attempts.BackoffMax = 100 * time.Millisecond
	c.DuplicateWindow = time.Minute
	c.Alerts.Interval = time.Second
	c.LeakProbe.Interval = 200 * time.Millisecond
	return c
}

// startHub runs a hub on url with the given stages until the test ends or
// stop is called.
func startHub(t *testing.T, url string, storePath string, cfg Config, stages []Stage, mod func(*Options)) *testEnv {
	t.Helper()
	nc, j, err := ejs.Connect(url, "hub-test")
	if err != nil {
		t.Fatal(err)
	}
	if storePath == "" {
		storePath = filepath.Join(t.TempDir(), "counter.db")
	}
	store, err := counter.Open(storePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o := Options{Config: cfg, Conn: nc, Store: store, Stages: stages, Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), Registry: reg}
	if mod != nil {
		mod(&o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := runUntilStopped(t, "hub", 10*time.Second, h.Run, func() {
		nc.Close()
		store.Close()
	})
	eventually(t, 10*time.Second, h.Ready)
	return &testEnv{t: t, url: url, nc: nc, js: j, store: store, hub: h, reg: reg, stop: stop}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func publish(t *testing.T, j js.JetStream, partner string, data string, hdr nats.Header) uint64 {
	t.Helper()
	ack, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: IngestPublishSubject(partner), Data: []byte(data), Header: hdr})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// streamMsgs returns every message stored in a stream, in order.
func streamMsgs(t *testing.T, j js.JetStream, stream string) []*js.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	s, err := j.Stream(ctx, stream)
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
		if err != nil {
			continue // deleted or expired
		}
		out = append(out, m)
	}
	return out
}

func countMsgs(t *testing.T, j js.JetStream, stream string) int { return len(streamMsgs(t, j, stream)) }

// partnersInDistinctPartitions finds n partner names in n partitions.
func partnersInDistinctPartitions(n, partitions int) []string {
	seen := map[int]bool{}
	var out []string
	for i := 0; len(out) < n; i++ {
		p := string(rune('A'+i%26)) + "P" + string(rune('0'+i/26))
		if part := PartitionOf(p, partitions); !seen[part] {
			seen[part] = true
			out = append(out, p)
		}
	}
	return out
}

// echoStage emits each payload to edi.parsed.<partner>.TEST.
func echoStage(name string, before func(m *Message) error) Stage {
	return Stage{Name: name, Handle: func(ctx context.Context, m *Message) error {
		if before != nil {
			if err := before(m); err != nil {
				return err
			}
		}
		m.Emit(ParsedSubject(m.Partner, "TEST"), nats.Header{HdrPartnerID: []string{m.Partner}}, m.Data)
		return nil
	}}
}

// testCounter sums a counter metric across its labels.
func testCounter(t *testing.T, env *testEnv, name string) float64 {
	t.Helper()
	mfs, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
	}
	return sum
}

// runUntilStopped runs run in the background until the returned stop (also
// called at cleanup) cancels it and waits up to grace; then after runs.
func runUntilStopped(t testing.TB, name string, grace time.Duration, run func(context.Context) error, after func()) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s run: %v", name, err)
				}
			case <-time.After(grace):
				t.Errorf("%s did not stop in time", name)
			}
			after()
		})
	}
	t.Cleanup(stop)
	return stop
}
