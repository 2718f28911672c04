package forensics

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/audit"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// provisionPoison creates the POISON and AUDIT streams as the hub would,
// for tests that run the worker without a hub.
func provisionPoison(t testing.TB, j js.JetStream) {
	t.Helper()
	ctx := context.Background()
	for _, sc := range []js.StreamConfig{
		{Name: "POISON", Subjects: []string{"edi.poison.>"}, Storage: js.FileStorage, Duplicates: time.Minute},
		{Name: "AUDIT", Subjects: []string{"edi.audit.>"}, Storage: js.FileStorage, DenyDelete: true, DenyPurge: true},
	} {
		if _, err := ejs.EnsureStream(ctx, j, sc); err != nil {
			t.Fatal(err)
		}
	}
}

var poisonOrig struct {
	mu  sync.Mutex
	seq uint64
}

// testCopyKeys is the hub's keyring in these tests; a poison copy whose
// x-hub-mac is signAsHub is signed with it, as a --drill hub would.
var testCopyKeys, _ = audit.NewKeyring([]byte("forensics-test-key-0123456789abcdef"))

// signAsOldHub signs a copy as a hub before x-hub-mac v2 did: a v1 MAC,
// "<kid>:<mac>" over the original's stream and sequence, x-drill-mode,
// x-drill and the payload's SHA-256 (the format copies stored then carry).
const (
	signAsHub    = "sign-as-hub"
	signAsOldHub = "sign-as-old-hub"
)

func signV1(keys *audit.Keyring, h nats.Header, payload []byte) {
	kid, tag := keys.Sign("edihub-hub-copy-v1", []byte(strings.Join([]string{h.Get(wire.HdrOriginalStream), h.Get(wire.HdrOriginalSeq),
		h.Get(wire.HdrDrillMode), h.Get(wire.HdrDrill), audit.PayloadHash(payload)}, "\n")))
	h.Set(wire.HdrHubMAC, kid+":"+tag)
}

// publishPoison publishes a quarantine copy as the hub's quarantine does.
func publishPoison(t testing.TB, j js.JetStream, stage, partner, payload string, extra nats.Header) uint64 {
	t.Helper()
	poisonOrig.mu.Lock()
	poisonOrig.seq++
	orig := poisonOrig.seq + 1000
	poisonOrig.mu.Unlock()
	h := nats.Header{}
	h.Set(wire.HdrOriginalStream, "INGEST")
	h.Set(wire.HdrOriginalSeq, strconv.FormatUint(orig, 10))
	h.Set(wire.HdrOriginalTopic, "edi.ingest.0."+partner)
	h.Set(wire.HdrPartnerID, partner)
	h.Set(wire.HdrStage, stage)
	h.Set(wire.HdrPoisonCause, "panic-repeated")
	h.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	for k, v := range extra {
		h[k] = v
	}
	switch h.Get(wire.HdrHubMAC) {
	case signAsHub:
		audit.SignCopy(testCopyKeys, h, []byte(payload))
	case signAsOldHub:
		signV1(testCopyKeys, h, []byte(payload))
	}
	ack, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: wire.PoisonSubject(stage), Header: h, Data: []byte(payload)})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

type capturedAlerts struct {
	mu     sync.Mutex
	alerts []alert.Alert
}

func (c *capturedAlerts) Name() string { return "capture" }
func (c *capturedAlerts) Send(_ context.Context, a alert.Alert) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alerts = append(c.alerts, a)
	return nil
}

func (c *capturedAlerts) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, a := range c.alerts {
		if a.Name == name {
			n++
		}
	}
	return n
}

type forensicEnv struct {
	f      *Worker
	store  *Store
	nc     *nats.Conn
	js     js.JetStream
	alerts *capturedAlerts
	reg    *prometheus.Registry
	stop   func()
}

// startForensics runs a worker on url until the test ends or stop.
func startForensics(t testing.TB, url string, cfg Config, mod func(*Options)) *forensicEnv {
	t.Helper()
	nc, j, err := ejs.Connect(url, "forensics-test")
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	alerts := &capturedAlerts{}
	reg := prometheus.NewRegistry()
	o := Options{Conn: nc, Config: cfg, Logger: log, Registry: reg, Spec: testForensicSpec(t),
		Alerter: alert.New(time.Hour, []alert.Sink{alerts}, log, nil), Actor: "forensics-test",
		Keyring: testCopyKeys}
	if mod != nil {
		mod(&o)
	}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := jetstreamtest.RunUntilStopped(t, "forensics worker", 30*time.Second, f.Run, nc.Close)
	store, err := f.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &forensicEnv{f: f, store: store, nc: nc, js: j, alerts: alerts, reg: reg, stop: stop}
}

// waitReport polls until the report of POISON:<seq> is stored.
func waitReport(t *testing.T, s *Store, seq uint64, timeout time.Duration) *Report {
	t.Helper()
	var r *Report
	jetstreamtest.Eventually(t, timeout, func() bool {
		var err error
		r, err = s.Report(context.Background(), wire.PoisonID(seq))
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Logf("report: %v", err)
		}
		return err == nil
	})
	return r
}

func fastForensicsConfig() Config {
	return Config{Concurrency: 2, CPULimit: time.Second, Timeout: 20 * time.Second, BreakerThreshold: 2, BreakerCooldown: 2 * time.Second}
}
