package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// runServer is RunBasicJetStreamServer: port -1, a temp dir, cleanup.
func runServer(t *testing.T, dir string) string {
	t.Helper()
	s, err := StartServer(&ServerOptions{DataDir: dir, Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

func connect(t *testing.T, url string) js.JetStream {
	t.Helper()
	nc, j, err := Connect(url, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return j
}

func TestEnsureStreamIdempotentAndRefusals(t *testing.T) {
	ctx := context.Background()
	j := connect(t, runServer(t, t.TempDir()))
	cfg := js.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: js.FileStorage, MaxAge: time.Hour}
	for i, want := range []Change{Created, Unchanged} {
		got, err := EnsureStream(ctx, j, cfg)
		if err != nil || got != want {
			t.Fatalf("call %d: got %v, %v; want %v", i, got, err, want)
		}
	}
	cfg.MaxAge = 2 * time.Hour
	if got, err := EnsureStream(ctx, j, cfg); err != nil || got != Updated {
		t.Fatalf("max age change: %v %v", got, err)
	}
	s, _ := j.Stream(ctx, "T")
	if s.CachedInfo().Config.MaxAge != 2*time.Hour {
		t.Fatalf("max age not applied: %v", s.CachedInfo().Config.MaxAge)
	}
	cfg.Storage = js.MemoryStorage
	_, err := EnsureStream(ctx, j, cfg)
	if err == nil {
		t.Fatal("storage change was not refused")
	}
	t.Logf("refusal reads: %v", err)
}

func TestRestartKeepsMessagesAndDedupes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := StartServer(&ServerOptions{DataDir: dir, Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	nc, j, err := Connect(s.ClientURL(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureStream(ctx, j, js.StreamConfig{Name: "K", Subjects: []string{"k.>"}, Storage: js.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		ack, err := Publish(ctx, j, &nats.Msg{Subject: "k.a", Data: []byte("x")}, "INGEST:7:poison")
		if err != nil {
			t.Fatal(err)
		}
		if ack.Duplicate != (i == 1) {
			t.Fatalf("publish %d: duplicate=%v", i, ack.Duplicate)
		}
	}
	nc.Close()
	s.Shutdown()
	s.WaitForShutdown()

	j2 := connect(t, runServer(t, dir))
	st, err := j2.Stream(ctx, "K")
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Fatalf("after restart: %d messages, want 1", n)
	}
}
