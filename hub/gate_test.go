package hub

import (
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
	done := make(chan struct{})
	go func() {
		leave := g.enter(false, time.Hour, func() {})
		healthyIn.Store(true)
		leave()
		close(done)
	}()
	time.Sleep(50 * time.Millisecond) // give a wrong gate the chance to let it in
	if healthyIn.Load() {
		t.Fatal("a healthy message entered while the suspect ran alone")
	}
	leaveSuspect()
	<-done
}
