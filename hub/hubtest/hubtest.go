package hubtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	ejs "github.com/edihub/edihub/jetstream"
)

// Start runs a hub until the test ends and returns its NATS URL. cfg may
// be nil (defaults); stages default to the built-in parse stage.
func Start(t testing.TB, cfg *hub.Config, stages ...hub.Stage) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := ejs.StartServer(&ejs.ServerOptions{DataDir: dir, Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	nc, _, err := ejs.Connect(srv.ClientURL(), "hubtest")
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	store, err := counter.Open(filepath.Join(dir, "counter.db"), nil)
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	var c hub.Config
	if cfg != nil {
		c = *cfg
	}
	c.SetDefaults()
	if len(stages) == 0 {
		stages = []hub.Stage{hub.ParseStage(c.EDIFACT, nil)}
	}
	h, err := hub.New(hub.Options{Config: c, Conn: nc, Store: store, Stages: stages, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatalf("hubtest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hubtest: hub stopped with %v", err)
		}
		nc.Close()
		store.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !h.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("hubtest: hub not ready within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return srv.ClientURL()
}
