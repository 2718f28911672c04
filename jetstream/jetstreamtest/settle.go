package jetstreamtest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// Settle waits until every consumer of the streams has nothing pending,
// nothing awaiting an ack and no request being redelivered, and the
// streams' states are the same in two looks in a row: what was handed out
// is done and nothing more is on its way. A test then asserts that
// something did not arrive, without a sleep. It fails the test after
// timeout.
func Settle(tb testing.TB, j js.JetStream, timeout time.Duration, streams ...string) {
	tb.Helper()
	var last map[string]StreamState
	CheckFor(tb, timeout, 50*time.Millisecond, func() error {
		for _, n := range streams {
			s, err := j.Stream(context.Background(), n)
			if err != nil {
				return err
			}
			for c := range s.ListConsumers(context.Background()).Info() {
				if c.NumPending > 0 || c.NumAckPending > 0 || c.NumRedelivered > 0 {
					last = nil
					return fmt.Errorf("consumer %s of %s busy: %d pending, %d awaiting ack", c.Name, n, c.NumPending, c.NumAckPending)
				}
			}
		}
		now := StreamStates(tb, j, streams...)
		if !maps.Equal(now, last) {
			last = now
			return fmt.Errorf("streams still changing: %v", now)
		}
		return nil
	})
}
