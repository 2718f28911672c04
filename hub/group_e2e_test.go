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

// groupConfig is pipelineConfig with group settles always on.
func groupConfig() Config {
	cfg := pipelineConfig()
	cfg.GroupSettle = GroupSettleAlways
	return cfg
}

// The two batches a group's outputs go in: fast on the test server's
// single-replica file PARSED (what auto picks there), atomic where PARSED
// takes no fast batches (allow_batched turned off before the first group)
// and hub.group_settle is always.
var groupBatches = []string{"fast", "atomic"}

func groupHub(t *testing.T, g *groupHold, batch string) (*jetstreamtest.Server, *testEnv) {
	srv := jetstreamtest.StartServer(t, nil)
	cfg := pipelineConfig()
	if batch == "atomic" {
		cfg = groupConfig()
	}
	env := startHub(t, srv.URL, "", cfg, []Stage{g.stage(t)}, func(o *Options) { o.testHooks.groupReady = g.ready })
	if batch == "atomic" {
		updateParsed(t, env, func(c *js.StreamConfig) { c.AllowBatchPublish = false })
	}
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

// With hub.group_settle auto, a single-replica file PARSED that takes
// no fast batches gets no groups (an atomic batch there syncs a staging
// file): every message settles one at a time, once, in order. With fast
// batches (the hub's own PARSED) it gets groups.
func TestGroupSettleAutoOnASingleReplicaFileStream(t *testing.T) {
	for _, fast := range []bool{false, true} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			const n = 40
			g := newGroupHold("A00", 3)
			srv := jetstreamtest.StartServer(t, nil)
			env := startHub(t, srv.URL, "", pipelineConfig(), []Stage{g.stage(t)}, func(o *Options) { o.testHooks.groupReady = g.ready })
			if !fast {
				updateParsed(t, env, func(c *js.StreamConfig) { c.AllowBatchPublish = false })
			}
			for i := 0; i < n; i++ {
				jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
			}
			jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
			checkExactlyInOrder(t, "ACME", parsedData(t, env), n, "A%02d")
			grouped, fallbacks := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total"), testCounter(t, env, "edihub_partner_pipeline_group_fallbacks_total")
			switch {
			case !fast && grouped+fallbacks != 0:
				t.Errorf("groups tried on a single-replica file stream without fast batches, group_settle auto: %v grouped, %v fallbacks", grouped, fallbacks)
			case fast && (grouped < 4 || fallbacks != 0):
				t.Errorf("fast batches on a single-replica file stream: %v grouped (want at least the first four), %v fallbacks", grouped, fallbacks)
			}
		})
	}
}

// One partner's backlog, four deep: the head settles with the three runs
// ahead behind it as one group (one batch); every message reaches PARSED
// once, in order, with its own dedupe id, and the metrics count the
// groups.
func TestGroupSettleBacklogOnceInOrder(t *testing.T) {
	for _, batch := range groupBatches {
		t.Run(batch, func(t *testing.T) { testGroupSettleBacklog(t, batch) })
	}
}

func testGroupSettleBacklog(t *testing.T, batch string) {
	const n = 200
	g := newGroupHold("A000", 3)
	_, env := groupHub(t, g, batch)
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
// has room again every message is in PARSED once, in order. (A stream
// limit with discard new takes no fast batches, prefixOnly: the batch is
// atomic.)
func TestGroupSettleStoreFaultRedoesFromTheHead(t *testing.T) {
	const n = 8
	g := newGroupHold("A00", 3)
	_, env := groupHub(t, g, "atomic")
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

// The batch of the groups (atomic or fast publish) turned off on PARSED
// while the hub runs, after a first group was stored: the next group is
// refused, nothing of it stored, it settles one at a time, and no group
// is tried again (found once): every message once, in order.
func TestGroupSettleBatchDisabledMidRun(t *testing.T) {
	for _, batch := range groupBatches {
		t.Run(batch, func(t *testing.T) { testGroupSettleDisabledMidRun(t, batch) })
	}
}

func testGroupSettleDisabledMidRun(t *testing.T, batch string) {
	const n = 40
	g := newGroupHold("A00", 3)
	_, env := groupHub(t, g, batch)
	for i := 0; i < n/2; i++ {
		jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%02d", i), nil)
	}
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n/2 })
	grouped := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total")
	if grouped < 4 {
		t.Fatalf("%v messages settled in groups before %s publish was turned off, want at least 4", grouped, batch)
	}
	updateParsed(t, env, func(c *js.StreamConfig) {
		c.AllowAtomicPublish, c.AllowBatchPublish = batch != "atomic", batch != "fast"
	})
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
		t.Errorf("%v messages settled in groups after %s publish was turned off", got-grouped, batch)
	}
}

// The outputs of a group's member are in PARSED already (as after a
// crash between a stored batch and its acks). An atomic batch is refused
// for that dedupe id, and the group settles one at a time; a fast batch
// skips the duplicate, also its first message, and stores the rest. No
// output twice, the others in order.
func TestGroupSettleWithAnOutputStoredBefore(t *testing.T) {
	for _, c := range []struct {
		batch, stored, fallback string
	}{
		{"atomic", "A01", "duplicate"},
		{"fast", "A01", ""},
		{"fast", "A00", ""},
	} {
		t.Run(c.batch+"/"+c.stored, func(t *testing.T) { testGroupSettleStoredBefore(t, c.batch, c.stored, c.fallback) })
	}
}

