package hub

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// groupHold makes a group form: the first run of the payload held waits,
// in its stage, until want runs ahead behind it were offered to its group
// (the hub's groupReady hook), so its settle finds them ready.
type groupHold struct {
	mu     sync.Mutex
	held   string
	want   int
	seen   int
	full   chan struct{}
	runs   map[string]int
	waited bool
}

func newGroupHold(held string, want int) *groupHold {
	return &groupHold{held: held, want: want, full: make(chan struct{}), runs: map[string]int{}}
}

// arm holds the first run of held next, until want more offers.
func (g *groupHold) arm(held string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.seen, g.full, g.waited = held, 0, make(chan struct{}), false
}

func (g *groupHold) ready(uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen++; g.seen == g.want {
		close(g.full)
	}
}

func (g *groupHold) stage(t *testing.T) Stage {
	return echoStage("parse", func(m *Message) error {
		g.mu.Lock()
		g.runs[string(m.Data)]++
		wait := string(m.Data) == g.held && !g.waited
		g.waited = g.waited || wait
		full := g.full
		g.mu.Unlock()
		if wait {
			select {
			case <-full:
			case <-time.After(20 * time.Second):
				t.Errorf("%d runs ahead of %s were not offered to its group", g.want, g.held)
			}
		}
		return nil
	})
}

// groupConfig is pipelineConfig with group settles on the test server's
// single-replica file PARSED (auto leaves them off there).
func groupConfig() Config {
	cfg := pipelineConfig()
	cfg.GroupSettle = GroupSettleAlways
	return cfg
}

func groupHub(t *testing.T, g *groupHold) (*jetstreamtest.Server, *testEnv) {
	srv := jetstreamtest.StartServer(t, nil)
	env := startHub(t, srv.URL, "", groupConfig(), []Stage{g.stage(t)}, func(o *Options) { o.testHooks.groupReady = g.ready })
	return srv, env
}

// checkOutputIDs says every PARSED message carries the dedupe id of its
// input (INGEST sequence by payload).
func checkOutputIDs(t *testing.T, env *testEnv, seqOf map[string]uint64) {
	t.Helper()
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		if got, want := m.Header.Get(js.MsgIDHeader), wire.OutputMsgID("INGEST", seqOf[string(m.Data)], 0); got != want {
			t.Fatalf("output %s has Nats-Msg-Id %q, want %q", m.Data, got, want)
		}
	}
}

// With hub.group_settle auto, the test server's single-replica file PARSED
// gets no groups: every message settles one at a time, once, in order.
func TestGroupSettleAutoIsOffOnASingleReplicaFileStream(t *testing.T) {
	const n = 40
	g := newGroupHold("A00", 3)
	srv := jetstreamtest.StartServer(t, nil)
	env := startHub(t, srv.URL, "", pipelineConfig(), []Stage{g.stage(t)}, func(o *Options) { o.testHooks.groupReady = g.ready })
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%02d")
	if got := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total") + testCounter(t, env, "edihub_partner_pipeline_group_fallbacks_total"); got != 0 {
		t.Errorf("groups tried on a single-replica file stream with group_settle auto: %v", got)
	}
}

// One partner's backlog, four deep: the head settles with the three runs
// ahead behind it as one group (one atomic batch); every message reaches
// PARSED once, in order, with its own dedupe id, and the metrics count the
// groups.
func TestGroupSettleBacklogOnceInOrder(t *testing.T) {
	const n = 200
	g := newGroupHold("A000", 3)
	_, env := groupHub(t, g)
	seqOf := map[string]uint64{}
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("A%03d", i)
		seqOf[d] = jetstreamtest.PublishIngest(t, env.js, "ACME", d, nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%03d")
	checkOutputIDs(t, env, seqOf)
	if got := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total"); got < 4 {
		t.Errorf("%v messages settled in groups, want at least the first four", got)
	}
	if got := testCounter(t, env, "edihub_partner_pipeline_group_fallbacks_total"); got != 0 {
		t.Errorf("%v groups fell back", got)
	}
	if got := testCounter(t, env, "edihub_partner_pipeline_discarded_total"); got != 0 {
		t.Errorf("%v runs discarded", got)
	}
	if s := jetstreamtest.StreamStates(t, env.js, "INGEST")["INGEST"]; s.Msgs != n {
		t.Errorf("INGEST %+v", s)
	}
}

