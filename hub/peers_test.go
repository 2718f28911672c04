package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// turnOwners gives every partition to one instance at a time: the test
// moves them (the worker of the other hands over, as to a joining owner).
// While both is set every instance prefers it (their views of the
// membership disagree for a moment).
type turnOwners struct {
	turn *atomic.Int32
	me   int32
	both *atomic.Bool
}

func (o turnOwners) Prefers(int) bool { return o.turn.Load() == o.me || o.both.Load() }

// refusingKV is a hub's view of the shared attempt bucket whose outcome
// writes are refused while refuse is set, as a full disk refuses the
// larger write: solo marks, reads and deletes still go through.
type refusingKV struct {
	*counter.KVStore
	refuse *atomic.Bool
}

func (s refusingKV) RecordFailure(k counter.Key, f counter.Failure) (counter.Record, error) {
	if s.refuse.Load() {
		return counter.Record{}, fmt.Errorf("record failure of %s: %w", k, syscall.ENOSPC)
	}
	return s.KVStore.RecordFailure(k, f)
}

// peerPair is two hubs on one server sharing one attempt bucket (as the
// hubs of a cluster do) and one keyring, and the partition's owner.
type peerPair struct {
	hubs  [2]*testEnv
	kv    [2]*counter.KVStore
	turn  atomic.Int32
	both  atomic.Bool
	calls [2]atomic.Int32
}

