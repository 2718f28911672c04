package jetstreamtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Settle returns once a consumer has acked what it was handed, and fails
// while a message waits for it.
func TestSettleWaitsForConsumers(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	nc, j := jetstreamtest.Connect(t, srv.URL)
	defer nc.Close()
	ctx := context.Background()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: js.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	c, err := j.CreateConsumer(ctx, "S", js.ConsumerConfig{Durable: "c", AckPolicy: js.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Publish(ctx, "s.x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ft := &fakeTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		jetstreamtest.Settle(ft, j, 200*time.Millisecond, "S")
	}()
	if !strings.Contains(ft.msg, "consumer c of S busy: 1 pending") {
		t.Fatalf("Settle with a pending message: %q", ft.msg)
	}
	m, err := c.Next()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Settle(t, j, 5*time.Second, "S")
}
