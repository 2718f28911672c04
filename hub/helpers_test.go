package hub

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
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
	stop := jetstreamtest.RunUntilStopped(t, "hub", 10*time.Second, h.Run, func() {
		nc.Close()
		store.Close()
	})
	jetstreamtest.Eventually(t, 10*time.Second, h.Ready)
	return &testEnv{t: t, url: url, nc: nc, js: j, store: store, hub: h, reg: reg, stop: stop}
}

// echoStage emits each payload to edi.parsed.<partner>.TEST.
func echoStage(name string, before func(m *Message) error) Stage {
	return Stage{Name: name, Handle: func(ctx context.Context, m *Message) error {
		if before != nil {
			if err := before(m); err != nil {
				return err
			}
		}
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), nats.Header{wire.HdrPartnerID: []string{m.Partner}}, m.Data)
		return nil
	}}
}

// fastConfig shortens every wait so tests never sleep for real minutes
// (hubtest.FastConfig is the same for tests outside the package, which
// this one cannot import: hubtest imports hub).
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

// testCounter sums a counter metric across its labels.
func testCounter(t *testing.T, env *testEnv, name string) float64 {
	t.Helper()
	return jetstreamtest.MetricSum(t, env.reg, name)
}
