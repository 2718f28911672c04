package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// parsedOf is the payloads stored in PARSED for partner, in stream order.
func parsedOf(t *testing.T, env *testEnv, partner string) []string {
	t.Helper()
	var out []string
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, env.hub.cfg.Streams.Parsed) {
		if m.Subject == wire.ParsedSubject(partner, "TEST") {
			out = append(out, string(m.Data))
		}
	}
	return out
}

// Partner A's failures pause it; partner B, in the same partition, keeps
// flowing while A's messages wait, parked in INGEST; the pause is in the
// bucket every instance reads; resume runs A's waiting messages in order, none lost,
// none duplicated, none charged (no attempt, no dead letter).
func TestBulkheadPausesAFailingPartnerNotItsNeighbour(t *testing.T) {
	stage := echoStage("parse", func(m *Message) error {
		if strings.HasPrefix(string(m.Data), "BAD") {
			return PermanentError(wire.CauseSchema, errors.New("schema violation"))
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Partitions = 1 // A and B share the one partition
	cfg.PartitionConcurrency = 2
	cfg.PartitionMaxInFlight = 64
	cfg.Attempts.AckWait = 3 * time.Second
	cfg.Bulkhead = BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 4, MaxFailures: 4}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	_, j := jetstreamtest.Connect(t, env.url)
	ctx := context.Background()
	store, err := OpenPauses(ctx, env.js, DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}

	for i := range 4 {
		jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("BAD%d", i), nil)
	}
	var paused []Pause
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if paused, err = store.List(ctx); err != nil {
			return err
		}
		if len(paused) != 1 || paused[0].Partner != "A" {
			return fmt.Errorf("paused %+v, want A", paused)
		}
		return nil
	})
	if paused[0].Failures != 4 || paused[0].Messages != 4 {
		t.Fatalf("pause %+v, want 4 failures of 4", paused[0])
	}
	if g := jetstreamtest.MetricSum(t, env.reg, "edihub_bulkhead_partner_paused_info"); g != 1 {
		t.Fatalf("paused gauge %v, want 1", g)
	}

	const n = 20
	for i := range n {
		jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("A%03d", i), nil)
		jetstreamtest.PublishIngest(t, j, "B", fmt.Sprintf("B%03d", i), nil)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if got := len(parsedOf(t, env, "B")); got != n {
			return fmt.Errorf("B: %d of %d parsed", got, n)
		}
		return nil
	})
	// A is parked: none of its messages is in hand, none ran
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		held, running, _ := env.hub.bulk.lanesHeld()
		if held != 0 || running != 0 || env.hub.bulk.parkedPartners() != 1 {
			return fmt.Errorf("held %d running %d parked %d, want A parked, nothing in hand", held, running, env.hub.bulk.parkedPartners())
		}
		return nil
	})
	if got := parsedOf(t, env, "A"); len(got) != 0 {
		t.Fatalf("paused A parsed %v", got)
	}
	// Waiting longer than the ack wait redelivers none of them (an
	// absence, so a wait: two ack waits).
	time.Sleep(2 * cfg.Attempts.AckWait)
	if r := testCounter(t, env, "edihub_partition_redeliveries_total"); r != 0 {
		t.Fatalf("%v redeliveries while A waited", r)
	}

	if _, err := store.Resume(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Resume(ctx, "A"); !errors.Is(err, ErrNotPaused) {
		t.Fatalf("second resume: %v, want ErrNotPaused", err)
	}
	var got []string
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if got = parsedOf(t, env, "A"); len(got) < n {
			return fmt.Errorf("A: %d of %d parsed after resume", len(got), n)
		}
		return nil
	})
	jetstreamtest.Settle(t, env.js, 30*time.Second, env.hub.cfg.Streams.Ingest)
	got = parsedOf(t, env, "A")
	if len(got) != n {
		t.Fatalf("A parsed %d, want %d (duplicates?): %v", len(got), n, got)
	}
	for i, s := range got {
		if want := fmt.Sprintf("A%03d", i); s != want {
			t.Fatalf("A's PARSED[%d] = %s, want %s (order)", i, s, want)
		}
	}
	if d := jetstreamtest.CountMsgs(t, env.js, env.hub.cfg.Streams.DLQ); d != 4 {
		t.Fatalf("DLQ holds %d, want A's 4 bad ones", d)
	}
	if g := jetstreamtest.MetricSum(t, env.reg, "edihub_bulkhead_partner_paused_info"); g != 0 {
		t.Fatalf("paused gauge %v after resume, want 0", g)
	}
	if r := testCounter(t, env, "edihub_partition_redeliveries_total"); r != 0 {
		t.Fatalf("%v redeliveries", r)
	}
}

// A pause already in the bucket (taken by another instance, or before a
// restart) holds the partner from the first pull: the pauses are loaded
// before any partition pulls, and the partner is parked at its first
// message.
func TestBulkheadPauseInTheBucketHoldsFromTheStart(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	store, err := OpenPauses(ctx, j, DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := store.Put(ctx, Pause{Partner: "A", At: time.Now().UTC(), By: "another-instance", Failures: 9, Messages: 9}); err != nil || !created {
		t.Fatalf("put: %v %v", created, err)
	}
	cfg := fastConfig()
	cfg.Partitions = 1
	cfg.Bulkhead = BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 4, MaxFailures: 4}
	env := startHub(t, srv.URL, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	for i := range 5 {
		jetstreamtest.PublishIngest(t, j, "A", fmt.Sprintf("A%03d", i), nil)
		jetstreamtest.PublishIngest(t, j, "B", fmt.Sprintf("B%03d", i), nil)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if got := len(parsedOf(t, env, "B")); got != 5 {
			return fmt.Errorf("B: %d of 5 parsed", got)
		}
		if held, _, _ := env.hub.bulk.lanesHeld(); held != 0 || env.hub.bulk.parkedPartners() != 1 {
			return fmt.Errorf("%d in hand, %d parked; want A parked", held, env.hub.bulk.parkedPartners())
		}
		return nil
	})
	if got := parsedOf(t, env, "A"); len(got) != 0 {
		t.Fatalf("A parsed while paused: %v", got)
	}
	if _, err := store.Resume(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		got := parsedOf(t, env, "A")
		if len(got) != 5 {
			return fmt.Errorf("A: %v", got)
		}
		for i, s := range got {
			if s != fmt.Sprintf("A%03d", i) {
				return fmt.Errorf("A out of order: %v", got)
			}
		}
		return nil
	})
}