func testGroupSettleStoredBefore(t *testing.T, batch, stored, fallback string) {
	const n = 8
	g := newGroupHold("A00", 3)
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// the hub's streams, then the inputs, then one output as the batch
	// would store it, then the hub
	cfg := pipelineConfig()
	if batch == "atomic" {
		cfg = groupConfig()
	}
	probe := startHub(t, srv.URL, "", cfg, []Stage{g.stage(t)}, nil)
	probe.stop()
	seqOf := map[string]uint64{}
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("A%02d", i)
		seqOf[d] = jetstreamtest.PublishIngest(t, j, "ACME", d, nil)
	}
	if _, err := ejs.Publish(ctx, j, &nats.Msg{Subject: wire.ParsedSubject("ACME", "TEST"), Header: nats.Header{wire.HdrPartnerID: []string{"ACME"}}, Data: []byte(stored)},
		wire.OutputMsgID("INGEST", seqOf[stored], 0)); err != nil {
		t.Fatal(err)
	}
	env := startHub(t, srv.URL, "", cfg, []Stage{g.stage(t)}, func(o *Options) {
		o.testHooks.groupReady = g.ready
		if batch == "atomic" {
			o.testHooks.afterProvision = func() {
				updateParsed(t, &testEnv{t: t, js: j}, func(c *js.StreamConfig) { c.AllowBatchPublish = false })
			}
		}
	})
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= n })
	want := []string{stored}
	for i := 0; i < n; i++ {
		if d := fmt.Sprintf("A%02d", i); d != stored {
			want = append(want, d)
		}
	}
	if got := parsedData(t, env); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PARSED %v, want %v (the stored %s first, then each once)", got, want, stored)
	}
	checkOutputIDs(t, env, seqOf)
	if got := testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total"); got < 1 && fallback == "" {
		t.Errorf("no group settled")
	}
	switch all := testCounter(t, env, "edihub_partner_pipeline_group_fallbacks_total"); {
	case fallback == "" && all != 0:
		t.Errorf("%v groups fell back", all)
	case fallback != "" && env.groupFallbacks(fallback) < 1:
		t.Errorf("no group fell back as %s on the stored dedupe id (%v fallbacks: failed %v, prefix %v, duplicate %v)", fallback, all, env.groupFallbacks("failed"), env.groupFallbacks("prefix"), env.groupFallbacks("duplicate"))
	}
}

func (e *testEnv) groupFallbacks(reason string) float64 {
	var m dto.Metric
	if err := e.hub.met.GroupFallbacks.WithLabelValues(reason).Write(&m); err != nil {
		e.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// PARSED's configuration changed while the hub runs is followed within
// groupRecheck, not at the next start: a limit with discard new (where a
// fast batch could store a later message after a refused one) turns fast
// groups off, and discard old turns them on again. Every message reaches
// PARSED once, in order, throughout.
func TestGroupSettleFollowsPARSEDsConfiguration(t *testing.T) {
	was := groupRecheck
	groupRecheck = 100 * time.Millisecond
	t.Cleanup(func() { groupRecheck = was }) // after the hub stops (cleanups run last first)
	g := newGroupHold("A000", 3)             // the first group: A000 and three behind it
	_, env := groupHub(t, g, "fast")
	sent := 0
	send := func(k int) {
		for range k {
			jetstreamtest.PublishIngest(t, env.js, "ACME", fmt.Sprintf("A%03d", sent), nil)
			sent++
		}
		jetstreamtest.Eventually(t, 60*time.Second, func() bool { return env.hub.Processed() >= int64(sent) })
	}
	grouped := func() float64 { return testCounter(t, env, "edihub_partner_pipeline_grouped_messages_total") }
	// until a read after the change has turned groups off (or on)
	untilGroups := func(on bool) {
		jetstreamtest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
			if env.hub.checkGroups() != on {
				return fmt.Errorf("groups on: %v, want %v", !on, on)
			}
			return nil
		})
	}

	send(20)
	if grouped() == 0 {
		t.Fatal("no group settled with fast batches")
	}
	updateParsed(t, env, func(c *js.StreamConfig) { c.Discard, c.MaxMsgs = js.DiscardNew, 1_000_000 })
	untilGroups(false)
	off := grouped()
	send(20)
	if got := grouped(); got != off {
		t.Fatalf("%v settled in groups with discard new and a limit on PARSED", got-off)
	}
	updateParsed(t, env, func(c *js.StreamConfig) { c.Discard = js.DiscardOld })
	untilGroups(true)
	g.arm(fmt.Sprintf("A%03d", sent))
	send(20)
	if got := grouped(); got == off {
		t.Fatal("no group settled after discard old came back")
	}
	checkExactlyInOrder(t, "ACME", parsedData(t, env), sent, "A%03d")
}
