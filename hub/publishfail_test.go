package hub

import (
	"bytes"
	"context"
	"errors"
	"github.com/edihub/edihub/hub/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// viewStage emits, like the parse stage, an output larger than its input:
// three times the payload (the JSON view of tiny segments is 2.5-6x).
func viewStage(calls map[string]int, mu *sync.Mutex) Stage {
	return Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		mu.Lock()
		calls[string(m.Data[:8])]++
		mu.Unlock()
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), nats.Header{wire.HdrPartnerID: []string{m.Partner}}, bytes.Repeat(m.Data, 3))
		return nil
	}}
}

// On a server with the stock max_payload (1 MiB), a 480 KB interchange
// whose output is 1.4 MB can never be stored: it is dead-lettered once
// with the reason (nothing retries), counted as the message's, the
// partner's next interchange is parsed, and the hub stays ready.
func TestOutputOverMaxPayloadIsDeadLettered(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	env := startHub(t, srv.URL, "", fastConfig(), []Stage{viewStage(calls, &mu)}, nil)
	big := "BIGBIGBI" + strings.Repeat("x", 480<<10)
	jetstreamtest.PublishIngest(t, env.js, "ACME", big, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "SMALLSMA next one", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 && jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1
	})
	dl := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]
	if dl.Subject != "edi.parse.dlq."+wire.CauseUnknown || !strings.Contains(dl.Header.Get(wire.HdrErrorMsg), "max_payload") ||
		len(dl.Data) != len(big) {
		t.Fatalf("dead letter %s (%d bytes): %q", dl.Subject, len(dl.Data), dl.Header.Get(wire.HdrErrorMsg))
	}
	mu.Lock()
	if calls["BIGBIGBI"] != 1 || calls["SMALLSMA"] != 1 {
		t.Errorf("handler runs: %v, want one each (nothing retried)", calls)
	}
	mu.Unlock()
	if got := jetstreamtest.MetricSum(t, env.reg, "edihub_pipeline_publish_failures_total"); got != 1 {
		t.Errorf("publish failures: %v, want 1", got)
	}
	if !env.hub.Ready() {
		t.Error("a message's failure made the hub not ready")
	}
}

// The environment's failure (here: no stream takes the outputs) is
// retried without charging the message and makes the hub not ready while
// it lasts; once the stream is back, the same message is stored and the
// hub is ready again.
func TestEnvironmentPublishFailureIsRetriedAndNotReady(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := jetstreamtest.StartServer(t, nil)
	env := startHub(t, srv.URL, "", fastConfig(), []Stage{viewStage(calls, &mu)}, nil)
	ctx := context.Background()
	s, err := env.js.Stream(ctx, "PARSED")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if err := env.js.DeleteStream(ctx, "PARSED"); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.PublishIngest(t, env.js, "ACME", "ENVENVEN waits for its stream", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return !env.hub.Ready() && env.pubFailures("environment") >= 2
	})
	if r := env.hub.NotReady(); !strings.Contains(r, "failed for the environment") {
		t.Errorf("not-ready reason %q does not name the refused publish", r)
	}
	if _, err := env.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 && env.hub.Ready()
	})
	if n := jetstreamtest.CountMsgs(t, env.js, "DLQ"); n != 0 {
		t.Errorf("the environment's failure dead-lettered %d messages", n)
	}
	if got := env.pubFailures("message"); got != 0 {
		t.Errorf("message failures: %v, want 0", got)
	}
	if r := env.hub.NotReady(); r != "" {
		t.Errorf("ready again, yet NotReady says %q", r)
	}
	env.stop()
	if r := env.hub.NotReady(); r != "hub not running: stopped" {
		t.Errorf("a stopped hub's not-ready reason: %q", r)
	}
}

func (e *testEnv) pubFailures(kind string) float64 {
	var m dto.Metric
	if err := e.hub.pub.Failures.WithLabelValues(kind).Write(&m); err != nil {
		e.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A publish failure repeated identically on one message, while other
// messages' outputs were stored, is the message's; while nothing is
// stored (the environment down for everyone), it is not.
func TestRepeatsIdentically(t *testing.T) {
	err := errors.New("publish edi.parsed.ACME.TEST (id INGEST:7:out:0): nats: no response from stream")
	at := time.Now().Add(-time.Minute)
	same := counter.Failure{Fingerprint: publishFingerprint, Message: publishFailureMessage(err), At: at}
	other := counter.Failure{Fingerprint: publishFingerprint, Message: publishFailureMessage(errors.New("publish: timeout")), At: at}
	n := identicalPublishFailures - 1
	for _, c := range []struct {
		name     string
		failures []counter.Failure
		storedOK bool // another message was stored since the first
		want     bool
	}{
		{"N-1 before, others stored", slices.Repeat([]counter.Failure{same}, n), true, true},
		{"N-1 before, nothing stored since", slices.Repeat([]counter.Failure{same}, n), false, false},
		{"fewer", slices.Repeat([]counter.Failure{same}, n-1), true, false},
		{"one of them differs", append(slices.Repeat([]counter.Failure{same}, n-1), other), true, false},
		{"the latest differ, older ones same", append(slices.Repeat([]counter.Failure{same}, n), other), true, false},
	} {
		h := &Hub{pub: &metrics.PublishHealth{}}
		if c.storedOK {
			h.pub.StoredAt(at.Add(time.Second))
		}
		if got := h.repeatsIdentically(counter.Record{Failures: c.failures}, err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// An interchange whose second output is over the max payload stores none
// of them: half an interchange never reaches PARSED.
func TestOutputsCheckedBeforeAnyIsStored(t *testing.T) {
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		h := nats.Header{wire.HdrPartnerID: []string{m.Partner}}
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), h, []byte("small first output"))
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), h, bytes.Repeat([]byte("x"), 2<<20))
		return nil
	}}
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	env := startHub(t, srv.URL, "", fastConfig(), []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "two outputs", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 })
	if n := jetstreamtest.CountMsgs(t, env.js, "PARSED"); n != 0 {
		t.Fatalf("%d outputs of a dead-lettered interchange were stored", n)
	}
	msg := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0].Header.Get(wire.HdrErrorMsg)
	if !strings.Contains(msg, "output 2 of 2") || !strings.Contains(msg, "max_payload") {
		t.Fatalf("reason: %q", msg)
	}
}
