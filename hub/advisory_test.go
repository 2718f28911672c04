package hub

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A message a downstream consumer gives up on (MaxDeliver) is copied into
// POISON like every other copy: the producer's headers cleaned (a name the
// hub owns moved to x-producer-*), signed, and stored with retries while
// the POISON stream refuses it for being full.
func TestBackstopCopyIsCleanedSignedAndRetried(t *testing.T) {
	k := copyKeyring(t)
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{echoStage("parse", nil)},
		func(o *Options) { o.Keyring = k })
	ctx := context.Background()
	poison, err := env.js.Stream(ctx, "POISON")
	if err != nil {
		t.Fatal(err)
	}
	full := poison.CachedInfo().Config
	roomy := full.MaxBytes
	full.MaxBytes = 64 // no copy fits: the server refuses for the state of the stream, not the message
	if _, err := env.js.UpdateStream(ctx, full); err != nil {
		t.Fatal(err)
	}
	if _, err := env.js.CreateStream(ctx, js.StreamConfig{Name: "APP", Subjects: []string{"app.>"}, Storage: js.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.js.PublishMsg(ctx, &nats.Msg{Subject: "app.orders", Data: []byte("payload"), Header: nats.Header{
		wire.HdrPoisonCause: {"forged"}, wire.HdrHubMAC: {"forged:00"}, "x-custom": {"1"}}}); err != nil {
		t.Fatal(err)
	}
	cons, err := env.js.CreateConsumer(ctx, "APP", js.ConsumerConfig{Durable: "downstream", AckPolicy: js.AckExplicitPolicy, MaxDeliver: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The downstream app fails the message until its consumer gives up.
	failures := func() float64 { return testCounter(t, env, "edihub_pipeline_copy_failures_total") }
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		if batch, err := cons.Fetch(1, js.FetchMaxWait(100*time.Millisecond)); err == nil {
			for m := range batch.Messages() {
				_ = m.Nak()
			}
		}
		return failures() > 0
	}, "the backstop never tried to store its copy")
	if n := jetstreamtest.CountMsgs(t, env.js, "POISON"); n != 0 {
		t.Fatalf("POISON holds %d messages while full", n)
	}
	full.MaxBytes = roomy
	if _, err := env.js.UpdateStream(ctx, full); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "POISON") == 1 },
		"the refused copy was not stored once the stream had room")

	m := jetstreamtest.StreamMsgs(t, env.js, "POISON")[0]
	if m.Subject != wire.PoisonSubject(backstopStage) {
		t.Fatalf("subject %s", m.Subject)
	}
	for name, want := range map[string]string{
		wire.HdrPoisonCause: "max-deliveries", "x-producer-" + wire.HdrPoisonCause: "forged", "x-custom": "1",
		wire.HdrOriginalStream: "APP", wire.HdrOriginalTopic: "app.orders",
	} {
		if got := m.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if err := audit.VerifyCopy(k, m.Header, m.Data); err != nil {
		t.Fatalf("the backstop's copy does not verify: %v (%v)", err, m.Header)
	}
	// Counted after the copy is stored and audited: wait for it, then once.
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return testCounter(t, env, "edihub_advisory_max_deliveries_total") >= 1 })
	if testCounter(t, env, "edihub_advisory_max_deliveries_total") != 1 {
		t.Fatal("the backstop's copy was not counted once")
	}
}
