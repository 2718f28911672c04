package jetstreamtest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// RunUntilStopped runs run in the background until the returned stop (also
// called at cleanup) cancels it and waits up to grace; then after runs
// (may be nil). A run that fails or does not stop in time fails the test.
func RunUntilStopped(tb testing.TB, name string, grace time.Duration, run func(context.Context) error, after func()) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("%s run: %v", name, err)
				}
			case <-time.After(grace):
				tb.Errorf("%s did not stop in time", name)
			}
			if after != nil {
				after()
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}
