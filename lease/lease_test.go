package lease

import (
	"context"
	"errors"
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
