package hub

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The gate directly: healthy messages run side by side; a suspect waits
// for the healthy ones in flight, sends progress while it waits, and holds
// every other message back while it runs.
func TestGateSuspectRunsAlone(t *testing.T) {
	var g gate
	var progress atomic.Int32
	tick := func() { progress.Add(1) }

	leaveA := g.enter(false, time.Hour, tick)
	leaveB := g.enter(false, time.Hour, tick) // a second healthy message does not wait
	var suspectIn atomic.Bool
	suspectLeft := make(chan func())
	go func() {
		leave := g.enter(true, 5*time.Millisecond, tick)
		suspectIn.Store(true)
		suspectLeft <- leave
	}()
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return progress.Load() >= 2 }, "the waiting suspect sends no progress")
	if suspectIn.Load() {
		t.Fatal("the suspect entered while healthy messages were in flight")
	}
	leaveA()
	leaveA() // leaving twice is harmless
	if suspectIn.Load() {
		t.Fatal("the suspect entered while one healthy message was still in flight")
	}
	leaveB()
	leaveSuspect := <-suspectLeft

	var healthyIn atomic.Bool
	var waiting atomic.Int32
	done := make(chan struct{})
	go func() {
		leave := g.enter(false, 5*time.Millisecond, func() { waiting.Add(1) })
		healthyIn.Store(true)
		leave()
		close(done)
	}()
	// Progress comes only from a message that could not enter.
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return waiting.Load() >= 2 }, "the healthy message neither waits nor says so")
	if healthyIn.Load() {
		t.Fatal("a healthy message entered while the suspect ran alone")
	}
	leaveSuspect()
	<-done
}

// Under sustained load on many partitions (there is nearly always a
// healthy message in flight) a suspect still gets the gate: once it waits,
// new healthy messages wait behind it, so the ones in flight drain.
func TestGateSuspectIsNotStarvedUnderLoad(t *testing.T) {
	var g gate
	var inside atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 64 { // partitions
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				leave := g.enter(false, time.Hour, func() {})
				inside.Add(1)
				time.Sleep(time.Millisecond) // the handler's work
				inside.Add(-1)
				leave()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return inside.Load() > 1 }, "no load")
	for i := range 20 {
		start := time.Now()
		entered := make(chan func())
		go func() { entered <- g.enter(true, time.Hour, func() {}) }()
		select {
		case leave := <-entered:
			if n := inside.Load(); n != 0 {
				t.Fatalf("suspect %d runs with %d healthy messages in flight", i, n)
			}
			leave()
		case <-time.After(10 * time.Second):
			t.Fatalf("suspect %d did not get the gate in 10s under load", i)
		}
		t.Logf("suspect %d waited %v", i, time.Since(start))
	}
}
