package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// BreakerState is the state of a Breaker.
type BreakerState int

const (
	BreakerClosed   BreakerState = iota // calls pass; failures are counted
	BreakerOpen                         // calls are refused until the cool-down has passed
	BreakerHalfOpen                     // one trial call is in flight; others are refused
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("BreakerState(%d)", int(s))
}

// Defaults for a Breaker's zero fields.
const (
	DefaultBreakerThreshold = 3
	DefaultBreakerCoolDown  = time.Minute
)

// ErrBreakerOpen is returned by Allow and Do while the breaker refuses calls.
var ErrBreakerOpen = errors.New("sandbox: circuit breaker open")

// Breaker protects the worker from a sandbox that keeps failing for
// infrastructure reasons (binary missing, fork failing, limits refused):
// after Threshold failures in a row it opens and refuses calls, so the
// worker does not fork a doomed child for every poison message. After
// CoolDown it lets exactly one trial through (half-open); a success closes
// it, a failure opens it for another CoolDown.
//
// Only infrastructure failures should be recorded: a child that crashes on
// the payload is a successful sandbox run. Do does this for Run.
//
// The zero value is usable (defaults apply); set fields before first use.
type Breaker struct {
	Threshold int              // consecutive failures that open the breaker; default 3
	CoolDown  time.Duration    // how long it stays open; default 1 minute
	Now       func() time.Time // clock, injectable for tests; default time.Now
	// OnStateChange is called on every transition, outside the breaker's
	// lock and in order, so it may alert (once per opening) or log. It must
	// not block for long: the caller of Allow/Record waits for it.
	OnStateChange func(from, to BreakerState)

	mu       sync.Mutex
	state    BreakerState
	failures int       // consecutive, while closed
	openedAt time.Time // when it last opened
	trial    bool      // half-open: the trial is in flight
	notifyMu sync.Mutex
}

// NewBreaker returns a breaker with the given threshold and cool-down
// (zero values mean the defaults).
func NewBreaker(threshold int, coolDown time.Duration) *Breaker {
	return &Breaker{Threshold: threshold, CoolDown: coolDown}
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func (b *Breaker) threshold() int {
	if b.Threshold > 0 {
		return b.Threshold
	}
	return DefaultBreakerThreshold
}

func (b *Breaker) coolDown() time.Duration {
	if b.CoolDown > 0 {
		return b.CoolDown
	}
	return DefaultBreakerCoolDown
}

// State returns the current state. An open breaker whose cool-down has
// passed still reports open until the next Allow turns it half-open.
func (b *Breaker) State() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Allow reports whether a call may proceed. A nil result obliges the caller
// to report the outcome with Success, Failure or Release.
func (b *Breaker) Allow() error {
	b.mu.Lock()
	from := b.state
	switch b.state {
	case BreakerClosed:
		b.mu.Unlock()
		return nil
	case BreakerOpen:
		if wait := b.coolDown() - b.now().Sub(b.openedAt); wait > 0 {
			b.mu.Unlock()
			return fmt.Errorf("%w: retry in %s", ErrBreakerOpen, wait.Round(time.Millisecond))
		}
		b.state, b.trial = BreakerHalfOpen, true
		b.transition(from, BreakerHalfOpen) // unlocks
		return nil
	default: // half-open
		if b.trial {
			b.mu.Unlock()
			return fmt.Errorf("%w: trial call in flight", ErrBreakerOpen)
		}
		b.trial = true
		b.mu.Unlock()
		return nil
	}
}

// Success records a call that worked: it resets the count and closes a
// half-open breaker.
func (b *Breaker) Success() {
	b.mu.Lock()
	from := b.state
	b.failures, b.trial = 0, false
	if b.state == BreakerClosed {
		b.mu.Unlock()
		return
	}
	b.state = BreakerClosed
	b.transition(from, BreakerClosed)
}

// Failure records an infrastructure failure: the Threshold-th in a row, or
// any failure of the half-open trial, opens the breaker.
func (b *Breaker) Failure() {
	b.mu.Lock()
	from := b.state
	b.failures++
	b.trial = false
	if from == BreakerHalfOpen || (from == BreakerClosed && b.failures >= b.threshold()) {
		b.state, b.openedAt = BreakerOpen, b.now()
		b.transition(from, BreakerOpen)
		return
	}
	b.mu.Unlock()
}

// Release gives back an allowed call that proved nothing either way (the
// caller gave up): a half-open breaker lets the next call be the trial.
func (b *Breaker) Release() {
	b.mu.Lock()
	b.trial = false
	b.mu.Unlock()
}

// transition runs with b.mu held and releases it; the hook runs after
// unlocking but under notifyMu, so hooks see transitions in order.
func (b *Breaker) transition(from, to BreakerState) {
	b.notifyMu.Lock()
	b.mu.Unlock()
	defer b.notifyMu.Unlock()
	if b.OnStateChange != nil && from != to {
		b.OnStateChange(from, to)
	}
}

// Do runs fn if the breaker allows it and records the result: nil is a
// success, a context cancellation or deadline is neither (the caller gave
// up; that says nothing about the sandbox), anything else a failure.
func (b *Breaker) Do(fn func() error) error {
	if err := b.Allow(); err != nil {
		return err
	}
	err := fn()
	switch {
	case err == nil:
		b.Success()
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		b.Release()
	default:
		b.Failure()
	}
	return err
}

// Run is sandbox.Run behind the breaker. Only errors count as failures; a
// report of any outcome (even a crash) is a success of the sandbox.
func (b *Breaker) Run(ctx context.Context, spec *Spec, payload []byte) (*Report, error) {
	var r *Report
	err := b.Do(func() error {
		var err error
		r, err = Run(ctx, spec, payload)
		return err
	})
	return r, err
}
