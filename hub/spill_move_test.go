package hub

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// spillMove is two hubs on one server (peerPair: pinned partition
// consumers and park consumers, one partition) with a flood F of 200,
// partner_max_in_flight 8, and hub A's stage holding the messages named
// in stuck until the test releases them.
type spillMove struct {
	t       *testing.T
	p       *peerPair
	a, b    *testEnv
	mu      sync.Mutex
	runs    map[string]int
	on      map[string]int // the hub that ran it
	reached map[string]chan struct{}
	release map[string]func()
}

const spillMoveFlood = 200

func startSpillMove(t *testing.T, stuck ...string) *spillMove {
	cfg := peerConfig() // pinned, one partition: every partner shares it
	cfg.PartitionConcurrency = 2
	cfg.PartnerMaxInFlight = 8
	cfg.Attempts.AckWait = 3 * time.Second
	cfg.Attempts.Deadline = 2 * time.Minute // A's stuck messages are held by the test, not timed out
	m := &spillMove{t: t, runs: map[string]int{}, on: map[string]int{}, reached: map[string]chan struct{}{}, release: map[string]func(){}}
	gates := map[string]chan struct{}{}
	for _, d := range stuck {
		gate := make(chan struct{})
		gates[d], m.reached[d], m.release[d] = gate, make(chan struct{}, 1), sync.OnceFunc(func() { close(gate) })
	}
	var refuse [2]atomic.Bool
	m.p = startPeers(t, cfg, true, &refuse, func(p *peerPair, i int) Stage {
		return echoStage("parse", func(msg *Message) error {
			d := string(msg.Data)
			if gate := gates[d]; gate != nil && i == 0 {
				select {
				case m.reached[d] <- struct{}{}:
				default:
				}
				<-gate
			}
			m.mu.Lock()
			m.runs[d]++
			m.on[d] = i
			m.mu.Unlock()
			return nil
		})
	})
	t.Cleanup(func() { // before the hubs stop (cleanups run last first)
		for _, release := range m.release {
			release()
		}
	})
	m.a, m.b = m.p.hubs[0], m.p.hubs[1]
	return m
}

func (m *spillMove) publish(partner string, from, to int) {
	for i := from; i < to; i++ {
		jetstreamtest.PublishIngest(m.t, m.a.js, partner, fmt.Sprintf("%s%05d", partner, i), nil)
	}
}

// spilled waits until env has n spilled partners.
func (m *spillMove) spilled(env *testEnv, n float64, why string) {
	m.t.Helper()
	jetstreamtest.CheckFor(m.t, 30*time.Second, 50*time.Millisecond, func() error {
		if s := testCounter(m.t, env, "edihub_partition_spilled_partners"); s != n {
			return fmt.Errorf("spilled partners %v, want %v (%s)", s, n, why)
		}
		return nil
	})
}

// waitReached waits until A's stage holds d.
func (m *spillMove) waitReached(d string) {
	m.t.Helper()
	select {
	case <-m.reached[d]:
	case <-time.After(60 * time.Second):
		m.t.Fatalf("A's stage did not reach %s (%d of F parsed)", d, len(parsedOf(m.t, m.a, "F")))
	}
}

// spillOnA floods F with its head held on A until F spills there, with
// a quiet partner Q parsed meanwhile, then lets F's park drain on A until
// A's stage holds stuckAt (the bound's worth of the park in A's hand).
func (m *spillMove) spillOnA(quiet int, stuckAt string) {
	m.t.Helper()
	m.publish("F", 0, spillMoveFlood)
	m.publish("Q", 0, quiet)
	jetstreamtest.CheckFor(m.t, 60*time.Second, 50*time.Millisecond, func() error {
		return checkPartnerParsed(m.a, m.t, "Q", quiet)
	})
	m.spilled(m.a, 1, "F spilled on A")
	m.release["F00000"]()
	m.waitReached(stuckAt)
	if p := parkConsumers(m.t, m.a); len(p) != 1 {
		m.t.Fatalf("park consumers %v while A drains, want F's", p)
	}
}

