package app

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
)

// A serve that does not stop within shutdown_timeout of SIGTERM (a store
// that answers nothing) exits with code 3, and its in-flight table is
// clean: the message that was running is no suspect at the next start.
// The exit runs in a child process (this test binary, re-run).
func TestShutdownIsBoundedAndChargesNoMessage(t *testing.T) {
	if dir := os.Getenv("EDIHUB_TEST_BOUNDED_SHUTDOWN"); dir != "" {
		inflight, _, err := counter.OpenInFlight(filepath.Join(dir, "inflight.map"), 2)
		if err != nil {
			os.Exit(1)
		}
		inflight.Start(1, 42) // a message running when the stop hangs
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // SIGTERM
		boundShutdown(ctx, 200*time.Millisecond, make(chan struct{}), inflight, zerolog.Nop())
		os.Exit(0) // not reached: boundShutdown exits
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownIsBoundedAndChargesNoMessage$")
	cmd.Env = append(os.Environ(), "EDIHUB_TEST_BOUNDED_SHUTDOWN="+dir)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitFatal {
		t.Fatalf("the hung stop ended with %v, want exit code %d", err, ExitFatal)
	}
	_, suspects, err := counter.OpenInFlight(filepath.Join(dir, "inflight.map"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(suspects) != 0 {
		t.Fatalf("suspects after the bounded exit: %v; the exit was charged to a message", suspects)
	}

	// A stop within the bound returns and exits nothing.
	stopped := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	close(stopped)
	boundShutdown(ctx, time.Hour, stopped, nopCloser{}, zerolog.Nop())
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
