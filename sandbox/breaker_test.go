package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestBreaker() (*Breaker, *fakeClock, *[]string) {
	clk := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	var changes []string
	b := NewBreaker(3, time.Minute)
	b.Now = clk.Now
	b.OnStateChange = func(from, to BreakerState) { changes = append(changes, from.String()+">"+to.String()) }
	return b, clk, &changes
}

var errInfra = errors.New("fork failed")

func TestBreakerOpensAfterThresholdAndRecovers(t *testing.T) {
	b, clk, changes := newTestBreaker()
	fail := func() error { return errInfra }
	for i := range 2 {
		if err := b.Do(fail); !errors.Is(err, errInfra) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if b.State() != BreakerClosed {
		t.Fatalf("opened after 2 failures")
	}
	b.Do(fail)
	if b.State() != BreakerOpen {
		t.Fatalf("state %s after 3 failures", b.State())
	}
	called := false
	if err := b.Do(func() error { called = true; return nil }); !errors.Is(err, ErrBreakerOpen) || called {
		t.Fatalf("open breaker let a call through: %v", err)
	}
	clk.Advance(59 * time.Second)
	if err := b.Allow(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("allowed before the cool-down: %v", err)
	}
	clk.Advance(time.Second)
	if err := b.Allow(); err != nil {
		t.Fatalf("no trial after the cool-down: %v", err)
	}
	if b.State() != BreakerHalfOpen {
		t.Fatalf("state %s", b.State())
	}
	if err := b.Allow(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("a second call got through while the trial is in flight: %v", err)
	}
	b.Success()
	if b.State() != BreakerClosed {
		t.Fatalf("state %s after a successful trial", b.State())
	}
	want := "[closed>open open>half-open half-open>closed]"
	if got := fmt.Sprint(*changes); got != want {
		t.Errorf("transitions %s, want %s", got, want)
	}
}

func TestBreakerFailedTrialReopens(t *testing.T) {
	b, clk, changes := newTestBreaker()
	for range 3 {
		b.Do(func() error { return errInfra })
	}
	clk.Advance(time.Minute)
	b.Do(func() error { return errInfra })
	if b.State() != BreakerOpen {
		t.Fatalf("state %s after a failed trial", b.State())
	}
	// A new full cool-down from the failed trial.
	clk.Advance(30 * time.Second)
	if err := b.Allow(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("reopened breaker allowed a call early: %v", err)
	}
	want := "[closed>open open>half-open half-open>open]"
	if got := fmt.Sprint(*changes); got != want {
		t.Errorf("transitions %s, want %s", got, want)
	}
}

func TestBreakerSuccessResetsCount(t *testing.T) {
	b, _, _ := newTestBreaker()
	for range 5 {
		b.Do(func() error { return errInfra })
		b.Do(func() error { return errInfra })
		b.Do(func() error { return nil })
	}
	if b.State() != BreakerClosed {
		t.Fatalf("non-consecutive failures opened the breaker")
	}
}

func TestBreakerCancellationDoesNotCount(t *testing.T) {
	b, clk, _ := newTestBreaker()
	for range 5 {
		b.Do(func() error { return fmt.Errorf("sandbox: %w", context.Canceled) })
	}
	if b.State() != BreakerClosed {
		t.Fatalf("cancellations opened the breaker")
	}
	for range 3 {
		b.Do(func() error { return errInfra })
	}
	clk.Advance(time.Minute)
	// A cancelled trial hands the trial slot back.
	b.Do(func() error { return context.DeadlineExceeded })
	if err := b.Allow(); err != nil {
		t.Fatalf("trial slot not released after a cancelled trial: %v", err)
	}
}

func TestBreakerDefaultsAndConcurrency(t *testing.T) {
	var b Breaker // zero value
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { b.Do(func() error { return errInfra }) })
	}
	wg.Wait()
	if b.State() != BreakerOpen {
		t.Fatalf("state %s", b.State())
	}
	if err := b.Allow(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("%v", err)
	}
}

// End to end: a Spec pointing at a missing binary is an infrastructure
// failure; three open the breaker, which then refuses without forking; after
// the cool-down one trial with a working spec closes it.
func TestBreakerWithRun(t *testing.T) {
	b, clk, changes := newTestBreaker()
	broken := testSpec(t, "fine")
	broken.Path = filepath.Join(t.TempDir(), "missing-edihub")
	for i := range 3 {
		if _, err := b.Run(context.Background(), broken, []byte("x")); err == nil {
			t.Fatalf("run %d: no error", i)
		}
	}
	if b.State() != BreakerOpen {
		t.Fatalf("state %s", b.State())
	}
	if _, err := b.Run(context.Background(), testSpec(t, "fine"), []byte("x")); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("open breaker: %v", err)
	}
	clk.Advance(time.Minute)
	// A crashing child is a working sandbox: the trial succeeds.
	r, err := b.Run(context.Background(), testSpec(t, "panic"), []byte("x"))
	if err != nil || r.Outcome != OutcomePanic {
		t.Fatalf("trial: %v %+v", err, r)
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state %s after the trial", b.State())
	}
	want := "[closed>open open>half-open half-open>closed]"
	if got := fmt.Sprint(*changes); got != want {
		t.Errorf("transitions %s, want %s", got, want)
	}
}
