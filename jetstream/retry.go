package jetstream

import (
	"context"
	"errors"
	"time"
)

// Retry runs f, each try with a deadline of attempt, until it succeeds,
// fails with an answer no retry changes, or ctx ends; it returns f's last
// error. It is for calls that are safe to repeat (a publish with a dedupe
// id, a read, a compare-and-set that checks what it wrote) on a cluster
// whose leaders move: a request sent while a stream or bucket elects a
// leader is never answered, and one long wait would hold the caller for
// its whole length after the new leader is there. Short tries resume it
// within one try of the leader's return; ctx keeps the overall bound.
//
// An error Transient calls the cluster's passing state is tried again; a
// Permanent(err) from f is returned as err at once (a caller marks a
// storage fault so: a full disk answers at once and stays full). A try that failed
// before its deadline (no responders, not leader) is followed by
// retryPause, so that a server answering "no" at once is not asked in a
// hot loop. attempt <= 0 is one try bounded by ctx only.
func Retry(ctx context.Context, attempt time.Duration, f func(context.Context) error) error {
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, cancel = context.WithTimeout(ctx, attempt)
		}
		began := time.Now()
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return p.err
		}
		if attempt <= 0 || ctx.Err() != nil || !Transient(err) {
			return err
		}
		if pause := retryPause - time.Since(began); pause > 0 && time.Since(began) < attempt {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(pause):
			}
		}
	}
}

// retryPause is the least time between two tries of Retry: a cluster
// electing a leader answers "no responders" or "not leader" at once, and
// an election takes a second or more, so four asks a second lose nothing.
const retryPause = 250 * time.Millisecond

// Permanent marks err as an answer Retry must not try again.
func Permanent(err error) error { return permanentError{err} }
