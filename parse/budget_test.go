package parse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/hub"
)

// admitted reports whether ch was closed within a short wait; the waits
// asserted never-closed are the budget's, not the clock's (the channel
// would close at once if the budget let it through).
func admitted(ch <-chan error) bool {
	select {
	case <-ch:
		return true
	case <-time.After(50 * time.Millisecond):
		return false
	}
}

// within is what ch gets, failing the test after 10 s: an admission that
// needs no release (the machine may be slow; the budget is not).
func within(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("not admitted in 10 s")
		return nil
	}
}

// pollUntil polls cond every 5 ms for up to 10 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// admitAsync admits size in a goroutine; the channel gets Admit's error
// and the release is sent on rel.
func admitAsync(ctx context.Context, b *Budget, size int, rel chan<- func()) <-chan error {
	ch := make(chan error, 1)
	go func() {
		r, err := b.Admit(ctx, size)
		if err == nil {
			rel <- r
		}
		ch <- err
	}()
	return ch
}

// The budget's admissions, one step at a time: sizes in units of u (an
// input whose estimate is one unit), a budget of three units.
func TestBudgetAdmits(t *testing.T) {
	const u = budgetFrom
	unit := Estimate(u)
	for _, c := range []struct {
		name string
		held []int // sizes admitted first, in order (each must fit)
		size int
		// want: admitted at once; else it waits, and is admitted once
		// the first held one is released
		want   bool
		inUse  int64 // the budget in use after the held and size are in
		waited bool
	}{
		{name: "small inputs are not counted", held: []int{u, u, u}, size: u - 1, want: true, inUse: 3 * unit},
		{name: "fits", held: []int{u}, size: 2 * u, want: true, inUse: 3 * unit},
		{name: "does not fit: waits", held: []int{u, u}, size: 2 * u, inUse: 3 * unit, waited: true},
		{name: "over the whole budget, alone: runs", size: 10 * u, want: true, inUse: 3 * unit},
		{name: "over the whole budget, beside another: waits for it", held: []int{u}, size: 10 * u, inUse: 3 * unit, waited: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBudget(3 * unit)
			var rels []func()
			for _, s := range c.held {
				r, err := b.Admit(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				rels = append(rels, r)
			}
			rel := make(chan func(), 1)
			ch := admitAsync(context.Background(), b, c.size, rel)
			if c.want {
				if err := within(t, ch); err != nil {
					t.Fatal(err)
				}
			} else {
				if admitted(ch) {
					t.Fatalf("admitted at once, want a wait (%s)", b)
				}
				rels[0]()
				rels[0]() // twice: counted once
				if err := <-ch; err != nil {
					t.Fatal(err)
				}
			}
			if got := b.InUse(); got != c.inUse {
				t.Errorf("in use %d, want %d", got, c.inUse)
			}
			if got := b.waits.Load() > 0; got != c.waited {
				t.Errorf("waits counted: %v, want %v", got, c.waited)
			}
			(<-rel)()
			for _, r := range rels {
				r()
			}
			if b.InUse() != 0 {
				t.Errorf("in use %d after every release", b.InUse())
			}
		})
	}
}

