package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// pipeStage echoes each payload to PARSED, like echoStage, counting its
// runs per payload. held names a payload whose first run waits, before it
// returns, until the stage of next has started: proof that next ran ahead
// of it, while it was not settled (without a pipeline the test fails at
// the wait's deadline). fail, when set, ends held's first run once its wait
// is over.
type pipeStage struct {
	mu         sync.Mutex
	runs       map[string]int
	held, next string
	started    chan struct{}
	once       sync.Once
	fail       func(m *Message) error
}

func newPipeStage(held, next string) *pipeStage {
	return &pipeStage{runs: map[string]int{}, held: held, next: next, started: make(chan struct{})}
}

func (p *pipeStage) stage(t *testing.T) Stage {
	return Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		d := string(m.Data)
		p.mu.Lock()
		p.runs[d]++
		first := p.runs[d] == 1
		p.mu.Unlock()
		if d == p.next {
			p.once.Do(func() { close(p.started) })
		}
		m.Emit(wire.ParsedSubject(m.Partner, "TEST"), nats.Header{wire.HdrPartnerID: []string{m.Partner}}, m.Data)
		if d == p.held && first {
			select {
			case <-p.started:
			case <-time.After(20 * time.Second):
				t.Errorf("%s's stage did not start while %s was not settled: no pipeline", p.next, p.held)
			}
			if p.fail != nil {
				return p.fail(m)
			}
		}
		return nil
	}}
}

func (p *pipeStage) runsOf(d string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[d]
}

// parsedData is PARSED's payloads in stream order.
func parsedData(t *testing.T, env *testEnv) []string {
	var got []string
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		got = append(got, string(m.Data))
	}
	return got
}

func pipelineConfig() Config {
	cfg := fastConfig()
	cfg.Partitions = 1
	cfg.PartitionConcurrency = 8 // a partner takes at most half (pipelineDepth)
	cfg.PartnerPipeline = 4
	return cfg
}

// One partner's backlog, pipelined four deep: its second message's stage
// runs while the first is not settled, and PARSED gets every message once,
// in stream order.
func TestPartnerPipelineBacklogArrivesOnceInOrder(t *testing.T) {
	const n = 300
	srv := jetstreamtest.StartServer(t, nil)
	p := newPipeStage("A000", "A001")
	env := startHub(t, srv.URL, "", pipelineConfig(), []Stage{p.stage(t)}, nil)
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%03d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%03d")
	if got := testCounter(t, env, "edihub_partner_pipeline_discarded_total"); got != 0 {
		t.Errorf("%v runs discarded with nothing nak'd", got)
	}
}

// Strict mode: the partner's head fails transiently and is retried in
// place while its next message has run ahead. That run is discarded,
// nothing of it stored, and it runs again after the head: PARSED gets
// A0, A1, A2 ... once each, in order.
func TestPartnerPipelineStrictRetryHoldsWhatRanAhead(t *testing.T) {
	const n = 20
	srv := jetstreamtest.StartServer(t, nil)
	p := newPipeStage("A00", "A01")
	p.fail = func(*Message) error {
		return TransientError(wire.CauseUnknown, errors.New("a service is slow, once"))
	}
	env := startHub(t, srv.URL, "", pipelineConfig(), []Stage{p.stage(t)}, nil)
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%02d")
	if p.runsOf("A00") != 2 || p.runsOf("A01") < 2 {
		t.Errorf("runs: A00 %d (want 2: failed, retried), A01 %d (want 2 or more: ran ahead, discarded, ran again)", p.runsOf("A00"), p.runsOf("A01"))
	}
	if got := testCounter(t, env, "edihub_partner_pipeline_discarded_total"); got < 1 {
		t.Errorf("discarded runs: %v, want at least 1", got)
	}
	if n := jetstreamtest.CountMsgs(t, env.js, "DLQ") + jetstreamtest.CountMsgs(t, env.js, "RETRY"); n != 0 {
		t.Errorf("%d messages moved", n)
	}
}

// A store failure of the head (its first output stored, its second refused:
// no stream takes its subject, the environment's failure) while the next
// ones ran ahead: they
// are discarded, the head is redelivered and stored, then they are: no
// duplicate, no reorder.
func TestPartnerPipelineStoreFailureRedoesFromTheHead(t *testing.T) {
	const n = 20
	srv := jetstreamtest.StartServer(t, nil)
	p := newPipeStage("A00", "A01")
	p.fail = func(m *Message) error {
		m.Emit("edi.nostream."+m.Partner, nil, m.Data) // refused by the server: no stream
		return nil
	}
	// the redo publishes its one output under the same dedupe id as the
	// first attempt's stored one: the server drops it
	env := startHub(t, srv.URL, "", pipelineConfig(), []Stage{p.stage(t)}, nil)
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") >= n })
	got := parsedData(t, env)
	checkExactlyInOrder(t, "ACME", got, n, "A%02d")
	if env.pubFailures("environment") < 1 {
		t.Error("the head's store did not fail")
	}
	if p.runsOf("A00") != 2 || p.runsOf("A01") < 2 {
		t.Errorf("runs: A00 %d (want 2), A01 %d (want 2 or more)", p.runsOf("A00"), p.runsOf("A01"))
	}
	if d := jetstreamtest.CountMsgs(t, env.js, "DLQ"); d != 0 || strings.Contains(strings.Join(got, ","), "nostream") {
		t.Errorf("DLQ %d", d)
	}
}
