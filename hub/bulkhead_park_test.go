package hub

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// parkConsumers lists INGEST's park consumers.
func parkConsumers(t *testing.T, env *testEnv) []string {
	t.Helper()
	st, err := env.js.Stream(context.Background(), env.hub.cfg.Streams.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	names := st.ConsumerNames(context.Background())
	for n := range names.Name() {
		if strings.HasPrefix(n, "park-") {
			out = append(out, n)
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A paused partner that keeps sending — three times the partition's
// window — leaves the window to its neighbour: B, in the same partition,
// is parsed throughout, before and after a restart, while A's messages
// wait in INGEST (parked), none in hand. On resume each of A's messages
// runs exactly once, in order, with no attempt charged (no redelivery, no
// dead letter, no quarantine), and the partition takes A back.
func TestBulkheadParkedPartnerLeavesTheWindowToItsNeighbour(t *testing.T) {
	var mu sync.Mutex
	runs := map[string]int{}
	stage := echoStage("parse", func(m *Message) error {
		mu.Lock()
		runs[string(m.Data)]++
		mu.Unlock()
		return nil
	})
	const window = 32
	cfg := fastConfig()
	cfg.Partitions = 1 // A and B share the one partition
	cfg.PartitionConcurrency = 2
	cfg.PartitionMaxInFlight = window
	cfg.Attempts.AckWait = 3 * time.Second
	cfg.Bulkhead = BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 4, MaxFailures: 4}
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	store, err := OpenPauses(ctx, j, DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, Pause{Partner: "A", At: time.Now().UTC(), By: "test", Failures: 9, Messages: 9}); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(t.TempDir(), "counter.db")
	env := startHub(t, srv.URL, storePath, cfg, []Stage{stage}, nil)

	a, b := 0, 0 // messages published so far
	send := func(as, bs int) {
		for range max(as, bs) {
			if as > 0 {
				jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("A%04d", a), nil)
				a, as = a+1, as-1
			}
			if bs > 0 {
				jetstreamtest.PublishIngest(t, j, "B", fmt.Sprintf("B%04d", b), nil)
				b, bs = b+1, bs-1
			}
		}
	}
	bParsed := func(env *testEnv) {
		t.Helper()
		jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
			if got := len(parsedOf(t, env, "B")); got != b {
				return fmt.Errorf("B: %d of %d parsed while A is paused", got, b)
			}
			if held, _, _ := env.hub.bulk.lanesHeld(); held != 0 {
				return fmt.Errorf("%d in hand, want none (A parked)", held)
			}
			return nil
		})
	}
	send(2*window, 0) // A alone: without parking, its messages would fill the window
	send(window, 20)  // then both, interleaved
	bParsed(env)
	send(0, 10)
	bParsed(env)
	if got := parsedOf(t, env, "A"); len(got) != 0 {
		t.Fatalf("paused A parsed %v", got)
	}
	if p := parkConsumers(t, env); len(p) != 1 {
		t.Fatalf("park consumers %v, want A's", p)
	}

	// A restart finds A parked: its messages stay out of the window.
	env.stop()
	send(window, 10)
	env = startHub(t, srv.URL, storePath, cfg, []Stage{stage}, nil)
	bParsed(env)
	if env.hub.bulk.parkedPartners() != 1 {
		t.Fatalf("%d parked after the restart, want A", env.hub.bulk.parkedPartners())
	}
	if g := jetstreamtest.MetricSum(t, env.reg, "edihub_bulkhead_parked_partners"); g != 1 {
		t.Fatalf("parked gauge %v, want 1", g)
	}

	if _, err := store.Resume(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if got := len(parsedOf(t, env, "A")); got < a {
			return fmt.Errorf("A: %d of %d parsed after resume", got, a)
		}
		if p := parkConsumers(t, env); len(p) != 0 || env.hub.bulk.parkedPartners() != 0 {
			return fmt.Errorf("still parked: %v", p)
		}
		return nil
	})
	if g := jetstreamtest.MetricSum(t, env.reg, "edihub_bulkhead_parked_partners"); g != 0 {
		t.Fatalf("parked gauge %v after the drain, want 0", g)
	}
	send(5, 5) // back on the partition
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if got, gb := len(parsedOf(t, env, "A")), len(parsedOf(t, env, "B")); got < a || gb < b {
			return fmt.Errorf("A %d of %d, B %d of %d parsed", got, a, gb, b)
		}
		return nil
	})
	jetstreamtest.Settle(t, env.js, 30*time.Second, env.hub.cfg.Streams.Ingest, env.hub.cfg.Streams.Parsed)
	for partner, n := range map[string]int{"A": a, "B": b} {
		got := parsedOf(t, env, partner)
		if len(got) != n {
			t.Fatalf("%s parsed %d, want %d", partner, len(got), n)
		}
		for i, s := range got {
			if want := fmt.Sprintf("%s%04d", partner, i); s != want {
				t.Fatalf("%s's PARSED[%d] = %s, want %s (order)", partner, i, s, want)
			}
		}
	}
	mu.Lock()
	for data, n := range runs {
		if n != 1 {
			t.Errorf("%s ran %d times, want once", data, n)
		}
	}
	if len(runs) != a+b {
		t.Errorf("%d ran, want %d", len(runs), a+b)
	}
	mu.Unlock()
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

// A park left in INGEST by a hub that ran with the bulkhead is drained by
// one that runs without it: its messages were acked off the partition
// consumer, so nothing else would ever run them.
func TestBulkheadOffDrainsAParkLeftBehind(t *testing.T) {
	cfg := fastConfig()
	cfg.Partitions = 1
	cfg.PartitionMaxInFlight = 16
	cfg.Bulkhead = BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 4, MaxFailures: 4}
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	store, err := OpenPauses(ctx, j, DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, Pause{Partner: "A", At: time.Now().UTC(), By: "test", Failures: 9, Messages: 9}); err != nil {
		t.Fatal(err)
	}
	env := startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	const n = 40
	for i := range n {
		jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("A%04d", i), nil)
	}
	jetstreamtest.PublishIngest(t, j, "B", "B0000", nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if len(parsedOf(t, env, "B")) != 1 || len(parkConsumers(t, env)) != 1 {
			return fmt.Errorf("B %d parsed, park consumers %v", len(parsedOf(t, env, "B")), parkConsumers(t, env))
		}
		return nil
	})
	env.stop()

	cfg.Bulkhead = BulkheadConfig{}
	env = startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if got := len(parsedOf(t, env, "A")); got != n {
			return fmt.Errorf("A: %d of %d parsed", got, n)
		}
		if p := parkConsumers(t, env); len(p) != 0 {
			return fmt.Errorf("park consumers left: %v", p)
		}
		return nil
	})
	jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("A%04d", n), nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		got := parsedOf(t, env, "A")
		if len(got) != n+1 {
			return fmt.Errorf("A: %d of %d parsed", len(got), n+1)
		}
		for i, s := range got {
			if want := fmt.Sprintf("A%04d", i); s != want {
				return fmt.Errorf("A's PARSED[%d] = %s, want %s (order)", i, s, want)
			}
		}
		return nil
	})
}
