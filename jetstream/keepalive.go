package jetstream

import (
	"sync"
	"time"
)

// InProgresser is what KeepAlive needs of a message (js.Msg has it).
type InProgresser interface{ InProgress() error }

// KeepAlive tells the server every interval that msg is being worked on,
// so that a long but healthy piece of work is not redelivered behind its
// back, until the returned stop is called: it returns once the loop has
// ended, so no progress is sent after it (safe to call more than once).
// It is the one heartbeat loop of the module; the hub's per-attempt
// watchdog folds its heartbeat into its deadline timer instead, because on
// the hot path a goroutine per message would cost more than the work.
func KeepAlive(msg InProgresser, every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// ProgressFunc adapts a function to InProgresser.
type ProgressFunc func()

// InProgress calls f.
func (f ProgressFunc) InProgress() error { f(); return nil }