// startPeers starts the two hubs; stage(i) is hub i's stage, refuse[i]
// whether hub i's outcome writes are refused now.
func startPeers(t *testing.T, cfg Config, announce bool, refuse *[2]atomic.Bool, stage func(p *peerPair, i int) Stage) *peerPair {
	t.Helper()
	srv := jetstreamtest.StartServer(t, nil)
	keys, err := audit.NewKeyring([]byte("a key the hubs of a cluster share"))
	if err != nil {
		t.Fatal(err)
	}
	p := &peerPair{}
	for i := range p.hubs {
		_, j := jetstreamtest.Connect(t, srv.URL)
		kv, err := counter.OpenKV(context.Background(), j, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.kv[i] = kv
		p.hubs[i] = startHub(t, srv.URL, "", cfg, []Stage{stage(p, i)}, func(o *Options) {
			o.Store, o.Keyring, o.Owners = refusingKV{kv, &refuse[i]}, keys, turnOwners{&p.turn, int32(i), &p.both}
			o.testHooks.noPeerOutcomes = !announce
		})
	}
	return p
}

// moveFrom moves the partition from hub i to the other, from i's stage:
// the run waits until i's worker has seen the move and stops pulling
// (ownerCheckEvery), so that the next delivery is the other hub's.
// Its outcome is settled, and announced, before i unpins the partition.
func (p *peerPair) moveFrom(i int) {
	p.turn.Store(int32(1 - i))
	time.Sleep(2 * ownerCheckEvery)
}

// key is the attempt record's key of m on hub i.
func (p *peerPair) key(i int, m *Message) counter.Key {
	h := p.hubs[i].hub
	return counter.Key{Stream: m.Stream, Consumer: h.partitionConsumer(m.Partition).Durable, Seq: m.Seq}
}

func peerEvents(t *testing.T, env *testEnv, event string) float64 {
	t.Helper()
	mfs, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "edihub_cluster_unstored_announcements_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "event" && l.GetValue() == event {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func heldCount(h *Hub) int {
	h.unstoredMu.Lock()
	defer h.unstoredMu.Unlock()
	return h.unstoredN
}

func peerConfig() Config {
	cfg := pinnedConfig()
	cfg.Partitions = 1
	cfg.Attempts.Threshold = 3
	cfg.Retry.MaxAttempts = 50 // transient, retried in place: never exhausted here
	cfg.Attempts.BackoffBase, cfg.Attempts.BackoffMax = 400*time.Millisecond, 400*time.Millisecond
	return cfg
}

var errDirectory = errors.New("partner directory did not answer")

// Hub A's attempt store refuses the outcome of a failed attempt; the
// partition moves to hub B, whose store takes writes. B stores A's
// outcome from A's announcement before it decides: the record it runs
// with explains A's attempt, and B does not run it alone as a suspect
// (a solo mark of an attempt whose outcome is stored elsewhere would be
// charged as a death if B's own outcome were then refused). A drops what
// it held once B says it stored it. Without the announcements, B charges
// the attempt (the control).
func TestRefusedOutcomeSurvivesAPartitionMove(t *testing.T) {
	for _, announce := range []bool{true, false} {
		t.Run(fmt.Sprintf("announce=%v", announce), func(t *testing.T) {
			var refuse [2]atomic.Bool
			refuse[0].Store(true)
			seen := make(chan counter.Record, 1)
			p := startPeers(t, peerConfig(), announce, &refuse, func(p *peerPair, i int) Stage {
				return echoStage("parse", func(m *Message) error {
					p.calls[i].Add(1)
					if i == 0 {
						p.moveFrom(0)
						return TransientError(wire.CauseUnknown, errDirectory)
					}
					rec, err := p.kv[1].Get(p.key(1, m))
					if err != nil {
						return err
					}
					select {
					case seen <- rec:
					default:
					}
					return nil
				})
			})
			a, b := p.hubs[0], p.hubs[1]
			jetstreamtest.PublishIngest(t, a.js, "ACME", "UNB+move'", nil)
			jetstreamtest.Eventually(t, 30*time.Second, func() bool {
				return jetstreamtest.CountMsgs(t, b.js, "PARSED") == 1
			}, "B did not process the message")
			rec := <-seen
			refusedOnA := int(p.calls[0].Load())
			t.Logf("A refused %d outcomes; B ran on count %d, solo runs %d", refusedOnA, rec.Count, rec.SoloRuns)
			if !announce {
				// the control: A's attempt has no outcome in the store, so B ran
				// the message alone as a suspect
				if rec.Count != 0 || rec.SoloRuns != 1 {
					t.Fatalf("without announcements B ran on %+v, want no outcome and a solo mark", rec)
				}
				return
			}
			if rec.Count != refusedOnA || rec.SoloRuns != 0 || rec.Failures[0].Delivery != 1 {
				t.Fatalf("B ran on %+v: want A's %d refused outcomes (the first of delivery 1) and no solo run", rec, refusedOnA)
			}
			if got := peerEvents(t, b, "applied"); got != float64(refusedOnA) {
				t.Fatalf("B applied %v of A's outcomes, want %d", got, refusedOnA)
			}
			jetstreamtest.Eventually(t, 10*time.Second, func() bool { return heldCount(a.hub) == 0 && heldCount(b.hub) == 0 },
				"A still holds the outcomes B stored")
		})
	}
}

// Both hubs' stores refuse every outcome (a bucket whose disk is full;
// the smaller solo marks get through) while the partition moves back and
// forth after each hub's attempts, more times than the poison threshold.
// Each hub holds its own outcomes and those its peer announced, so no run
// is a suspect and no death is charged; when the store takes writes
// again, the hub that has the message stores every attempt's outcome
// once and the message is parsed. Without the announcements it goes to
// POISON as process-died: each hub's solo marks are deaths to the other.
func TestRefusedOutcomesAcrossMovesAreNoDeaths(t *testing.T) {
	for _, announce := range []bool{true, false} {
		t.Run(fmt.Sprintf("announce=%v", announce), func(t *testing.T) {
			var refuse [2]atomic.Bool
			refuse[0].Store(true)
			refuse[1].Store(true)
			var healthy atomic.Bool
			var mu sync.Mutex
			var final counter.Record
			failed := -1 // failed attempts before the healthy run
			p := startPeers(t, peerConfig(), announce, &refuse, func(p *peerPair, i int) Stage {
				return echoStage("parse", func(m *Message) error {
					if !healthy.Load() {
						p.calls[i].Add(1)
						p.moveFrom(i)
						return TransientError(wire.CauseUnknown, errDirectory)
					}
					rec, err := p.kv[i].Get(p.key(i, m))
					mu.Lock()
					final, failed = rec, int(p.calls[0].Load()+p.calls[1].Load())
					mu.Unlock()
					return err
				})
			})
			const moves = 5 // > the threshold (3)
			jetstreamtest.PublishIngest(t, p.hubs[0].js, "ACME", "UNB+moves'", nil)
			jetstreamtest.Eventually(t, 60*time.Second, func() bool {
				return p.calls[0].Load()+p.calls[1].Load() > moves || jetstreamtest.CountMsgs(t, p.hubs[0].js, "POISON") > 0
			}, "the message did not move %d times", moves)
			refuse[0].Store(false)
			refuse[1].Store(false)
			healthy.Store(true)
			j := p.hubs[0].js
			jetstreamtest.Eventually(t, 30*time.Second, func() bool {
				return jetstreamtest.CountMsgs(t, j, "PARSED")+jetstreamtest.CountMsgs(t, j, "POISON") == 1
			}, "the message did not leave INGEST")
			poison := jetstreamtest.StreamMsgs(t, j, "POISON")
			t.Logf("failed attempts: hub A %d, hub B %d; POISON %d", p.calls[0].Load(), p.calls[1].Load(), len(poison))
			if !announce {
				if len(poison) != 1 || poison[0].Header.Get(wire.HdrPoisonCause) != "process-died" {
					t.Fatalf("without announcements: POISON %d, want the message as process-died (what the announcements prevent)", len(poison))
				}
				return
			}
			for _, m := range poison {
				t.Fatalf("POISON: cause %s: %s", m.Header.Get(wire.HdrPoisonCause), m.Header.Get(wire.HdrErrorMsg))
			}
			mu.Lock()
			defer mu.Unlock()
			if final.Count != failed || final.Deaths() != 0 {
				t.Fatalf("the record at the healthy run: %+v; want each of the %d failed attempts once, no death", final, failed)
			}
			for _, env := range p.hubs {
				jetstreamtest.Eventually(t, 10*time.Second, func() bool { return heldCount(env.hub) == 0 }, "a hub still holds stored outcomes")
			}
		})
	}
}

// An announcement without x-hub-mac, or signed with a key the hubs do
// not share, is dropped and counted; one a peer signed is held.
func TestForgedAnnouncementIsRefused(t *testing.T) {
	keys, _ := audit.NewKeyring([]byte("a key the hubs of a cluster share"))
	other, _ := audit.NewKeyring([]byte("a key an intruder made up itself"))
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", pinnedConfig(), []Stage{echoStage("parse", nil)}, func(o *Options) {
		o.Keyring = keys
	})
	body := fmt.Appendf(nil, `{"op":"kept","from":"peer","stream":"INGEST","consumer":"ingest-p0","seq":7,"failure":{"kind":"error","class":"transient","fingerprint":"fp","delivery":1,"solo":true,"at":%q}}`,
		time.Now().UTC().Format(time.RFC3339Nano))
	send := func(keys *audit.Keyring) {
		m := &nats.Msg{Subject: wire.UnstoredSubject, Header: nats.Header{}, Data: body}
		audit.SignAnnouncement(keys, m.Header, m.Subject, body)
		if err := env.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	send(nil)   // no MAC
	send(other) // a MAC of another key
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return peerEvents(t, env, "refused") == 2 }, "forged announcements not refused")
	if n := heldCount(env.hub); n != 0 || peerEvents(t, env, "received") != 0 {
		t.Fatalf("a forged announcement was taken: %d held", n)
	}
	send(keys)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return heldCount(env.hub) == 1 }, "a peer's announcement was not held")
	if got := peerEvents(t, env, "received"); got != 1 {
		t.Fatalf("received %v, want 1", got)
	}
}
