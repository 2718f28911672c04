package test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
)

// TestShortTriesGetPastAFrozenLeader: the three R3 writes of the hub's
// message path (the outputs' publish, the ledger's commit, the attempt
// store's compare-and-set) each sent while the leader of its stream is
// frozen (SIGSTOP: its socket stays open and answers nothing, as behind a
// cut link), from a client on another node. The first try is routed to
// the frozen leader and never answered, and a new leader takes at least
// raft's 4 s election timeout, so a single try of any length could not
// succeed; short tries (jetstream.Retry, 1 s each) do, once the cluster
// elected a new leader, and store each write once.
func TestShortTriesGetPastAFrozenLeader(t *testing.T) {
	nodes := startNATSCluster(t, 3)
	_, all := jetstreamtest.Connect(t, clusterURL(nodes))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const try = time.Second

	if _, err := all.CreateStream(ctx, js.StreamConfig{Name: "FROZEN", Subjects: []string{"frozen.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	led, err := ledger.OpenKV(ctx, all, &ledger.KVOptions{Bucket: "frozen-ledger", Replicas: 3, CommitTimeout: try})
	if err != nil {
		t.Fatal(err)
	}
	store, err := counter.OpenKV(ctx, all, &counter.KVOptions{Bucket: "frozen-attempts", Replicas: 3, Timeout: time.Minute, Attempt: try})
	if err != nil {
		t.Fatal(err)
	}
	k := counter.Key{Stream: "INGEST", Consumer: "ingest-p0", Seq: 7}
	if _, err := store.RecordFailure(k, counter.Failure{Kind: counter.KindError, Fingerprint: "f", Delivery: 1}); err != nil {
		t.Fatal(err) // the record exists: the write below is an Update on its revision
	}

	t.Run("outputs", func(t *testing.T) {
		leader := settledLeader(t, all, "FROZEN")
		j := clientBeside(t, nodes, leader)
		frozen := freeze(t, nodes, leader)
		defer signal(t, frozen, syscall.SIGCONT)
		msgs := []*nats.Msg{{Subject: "frozen.a", Data: []byte("1")}, {Subject: "frozen.b", Data: []byte("2")}}
		if _, err := ejs.PublishAllRetried(ctx, j, msgs, func(i int) string { return fmt.Sprint("out-", i) }, try); err != nil {
			t.Fatalf("publish past a frozen leader: %v", err)
		}
		expectMsgs(t, j, "FROZEN", 2)
	})
	t.Run("ledger commit", func(t *testing.T) {
		key := ledger.Key{Partner: "P", Sender: "S", Recipient: "R", ControlRef: "1"}
		var frozen *natsNode
		// A leader named settled can still move before the freeze lands
		// on a loaded machine (the previous subtest's healed node has the
		// higher term); a commit in one try then proves nothing, so the
		// freeze is set up again, at most three times.
		for round := 1; ; round++ {
			leader := settledLeader(t, all, "KV_frozen-ledger")
			j := clientBeside(t, nodes, leader)
			jled, err := ledger.BindKV(ctx, j, &ledger.KVOptions{Bucket: "frozen-ledger", CommitTimeout: try})
			if err != nil {
				t.Fatal(err)
			}
			frozen = freeze(t, nodes, leader)
			tries := 0
			err = ejs.Retry(ctx, try, func(actx context.Context) error { // as the hub's awaitCommit
				tries++
				return jled.Commit([]ledger.Key{key}, "INGEST:1")(actx)
			})
			if err != nil {
				signal(t, frozen, syscall.SIGCONT)
				t.Fatalf("ledger commit past a frozen leader: %v", err)
			}
			if tries >= 2 {
				break
			}
			signal(t, frozen, syscall.SIGCONT)
			if round == 3 {
				t.Fatalf("committed in %d try in %d rounds: the leader was never frozen", tries, round)
			}
			t.Logf("round %d committed in 1 try: %s no longer led when frozen; again", round, leader)
		}
		signal(t, frozen, syscall.SIGCONT)
		jetstreamtest.CheckFor(t, time.Minute, 250*time.Millisecond, func() error {
			led.Forget() // another instance committed: read the bucket again (as on a pin move)
			seen, err := led.Duplicate(key, "INGEST:2")
			if err == nil && !seen {
				err = fmt.Errorf("the committed interchange is not in the ledger")
			}
			return err
		})
	})
	t.Run("attempt store", func(t *testing.T) {
		leader := settledLeader(t, all, "KV_frozen-attempts")
		j := clientBeside(t, nodes, leader)
		jstore, err := counter.OpenKV(ctx, j, &counter.KVOptions{Bucket: "frozen-attempts", Replicas: 3, Timeout: time.Minute, Attempt: try})
		if err != nil {
			t.Fatal(err)
		}
		frozen := freeze(t, nodes, leader)
		defer signal(t, frozen, syscall.SIGCONT)
		r, err := jstore.RecordFailure(k, counter.Failure{Kind: counter.KindError, Fingerprint: "f", Delivery: 2})
		if err != nil {
			t.Fatalf("record a failure past a frozen leader: %v", err)
		}
		if r.Count != 2 {
			t.Fatalf("record after the second failure counts %d, want 2", r.Count)
		}
		signal(t, frozen, syscall.SIGCONT)
		jetstreamtest.CheckFor(t, time.Minute, 250*time.Millisecond, func() error {
			got, err := store.Get(k)
			if err == nil && got.Count != 2 {
				err = fmt.Errorf("stored record counts %d failures, want 2", got.Count)
			}
			return err
		})
	})
}

// clientBeside connects to the nodes other than the one named leader.
func clientBeside(t *testing.T, nodes []*natsNode, leader string) js.JetStream {
	t.Helper()
	var urls []string
	for _, n := range nodes {
		if n.name != leader {
			urls = append(urls, n.url)
		}
	}
	_, j := jetstreamtest.Connect(t, strings.Join(urls, ","))
	return j
}

// settledLeader names stream's leader once it has stayed the same for
// four polls and every replica is current: a node healed by the previous
// subtest may still move leaders around (its higher term), and freezing a
// node that just stopped leading proves nothing.
func settledLeader(t *testing.T, all js.JetStream, stream string) string {
	t.Helper()
	var leader string
	same := 0
	jetstreamtest.CheckFor(t, time.Minute, 500*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := all.Stream(ctx, stream)
		if err != nil {
			same = 0
			return err
		}
		c := s.CachedInfo().Cluster
		if c == nil || c.Leader == "" {
			same = 0
			return fmt.Errorf("%s has no leader", stream)
		}
		for _, r := range c.Replicas {
			if !r.Current || r.Offline {
				same = 0
				return fmt.Errorf("%s: replica %s not current", stream, r.Name)
			}
		}
		if c.Leader != leader {
			leader, same = c.Leader, 0
		}
		if same++; same < 4 {
			return fmt.Errorf("%s led by %s for %d polls", stream, leader, same)
		}
		return nil
	})
	return leader
}

// freeze stops (SIGSTOP) the node named and returns it.
func freeze(t *testing.T, nodes []*natsNode, name string) *natsNode {
	t.Helper()
	n := nodeNamed(t, nodes, name)
	signal(t, n, syscall.SIGSTOP)
	return n
}

// expectMsgs waits until stream holds want messages and fails on more.
func expectMsgs(t *testing.T, j js.JetStream, stream string, want int) {
	t.Helper()
	jetstreamtest.CheckFor(t, time.Minute, 250*time.Millisecond, func() error {
		got := streamMsgs(t, j, stream)
		if got > want {
			t.Fatalf("%s holds %d messages, want %d (a try stored twice)", stream, got, want)
		}
		if got != want {
			return fmt.Errorf("%s holds %d messages, want %d", stream, got, want)
		}
		return nil
	})
}
