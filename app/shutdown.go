package app

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// boundShutdown ends the process when serve has not stopped (stopped not
// closed) within timeout of ctx's end. On a full disk the drain waited for
// publishes and store flushes that never finished and SIGTERM never
// stopped serve (issue 25). The in-flight table is closed first, which
// marks it clean: the messages still running are not suspects at the next
// start, so none is charged with this exit, which is the environment's.
func boundShutdown(ctx context.Context, timeout time.Duration, stopped <-chan struct{}, inflight io.Closer, log zerolog.Logger) {
	select {
	case <-stopped:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		log.Error().Str("component", "app").Dur("shutdown_timeout", timeout).
			Msg("serve did not stop within shutdown_timeout (the store answers nothing?); exiting now, nothing is charged to the messages in flight")
		_ = inflight.Close()
		os.Exit(ExitFatal)
	}
}
