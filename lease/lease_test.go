package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Three managers contend for one lease: one job runs at a time; when its
// holder stops renewing (a paused or dead process), another takes over
// with a larger token, and the old holder's fence refuses to act.
func TestOneHolderTakeOverAndFencing(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	open := func(holder string) *Manager {
		m, err := Open(ctx, j, &Options{Bucket: "leases-test", TTL: time.Second, Holder: holder})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// A holder that will stop renewing, as a process that froze.
	frozen, err := open("frozen").TryAcquire(ctx, "probe")
	if err != nil || frozen == nil {
		t.Fatalf("first take: %v %v", frozen, err)
	}
	if again, _ := open("other").TryAcquire(ctx, "probe"); again != nil {
		t.Fatal("a held lease was taken twice")
	}

	var running, maxRunning, runs atomic.Int32
	job := func(jctx context.Context, fence func(context.Context) error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			if m := maxRunning.Load(); n > m && !maxRunning.CompareAndSwap(m, n) {
				continue
			}
			break
		}
		runs.Add(1)
		<-jctx.Done()
	}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		m := open(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = m.Run(rctx, "probe", job)
		}()
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return runs.Load() == 1 }, "the lease of a frozen holder was not taken over")
	if err := frozen.Fence(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("the frozen holder's fence: %v, want ErrLost", err)
	}
	// The new holder's token is above the frozen one's.
	k, err := open("reader").kv.Get(ctx, key("probe"))
	if err != nil || k.Revision() <= frozen.Token() {
		t.Fatalf("token after take-over: %v (frozen %d), %v", k, frozen.Token(), err)
	}
	cancel()
	wg.Wait()
	if maxRunning.Load() != 1 {
		t.Fatalf("%d jobs ran at once, want 1", maxRunning.Load())
	}
	// Released on shutdown: the next process takes it at once.
	if h, err := open("next").TryAcquire(ctx, "probe"); err != nil || h == nil {
		t.Fatalf("after a clean shutdown the lease was not free: %v %v", h, err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{TTL: time.Millisecond}, {TTL: time.Second, Replicas: 7}} {
		o.setDefaults()
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// Three members share 8 parts, each part preferred by exactly one; when
// one leaves, the two left take its parts and keep their own.
func TestMembershipSharesParts(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	var ms []*Membership
	var stops []context.CancelFunc
	for _, h := range []string{"a", "b", "c"} {
		m, err := Open(ctx, j, &Options{Bucket: "members-test", TTL: time.Second, Holder: h})
		if err != nil {
			t.Fatal(err)
		}
		mb, err := m.Join(ctx, 8)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		go func() { _ = mb.Run(rctx) }()
		ms, stops = append(ms, mb), append(stops, cancel)
	}
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	owners := func(of []*Membership) map[int]int {
		out := map[int]int{}
		for p := range 8 {
			for i, m := range of {
				if m.Prefers(p) {
					out[p] = out[p]*10 + i + 1
				}
			}
		}
		return out
	}
	jetstreamtest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		for _, m := range ms {
			if len(m.Members()) != 3 {
				return fmt.Errorf("%s sees %v", m.ID(), m.Members())
			}
		}
		return nil
	})
	before := owners(ms)
	shares := map[int]int{}
	for p := range 8 {
		if o := before[p]; o < 1 || o > 3 {
			t.Fatalf("part %d preferred by %d (members 1-3, one each): %v", p, o, before)
		}
		shares[before[p]]++
	}
	for i := 1; i <= 3; i++ {
		if shares[i] < 2 || shares[i] > 3 {
			t.Fatalf("three members share 8 parts %v, want 2 or 3 each", shares)
		}
	}
	stops[2]()
	jetstreamtest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if n := len(ms[0].Members()) + len(ms[1].Members()); n != 4 {
			return fmt.Errorf("members after one left: %v %v", ms[0].Members(), ms[1].Members())
		}
		return nil
	})
	after := owners(ms[:2])
	share := map[int]int{}
	for p := range 8 {
		if after[p] != 1 && after[p] != 2 {
			t.Fatalf("after a member left, part %d preferred by %d: %v", p, after[p], after)
		}
		share[after[p]]++
	}
	if share[1] != 4 || share[2] != 4 {
		t.Fatalf("two members share 8 parts %v, want 4 each", share)
	}
}

// The weight spreads parts over members without a bound (a weak hash
// once gave every part to one member), and the bound evens the shares
// out; a member leaving moves its own parts and few others.
func TestAssignSpreadsParts(t *testing.T) {
	members := []string{"host-1_100-0a1b2c3d", "host-2_100-0a1b2c3e", "host-3_100-0a1b2c3f"}
	count := map[string]int{}
	for _, m := range assign(members, 8) {
		count[m]++
	}
	for _, m := range members {
		if count[m] < 2 || count[m] > 3 {
			t.Fatalf("8 parts over 3 members: %v", count)
		}
	}
	unbounded := map[string]int{}
	for p := range 300 {
		best, bestH := "", uint64(0)
		for _, m := range members {
			if v := rendezvous(m, p); best == "" || v > bestH {
				best, bestH = m, v
			}
		}
		unbounded[best]++
	}
	for _, m := range members {
		if unbounded[m] < 70 || unbounded[m] > 130 {
			t.Fatalf("300 parts over 3 members by weight alone: %v", unbounded)
		}
	}
	before, after := assign(members, 30), assign(members[:2], 30)
	moved := 0
	for p := range 30 {
		if before[p] != members[2] && before[p] != after[p] {
			moved++
		}
	}
	if moved > 5 {
		t.Fatalf("a member leaving moved %d of the others' parts, want few", moved)
	}
}