// updateParsed changes PARSED's config on the server under a running hub.
func updateParsed(t *testing.T, env *testEnv, change func(*js.StreamConfig)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := env.js.Stream(ctx, "PARSED")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	change(&cfg)
	if _, err := env.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// A group the store refuses (PARSED full, discard new: the batch of four
// does not fit) stores nothing; it is settled from the head one at a
// time, the head whose output no longer fits waits, and when the stream
// has room again every message is in PARSED once, in order.
func TestGroupSettleStoreFaultRedoesFromTheHead(t *testing.T) {
	const n = 8
	g := newGroupHold("A00", 3)
	_, env := groupHub(t, g)
	updateParsed(t, env, func(c *js.StreamConfig) { c.MaxMsgs, c.Discard = 2, js.DiscardNew })
	for i := 0; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return testCounter(t, env, "edihub_partner_pipeline_group_fallbacks_total") >= 1 && env.pubFailures("environment") >= 1
	})
	if got := jetstreamtest.CountMsgs(t, env.js, "PARSED"); got != 2 {
		t.Fatalf("PARSED holds %d with room for 2", got)
	}
	updateParsed(t, env, func(c *js.StreamConfig) { c.MaxMsgs = -1 })
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%02d")
	if d := jetstreamtest.CountMsgs(t, env.js, "DLQ"); d != 0 {
		t.Errorf("DLQ %d", d)
	}
}

// Atomic publish turned off on PARSED while the hub runs, after a first
// group was stored: the next group is refused, nothing of it stored, it
// settles one at a time, and no group is tried again (found once): every
// message once, in order.
func TestGroupSettleAtomicDisabledMidRun(t *testing.T) {
	const n = 40
	g := newGroupHold("A00", 3)
	_, env := groupHub(t, g)
	for i := 0; i < n/2; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n/2 })
	grouped := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total")
	if grouped < 4 {
		t.Fatalf("%v messages settled in groups before atomic publish was turned off, want at least 4", grouped)
	}
	updateParsed(t, env, func(c *js.StreamConfig) { c.AllowAtomicPublish = false })
	g.arm(fmt.Sprintf("A%02d", n/2))
	for i := n / 2; i < n; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%02d")
	if got := env.groupFallbacks("unavailable"); got != 1 {
		t.Errorf("%v groups fell back as unavailable, want the first (then no group is tried)", got)
	}
	if got := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total"); got != grouped {
		t.Errorf("%v messages settled in groups after atomic publish was turned off", got-grouped)
	}
}

// The outputs of a group's second message are in PARSED already (as after
// a crash between a stored batch and its acks): the server refuses the
// batch for that dedupe id, the group settles one at a time, each output
// deduplicated on its own: no output twice.
func TestGroupSettleWithAnOutputStoredBeforeFallsBack(t *testing.T) {
	const n = 8
	g := newGroupHold("A00", 3)
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// the hub's streams, then the inputs, then A01's output as the
	// batch would store it, then the hub
	probe := startHub(t, srv.URL, "", groupConfig(), []Stage{g.stage(t)}, nil)
	probe.stop()
	seqOf := map[string]uint64{}
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("A%02d", i)
		seqOf[d] = jetstreamtest.PublishIngest(t, j, "ACME", d, nil)
	}
	if _, err := ejs.Publish(ctx, j, &nats.Msg{Subject: wire.ParsedSubject("ACME", "TEST"), Header: nats.Header{wire.HdrPartnerID: []string{"ACME"}}, Data: []byte("A01")},
		wire.OutputMsgID("INGEST", seqOf["A01"], 0)); err != nil {
		t.Fatal(err)
	}
	env := startHub(t, srv.URL, "", groupConfig(), []Stage{g.stage(t)}, func(o *Options) { o.testHooks.groupReady = g.ready })
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	got := parsedData(t, env)
	want := []string{"A01", "A00", "A02", "A03", "A04", "A05", "A06", "A07"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PARSED %v, want %v (the stored A01 first, then each once)", got, want)
	}
	checkOutputIDs(t, env, seqOf)
	if got := env.groupFallbacks("duplicate"); got < 1 {
		t.Errorf("no group fell back on the stored dedupe id")
	}
}

func (e *testEnv) groupFallbacks(reason string) float64 {
	var m dto.Metric
	if err := e.hub.met.GroupFallbacks.WithLabelValues(reason).Write(&m); err != nil {
		e.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
