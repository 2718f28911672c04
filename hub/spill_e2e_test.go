package hub

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// spillCounts runs the echo stage and counts each message's runs; a
// message whose data is block waits for release first (a flood whose head
// is stuck: its backlog stays in front of everything sent after it).
type spillCounts struct {
	mu      sync.Mutex
	runs    map[string]int
	block   string
	release chan struct{}
}

func newSpillCounts(block string) *spillCounts {
	return &spillCounts{runs: map[string]int{}, block: block, release: make(chan struct{})}
}

func (c *spillCounts) stage() Stage {
	return echoStage("parse", func(m *Message) error {
		if string(m.Data) == c.block {
			<-c.release
		}
		c.mu.Lock()
		c.runs[string(m.Data)]++
		c.mu.Unlock()
		return nil
	})
}

func (c *spillCounts) checkOnce(t *testing.T, want int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for data, n := range c.runs {
		if n != 1 {
			t.Errorf("%s ran %d times, want once", data, n)
		}
	}
	if len(c.runs) != want {
		t.Errorf("%d ran, want %d", len(c.runs), want)
	}
}

// checkPartnerParsed fails unless partner's PARSED outputs are
// format(0)..format(n-1).
func checkPartnerParsed(env *testEnv, t *testing.T, partner string, n int) error {
	got := parsedOf(t, env, partner)
	if len(got) != n {
		return fmt.Errorf("%s: %d of %d parsed", partner, len(got), n)
	}
	for i, g := range got {
		if want := fmt.Sprintf("%s%05d", partner, i); g != want {
			return fmt.Errorf("%s's PARSED[%d] = %s, want %s (lost, duplicated or reordered)", partner, i, g, want)
		}
	}
	return nil
}

// spillConfig is one partition with the default window and per-partner
// bound, and time for a head held back by the test.
func spillConfig() Config {
	cfg := fastConfig()
	cfg.Partitions = 1 // F and Q share the one partition
	cfg.PartitionConcurrency = 2
	cfg.Attempts.AckWait = 3 * time.Second
	cfg.Attempts.Deadline = 2 * time.Minute
	return cfg
}

// A flooding partner whose backlog is two windows long, its head stuck:
// it holds no more than hub.partner_max_in_flight of the window (it
// spills to a park consumer of its own), so the quiet partner in its
// partition is parsed meanwhile, all of it, with the default window.
// Released, the flood's messages run once each, in order, with no attempt
// charged; once its park is empty the partition takes it back.
func TestFloodingPartnerSpillsAndItsNeighbourRuns(t *testing.T) {
	cfg := spillConfig()
	runs := newSpillCounts("F00000")
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	env := startHub(t, srv.URL, "", cfg, []Stage{runs.stage()}, nil)
	window := env.hub.cfg.PartitionMaxInFlight
	bound := env.hub.cfg.PartnerMaxInFlight
	flood := 2 * window
	for i := range flood {
		jetstreamtest.PublishIngest(t, j, "F", fmt.Sprintf("F%05d", i), nil)
	}
	const quiet = 20
	for i := range quiet {
		jetstreamtest.PublishIngest(t, j, "Q", fmt.Sprintf("Q%05d", i), nil)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if err := checkPartnerParsed(env, t, "Q", quiet); err != nil {
			return err
		}
		if s := testCounter(t, env, "edihub_partition_spilled_partners"); s != 1 {
			return fmt.Errorf("spilled partners %v, want 1", s)
		}
		return nil
	})
	if got := parsedOf(t, env, "F"); len(got) != 0 {
		t.Fatalf("F parsed %d while its head is stuck", len(got))
	}
	if held := testCounter(t, env, "edihub_partition_in_flight_messages"); held > float64(2*bound) {
		// state held and running: F's head twice, its bound of the spill
		t.Fatalf("in hand %v, want at most F's bound %d (and its head)", held, bound)
	}
	if p := parkConsumers(t, env); len(p) != 1 {
		t.Fatalf("park consumers %v, want F's", p)
	}

	close(runs.release)
	jetstreamtest.CheckFor(t, 2*time.Minute, 50*time.Millisecond, func() error {
		if err := checkPartnerParsed(env, t, "F", flood); err != nil {
			return err
		}
		if p := parkConsumers(t, env); len(p) != 0 {
			return fmt.Errorf("park consumers left: %v", p)
		}
		if s := testCounter(t, env, "edihub_partition_spilled_partners"); s != 0 {
			return fmt.Errorf("spilled partners %v after the drain, want 0", s)
		}
		return nil
	})
	for i := range 5 { // back on the partition consumer
		jetstreamtest.PublishIngest(t, j, "F", fmt.Sprintf("F%05d", flood+i), nil)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error { return checkPartnerParsed(env, t, "F", flood+5) })
	jetstreamtest.Settle(t, env.js, 30*time.Second, env.hub.cfg.Streams.Ingest, env.hub.cfg.Streams.Parsed)
	if err := checkPartnerParsed(env, t, "Q", quiet); err != nil {
		t.Fatal(err)
	}
	runs.checkOnce(t, flood+5+quiet)
	if s := testCounter(t, env, "edihub_partition_spills_total"); s < 1 {
		t.Fatalf("spills total %v, want at least 1", s)
	}
	if d := jetstreamtest.CountMsgs(t, env.js, env.hub.cfg.Streams.DLQ); d != 0 {
		t.Fatalf("DLQ holds %d, want 0", d)
	}
	if q := jetstreamtest.CountMsgs(t, env.js, env.hub.cfg.Streams.Poison); q != 0 {
		t.Fatalf("POISON holds %d, want 0", q)
	}
	if r := testCounter(t, env, "edihub_partition_redeliveries_total"); r != 0 {
		t.Fatalf("%v redeliveries", r)
	}
}

