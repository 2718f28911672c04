package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// partnersInOnePartition are n partner names the INGEST transform stores
// in the same partition.
func partnersInOnePartition(t *testing.T, n, partitions int) []string {
	t.Helper()
	out := []string{"FLOOD"}
	want := wire.PartitionOf("FLOOD", partitions)
	for i := 0; len(out) < n; i++ {
		if p := "QUIET" + strconv.Itoa(i); wire.PartitionOf(p, partitions) == want {
			out = append(out, p)
		}
	}
	return out
}

// floodSize is the flood of TestQuietPartnerIsNotHeldByAFloodInItsPartition;
// EDIHUB_FLOOD=50000 runs the size (a minute or more on 2 cores).
func floodSize(t *testing.T) int {
	if v := os.Getenv("EDIHUB_FLOOD"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("EDIHUB_FLOOD=%q", v)
		}
		return n
	}
	return 5000
}

// A partner floods its partition with a backlog; a quiet partner hashed
// into the same partition sends one interchange every 20 ms meanwhile.
// With per-partner lanes the quiet partner's interchanges run beside the
// flood's head instead of behind its backlog, with a window far smaller
// than the flood: the flood holds no more than hub.partner_max_in_flight
// of it and spills the rest to a park consumer of its own. p99 publish→PARSED under 250 ms;
// what is in hand stays within the window and the flood's bound. Nothing
// is lost, duplicated or reordered for either.
func TestQuietPartnerIsNotHeldByAFloodInItsPartition(t *testing.T) {
	flood := floodSize(t)
	const quiet = 60
	// every message costs the stage some work, so the flood's backlog is
	// still there while the quiet partner sends (its drain is serial)
	stage := echoStage("parse", func(m *Message) error {
		deadline := time.Now().Add(200 * time.Microsecond)
		for time.Now().Before(deadline) {
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Partitions = 2
	cfg.Attempts.AckWait = 10 * time.Second
	cfg.Attempts.Deadline = 10 * time.Second
	// A window of 1 024, not the default 256, and the default partner bound
	// (64): while a flood arrives, the partition consumer skips a spilled
	// partner's messages at about window / ack round trip a second, and
	// under the race detector on a loaded 2-core machine 256 of them skip
	// barely faster than the 5 000/s this flood sends (the quiet p99 went
	// over in 5 of 33 runs; at 1 024 in none). The window is still a fixed
	// bound, whatever the flood's size: what is in hand is checked below.
	// Without the race detector the default window holds (BENCHMARKS.md).
	cfg.PartitionMaxInFlight = 1024
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	window, bound := env.hub.cfg.PartitionMaxInFlight, env.hub.cfg.PartnerMaxInFlight
	var maxHeld atomic.Int64 // the most in hand seen, sampled while the flood drains
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-sampling:
				return
			case <-time.After(20 * time.Millisecond):
				if n := int64(heldMessages(t, env)); n > maxHeld.Load() {
					maxHeld.Store(n)
				}
			}
		}
	}()
	// the test's publishes and subscriptions on connections of their own,
	// not queued on the hub's
	nc, j := jetstreamtest.Connect(t, env.url)
	ps := partnersInOnePartition(t, 2, cfg.Partitions)
	fl, q := ps[0], ps[1]
	// control: a partner alone in the other partition, sending with the
	// quiet one; it waits for nobody, so its latency is what the machine
	// gives (on a loaded 2-core machine it is far from zero)
	control := ""
	for i := 0; control == ""; i++ {
		if p := "CALM" + strconv.Itoa(i); wire.PartitionOf(p, cfg.Partitions) != wire.PartitionOf(fl, cfg.Partitions) {
			control = p
		}
	}

	var (
		mu      sync.Mutex
		arrived = map[string]time.Time{}
	)
	for _, p := range []string{q, control} {
		sub, err := nc.Subscribe(wire.ParsedSubject(p, "TEST"), func(m *nats.Msg) {
			now := time.Now()
			mu.Lock()
			arrived[m.Subject+" "+string(m.Data)] = now
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	var floodDone int
	floodSub, err := nc.Subscribe(wire.ParsedSubject(fl, "TEST"), func(*nats.Msg) {
		mu.Lock()
		floodDone++
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer floodSub.Unsubscribe()

	// The flood arrives at about 5 000 interchanges a second, several times
	// what one partner's serial drain takes, while the quiet partner sends.
	ctx := context.Background()
	var floodSent atomic.Int64
	floodErr := make(chan error, 1)
	go func() {
		defer close(floodErr)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < flood; i++ {
			if _, err := j.PublishAsync(wire.IngestSubject(fl), []byte(fmt.Sprintf("F%06d", i))); err != nil {
				floodErr <- err
				return
			}
			if i%100 == 99 || i == flood-1 {
				select {
				case <-j.PublishAsyncComplete():
				case <-time.After(time.Minute):
					floodErr <- errors.New("the flood was not stored in a minute")
					return
				}
				floodSent.Store(int64(i + 1))
				<-tick.C
			}
		}
	}()
	jetstreamtest.Eventually(t, time.Minute, func() bool { return floodSent.Load() >= 1000 })
	sent := map[string]time.Time{}
	behind := 0 // quiet interchanges sent while the flood had a backlog
	for i := 0; i < quiet; i++ {
		data := fmt.Sprintf("Q%03d", i)
		mu.Lock()
		if int(floodSent.Load())-floodDone > 500 {
			behind++
		}
		mu.Unlock()
		for _, p := range []string{q, control} {
			sent[wire.ParsedSubject(p, "TEST")+" "+data] = time.Now()
			if _, err := j.Publish(ctx, wire.IngestSubject(p), []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := <-floodErr; err != nil {
		t.Fatal(err)
	}
	// the flood's drain, serial: 2 minutes, or 4 ms a message for a larger
	// flood (the race detector on a loaded machine)
	jetstreamtest.Eventually(t, max(2*time.Minute, time.Duration(flood)*4*time.Millisecond), func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") >= flood+2*quiet
	})
	close(sampling)
	<-sampled
	if s := jetstreamtest.MetricSum(t, env.reg, "edihub_partition_spills_total"); s < 1 {
		t.Errorf("edihub_partition_spills_total %v after the flood, want the flood spilled", s)
	}
	// two partitions' windows, and the flood's own bound beside its own
	if m := maxHeld.Load(); m > int64(2*window+bound) {
		t.Errorf("at most %d in hand during the flood, want no more than the windows and the flood's bound (%d)", m, 2*window+bound)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, env.reg, "edihub_partition_in_flight_messages") == 0 &&
			jetstreamtest.MetricSum(t, env.reg, "edihub_partition_spilled_partners") == 0
	}, "messages left in hand (or a partner left spilled) after the drain")
	if behind < quiet/2 {
		t.Fatalf("only %d of %d quiet interchanges were sent while the flood had a backlog: the test shows nothing (a faster machine needs a larger flood)", behind, quiet)
	}

	mu.Lock()
	lat := func(p string) []time.Duration {
		var out []time.Duration
		for i := 0; i < quiet; i++ {
			k := wire.ParsedSubject(p, "TEST") + " " + fmt.Sprintf("Q%03d", i)
			got, ok := arrived[k]
			if !ok {
				t.Fatalf("%s never reached PARSED live", k)
			}
			out = append(out, got.Sub(sent[k]))
		}
		if testing.Verbose() {
			t.Logf("%s: latencies in sending order: %v", p, out)
		}
		slices.Sort(out)
		return out
	}
	ql, cl := lat(q), lat(control)
	mu.Unlock()
	p99 := func(l []time.Duration) time.Duration { return l[(len(l)*99+99)/100-1] }
	t.Logf("flood %d, quiet %d (%d sent behind a backlog), window %d, partner bound %d, at most %d in hand, %v spills: quiet partner in the flood's partition p50 %v p99 %v; control partner alone in the other partition p50 %v p99 %v",
		flood, quiet, behind, window, bound, maxHeld.Load(), jetstreamtest.MetricSum(t, env.reg, "edihub_partition_spills_total"), ql[len(ql)/2], p99(ql), cl[len(cl)/2], p99(cl))
	// 250 ms, unless the machine itself gave the control partner, which
	// waits for nobody, more than that: then the quiet one must fare as
	// well as the control (a partition serial behind the flood's backlog
	// gave it 6.6 s against a few ms here)
	if limit := max(250*time.Millisecond, 2*p99(cl)+50*time.Millisecond); p99(ql) > limit {
		t.Fatalf("quiet partner's p99 publish→PARSED %v, want under %v (control's p99 %v)", p99(ql), limit, p99(cl))
	}

	var gotF, gotQ, gotC []string
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		switch m.Subject {
		case wire.ParsedSubject(fl, "TEST"):
			gotF = append(gotF, string(m.Data))
		case wire.ParsedSubject(q, "TEST"):
			gotQ = append(gotQ, string(m.Data))
		case wire.ParsedSubject(control, "TEST"):
			gotC = append(gotC, string(m.Data))
		}
	}
	checkExactlyInOrder(t, fl, gotF, flood, "F%06d")
	checkExactlyInOrder(t, q, gotQ, quiet, "Q%03d")
	checkExactlyInOrder(t, control, gotC, quiet, "Q%03d")
}

// checkExactlyInOrder fails unless got is format(0)..format(n-1): nothing
// lost, duplicated or reordered.
func checkExactlyInOrder(t *testing.T, partner string, got []string, n int, format string) {
	t.Helper()
	if len(got) != n {
		t.Errorf("%s: %d outputs, want %d", partner, len(got), n)
	}
	for i, g := range got {
		if want := fmt.Sprintf(format, i); g != want {
			t.Fatalf("%s: output %d is %s, want %s (lost, duplicated or reordered)", partner, i, g, want)
		}
	}
}

// A partner's head retried in place when the hub stops, its later
// messages in hand: the server hands them back to the next process with
// the later ones first (their ack wait runs out before the head's nak
// delay). The next process's lanes wait until all of them are back, then
// run the head first: the partner's order holds across the restart, and
// a partner in the same partition meanwhile is not held by it.
func TestPartnerOrderHoldsAcrossARestartWithItsHeadRetrying(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	storePath := t.TempDir() + "/counter.db"
	var failed atomic.Bool
	stage := echoStage("parse", func(m *Message) error {
		if string(m.Data) == "A1" && failed.CompareAndSwap(false, true) {
			return TransientError(wire.CauseUnknown, errors.New("a service is slow, once"))
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Partitions = 1
	cfg.Attempts.BackoffBase = 4 * time.Second // the head's nak delay: 2-4 s
	cfg.Attempts.BackoffMax = 4 * time.Second
	env := startHub(t, url, storePath, cfg, []Stage{stage}, nil)
	for _, d := range []string{"A1", "A2", "A3", "A4"} {
		jetstreamtest.PublishIngest(t, env.js, "ALPHA", d, nil)
	}
	jetstreamtest.PublishIngest(t, env.js, "BETA", "B1", nil)
	// BETA runs beside ALPHA's retried head
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return failed.Load() && jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 })
	env.stop()

	env2 := startHub(t, url, storePath, cfg, []Stage{stage}, nil)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env2.js, "PARSED") == 5 })
	var got []string
	for _, m := range jetstreamtest.StreamMsgs(t, env2.js, "PARSED") {
		got = append(got, string(m.Data))
	}
	if want := []string{"B1", "A1", "A2", "A3", "A4"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PARSED %v, want %v", got, want)
	}
}

// heldMessages sums edihub_partition_in_flight_messages{state="held"}:
// every message the partitions have in hand.
func heldMessages(t *testing.T, env *testEnv) float64 {
	t.Helper()
	mfs, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "edihub_partition_in_flight_messages" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "state" && l.GetValue() == "held" {
					sum += m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum
}
