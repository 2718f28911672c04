package hub

import (
	"sync"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
)

// gate lets healthy messages run side by side and a suspect run alone.
//
// A crash kills the message in flight in every partition, and JetStream
// redelivers each of them with a higher delivery count: from the counts
// alone, the message that killed the process and its innocent neighbours
// look the same. So a message redelivered with an attempt that recorded no
// outcome (a suspect) runs alone: it waits until the handlers in flight
// are done, marks in the attempt store that it runs alone, and holds the
// others back while it runs. If the process dies then, the death is its
// own. The cost is paid only after a crash; the happy path takes a shared
// lock (a few nanoseconds) and writes nothing.
//
// The lock is sync.RWMutex, whose Lock is writer-preferring: once a
// suspect waits, new healthy messages wait behind it, so that on many busy
// partitions the handlers in flight drain and the suspect gets its turn.
type gate struct{ mu sync.RWMutex }

// enter waits for the gate, sending progress while it waits so that the
// server does not redeliver the waiting message, and returns the function
// that leaves it (safe to call more than once, from any goroutine).
func (g *gate) enter(solo bool, heartbeat time.Duration, inProgress func()) (leave func()) {
	try, lock, unlock := g.mu.TryRLock, g.mu.RLock, g.mu.RUnlock
	if solo {
		try, lock, unlock = g.mu.TryLock, g.mu.Lock, g.mu.Unlock
	}
	if !try() { // the happy path starts no heartbeat
		stop := ejs.KeepAlive(ejs.ProgressFunc(inProgress), heartbeat)
		lock()
		stop()
	}
	var once sync.Once
	return func() { once.Do(unlock) }
}