// A hub stopped in the middle of a spill's drain, and some of the park
// consumer's messages left out (delivered to a client that never acks,
// as a process that died would leave them): the next hub finds the park,
// holds what the consumer hands it until those come back, and runs the
// flood once each, in order.
func TestSpillDrainHoldsOrderAcrossARestart(t *testing.T) {
	cfg := spillConfig()
	runs := newSpillCounts("F00200")
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	storePath := filepath.Join(t.TempDir(), "counter.db")
	env := startHub(t, srv.URL, storePath, cfg, []Stage{runs.stage()}, nil)
	flood := 2 * env.hub.cfg.PartitionMaxInFlight
	for i := range flood {
		jetstreamtest.PublishIngest(t, j, "F", fmt.Sprintf("F%05d", i), nil)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if got := len(parsedOf(t, env, "F")); got != 200 {
			return fmt.Errorf("F: %d parsed, want 200 before the stuck one", got)
		}
		if p := parkConsumers(t, env); len(p) != 1 {
			return fmt.Errorf("park consumers %v, want F's", p)
		}
		return nil
	})
	close(runs.release)
	park := parkConsumers(t, env)
	env.stop() // what is in hand runs; the park stays with the rest

	ctx := context.Background()
	c, err := j.Consumer(ctx, env.hub.cfg.Streams.Ingest, park[0])
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(10, js.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for m := range batch.Messages() {
		out = append(out, string(m.Data())) // left unacked: back after the ack wait
	}
	if len(out) == 0 {
		t.Fatal("nothing left in the park after the stop")
	}
	t.Logf("left out by a client that never acks: %s", strings.Join(out, " "))

	env = startHub(t, srv.URL, storePath, cfg, []Stage{runs.stage()}, nil)
	jetstreamtest.CheckFor(t, 2*time.Minute, 50*time.Millisecond, func() error {
		if err := checkPartnerParsed(env, t, "F", flood); err != nil {
			return err
		}
		if p := parkConsumers(t, env); len(p) != 0 {
			return fmt.Errorf("park consumers left: %v", p)
		}
		return nil
	})
	runs.checkOnce(t, flood)
}