// Waiters are served in order: a small interchange that would fit does
// not overtake a large one waiting before it (the large one would starve).
func TestBudgetServesInOrder(t *testing.T) {
	const u = budgetFrom
	b := NewBudget(2 * Estimate(u))
	first, err := b.Admit(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	rel := make(chan func(), 2)
	large := admitAsync(context.Background(), b, 2*u, rel)
	pollUntil(t, "the large one waiting", func() bool { return b.waits.Load() == 1 })
	small := admitAsync(context.Background(), b, u, rel)
	if admitted(small) {
		t.Fatal("the small one overtook the large one waiting before it")
	}
	first()
	if err := <-large; err != nil {
		t.Fatal(err)
	}
	if admitted(small) {
		t.Fatal("the small one was admitted beside the large one, over the budget")
	}
	(<-rel)()
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	(<-rel)()
	if b.InUse() != 0 || b.waits.Load() != 2 || b.waitNanos.Load() <= 0 {
		t.Fatalf("in use %d, waits %d, wait time %d", b.InUse(), b.waits.Load(), b.waitNanos.Load())
	}
}

// A waiter whose context ends takes nothing and leaves the queue, so the
// one behind it is admitted when it fits.
func TestBudgetWaiterGivesUp(t *testing.T) {
	const u = budgetFrom
	b := NewBudget(2 * Estimate(u))
	first, err := b.Admit(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rel := make(chan func(), 2)
	large := admitAsync(ctx, b, 2*u, rel)
	pollUntil(t, "the large one waiting", func() bool { return b.waits.Load() == 1 })
	small := admitAsync(context.Background(), b, u, rel)
	pollUntil(t, "the small one waiting", func() bool { return b.waits.Load() == 2 })
	cancel()
	if err := <-large; !errors.Is(err, context.Canceled) {
		t.Fatalf("the large one: %v, want context.Canceled", err)
	}
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	if got := b.InUse(); got != 2*Estimate(u) {
		t.Fatalf("in use %d, want the first and the small one", got)
	}
	first()
	(<-rel)()
	if b.InUse() != 0 {
		t.Fatalf("in use %d", b.InUse())
	}
}

// The default is three quarters of a Go memory limit, else a quarter of
// the machine's (or cgroup's) memory; the estimate counts the collector's
// garbage only without a limit.
func TestDefaultMemoryBudget(t *testing.T) {
	old := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	n, src := DefaultMemoryBudget()
	if mem, _ := machineMemory(); mem > 0 && (n != mem/4 || src == "") {
		t.Fatalf("no memory limit: %d (%s), want a quarter of %d", n, src, mem)
	}
	gogc := debug.SetGCPercent(400)
	t.Cleanup(func() { debug.SetGCPercent(gogc) })
	if got := Estimate(1 << 20); got != 5*LiveBytesPerInputByte<<20 {
		t.Fatalf("GOGC=400, no limit: estimate %d", got)
	}
	debug.SetMemoryLimit(4 << 30)
	if n, src := DefaultMemoryBudget(); n != 3<<30 || src != "3/4 of the Go memory limit" {
		t.Fatalf("a 4 GiB limit: %d (%s)", n, src)
	}
	if got := Estimate(1 << 20); got != LiveBytesPerInputByte<<20 {
		t.Fatalf("under a memory limit: estimate %d", got)
	}
}

// The stage waits for room at most half of what is left of its deadline,
// then gives the interchange back as unavailable (delivered again, not
// charged), and parses it once there is room. The give-up has a log line
// of its own (not the hub's line for a service that did not answer).
func TestStageWaitsForTheBudget(t *testing.T) {
	data := tinySegments(2 * budgetFrom)
	b := NewBudget(Estimate(len(data)))
	held, err := b.Admit(context.Background(), len(data))
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	st := New(Config{}, &Options{Budget: b, Logger: zerolog.New(&logged)})
	msg := func() *hub.Message {
		return &hub.Message{Partner: "ACME", Stream: "INGEST", Seq: 1, Header: nats.Header{}, Data: data}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m := msg()
	err = st.Handle(ctx, m)
	var u *hub.UnavailableError
	if !errors.As(err, &u) || len(m.Outputs()) != 0 {
		t.Fatalf("with the budget full: %v (%d outputs), want an UnavailableError", err, len(m.Outputs()))
	}
	var line struct {
		Level, Component, Wait, Partner, Message string
		Bytes                                    int
	}
	if err := json.Unmarshal(logged.Bytes(), &line); err != nil || line.Wait != "memory_budget" || line.Level != "warn" ||
		line.Component != "parse" || line.Partner != "ACME" || line.Bytes != len(data) || !strings.Contains(line.Message, "no room in the parse memory budget") {
		t.Fatalf("the give-up's log line %q (%v), want one warn line of its own", logged.String(), err)
	}
	done := make(chan error, 1)
	m = msg()
	go func() { done <- st.Handle(context.Background(), m) }()
	pollUntil(t, "the stage waiting", func() bool { return b.waits.Load() == 2 })
	held()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(m.Outputs()) != 1 || b.InUse() != 0 {
		t.Fatalf("%d outputs, %d in use after the stage", len(m.Outputs()), b.InUse())
	}
}
