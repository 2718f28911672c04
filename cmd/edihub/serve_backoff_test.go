package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A store that cannot be used at start makes serve wait and try again
// (1 s, then 2 s) instead of exiting into a crash loop; any other error
// ends serve at once.
func TestServeBacksOffOnAStoreFault(t *testing.T) {
	runs := 0
	err := serveWithStoreBackoff(context.Background(), zerolog.Nop(), func(context.Context) error {
		runs++
		if runs < 3 {
			return failedErr("stream DLQ: insufficient resources")
		}
		return nil
	})
	if err != nil || runs != 3 {
		t.Fatalf("err %v after %d runs; want nil after 3", err, runs)
	}
	runs = 0
	err = serveWithStoreBackoff(context.Background(), zerolog.Nop(), func(context.Context) error {
		runs++
		return usageErr("nats.replicas 3 but a single server")
	})
	if err == nil || runs != 1 {
		t.Fatalf("a config error: %v after %d runs; want it returned after 1", err, runs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = serveWithStoreBackoff(ctx, zerolog.Nop(), func(context.Context) error {
		return errors.New("write: no space left on device")
	})
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("stopped while waiting: %v; want the last store error", err)
	}
}
