package hub

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A hub whose start fails after it launched workers stops and waits for
// them before Run returns: no handler runs on behind the caller's back.
func TestRunWaitsForItsWorkersOnAFailedStart(t *testing.T) {
	cfg := fastConfig()
	cfg.Partitions = 64 // many consumers to create: the first workers are busy before the last fails
	var entered, exited atomic.Int32
	stage := echoStage("parse", func(*Message) error {
		entered.Add(1)
		defer exited.Add(1)
		time.Sleep(300 * time.Millisecond) // the handler's work
		return nil
	})
	url := jetstreamtest.StartServer(t, nil).URL
	nc, j := jetstreamtest.Connect(t, url)
	defer nc.Close()
	store, err := counter.Open(filepath.Join(t.TempDir(), "counter.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, err := New(Options{Config: cfg, Conn: nc, Store: store, Stages: []Stage{stage}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range jetstreamtest.PartnersInDistinctPartitions(16, cfg.Partitions) {
		jetstreamtest.PublishIngest(t, j, p, "x", nil)
	}
	// A consumer the hub cannot update (its ack policy is fixed) fails the start.
	if _, err := j.CreateConsumer(ctx, "INGEST", js.ConsumerConfig{Durable: "ingest-stray", FilterSubject: wire.IngestWildcard, AckPolicy: js.AckNonePolicy}); err != nil {
		t.Fatal(err)
	}
	if err := h.Run(ctx); err == nil {
		t.Fatal("Run started with a consumer it cannot update")
	}
	if e, x := entered.Load(), exited.Load(); e != x {
		t.Fatalf("Run returned with %d of %d handlers still running", e-x, e)
	}
	t.Logf("%d handlers ran, all finished before Run returned", entered.Load())
}
