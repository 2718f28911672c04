package app

import (
	"context"
	"testing"
	"time"

	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/rs/zerolog"
)

func TestStartSandboxChildDisabledAndStops(t *testing.T) {
	off := false
	wait, err := startSandboxChild(context.Background(), forensics.Config{Enabled: &off}, "", "nats://127.0.0.1:1", ejs.ClientAuth{}, "", t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	wait() // returns at once: nothing started

	// Enabled: the child (this test binary, which exits at once without
	// the protocol variable) is restarted with backoff until ctx ends, and
	// wait returns promptly after.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	wait, err = startSandboxChild(ctx, forensics.Config{}, "", "nats://127.0.0.1:1", ejs.ClientAuth{}, "", t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the supervisor did not stop after ctx")
	}
}