// check waits until each partner's outputs are in PARSED once each, in
// order, no park is left and neither hub counts a spilled partner; then
// sends F five more (run from B's partition consumer: F is back) and
// checks that every message ran exactly once and nothing went to the DLQ
// or POISON.
func (m *spillMove) check(want map[string]int) {
	m.t.Helper()
	jetstreamtest.CheckFor(m.t, 2*time.Minute, 50*time.Millisecond, func() error {
		for partner, n := range want {
			if err := checkPartnerParsed(m.b, m.t, partner, n); err != nil {
				return err
			}
		}
		if p := parkConsumers(m.t, m.b); len(p) != 0 {
			return fmt.Errorf("park consumers left: %v", p)
		}
		for i, env := range m.p.hubs {
			if s := testCounter(m.t, env, "edihub_partition_spilled_partners"); s != 0 {
				return fmt.Errorf("hub %d: spilled partners %v after the drain, want 0", i, s)
			}
		}
		return nil
	})
	m.publish("F", spillMoveFlood, spillMoveFlood+5)
	want["F"] += 5
	jetstreamtest.CheckFor(m.t, 60*time.Second, 50*time.Millisecond, func() error {
		return checkPartnerParsed(m.b, m.t, "F", want["F"])
	})
	jetstreamtest.Settle(m.t, m.b.js, 30*time.Second, m.b.hub.cfg.Streams.Ingest, m.b.hub.cfg.Streams.Parsed)
	total := 0
	for partner, n := range want {
		total += n
		if err := checkPartnerParsed(m.b, m.t, partner, n); err != nil {
			m.t.Error(err)
		}
	}
	if p := parkConsumers(m.t, m.b); len(p) != 0 {
		m.t.Errorf("park consumers %v after the flood's tail, want none (the partition has F back)", p)
	}
	m.mu.Lock()
	for data, n := range m.runs {
		if n != 1 {
			m.t.Errorf("%s ran %d times, want once", data, n)
		}
	}
	if len(m.runs) != total {
		m.t.Errorf("%d ran, want %d", len(m.runs), total)
	}
	m.mu.Unlock()
	for _, stream := range []string{m.b.hub.cfg.Streams.DLQ, m.b.hub.cfg.Streams.Poison} {
		if n := jetstreamtest.CountMsgs(m.t, m.b.js, stream); n != 0 {
			m.t.Errorf("%s holds %d, want 0", stream, n)
		}
	}
}

func (m *spillMove) ranOn(d string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.on[d]; ok {
		return h
	}
	return -1
}

// A flooding partner spilled on hub A, its park drained on A; the
// partition moves to hub B while A's stage holds the park's messages
// (F00100 and the bound's worth behind it in A's lane). A stops its
// drain and unpins the park; B finds the park and drains it, but holds
// what it fetches until what A had out is acked (lanes.DrainHold). Every
// partner's outputs are in PARSED once each, in order, each message ran
// once, and B's partition takes the flood back when its park is empty.
func TestSpillDrainMovesToTheNewOwnerInOrder(t *testing.T) {
	m := startSpillMove(t, "F00000", "F00100")
	const quiet = 6 // under the bound: Q never spills
	m.spillOnA(quiet, "F00100")
	m.p.turn.Store(1) // the partition moves to B while A's stage holds F's park messages
	m.spilled(m.a, 0, "A stopped its drain")
	m.spilled(m.b, 1, "B found F's park")
	m.publish("Q", quiet, 2*quiet)
	m.release["F00100"]()
	m.check(map[string]int{"F": spillMoveFlood, "Q": 2 * quiet})
	if h := m.ranOn("F00100"); h != 0 {
		t.Errorf("F00100 ran on hub %d, want A (it held it at the move)", h)
	}
	if h := m.ranOn(fmt.Sprintf("F%05d", spillMoveFlood-1)); h != 1 {
		t.Errorf("the flood's last ran on hub %d, want B (the drain moved)", h)
	}
}

// The same move as a membership change reaches two instances: for a
// while both prefer the partition (B opens F's park and drains it beside
// A's drain), then A gives it up. The park is pinned: one drain at a time
// gets its messages, and a drain newly pinned holds what it fetches until
// what the other had out is acked, so F stays in order.
func TestSpillDrainInOrderWhileTwoOwnersOverlap(t *testing.T) {
	m := startSpillMove(t, "F00000", "F00100")
	const quiet = 6 // under the bound: Q never spills
	m.spillOnA(quiet, "F00100")
	m.p.both.Store(true) // B prefers the partition too, A still does
	m.spilled(m.b, 1, "B found F's park")
	m.release["F00100"]()
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if n := len(parsedOf(t, m.b, "F")); n < 150 {
			return fmt.Errorf("%d of F parsed while both hubs prefer the partition", n)
		}
		return nil
	})
	m.p.turn.Store(1) // A gives the partition up
	m.p.both.Store(false)
	m.publish("Q", quiet, 2*quiet)
	m.check(map[string]int{"F": spillMoveFlood, "Q": 2 * quiet})
}
