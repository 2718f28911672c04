package hubtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/hub/hubtest"
)

// What a downstream app's test looks like: publish an interchange, read
// its parsed message.
func TestStart(t *testing.T) {
	url := hubtest.Start(t, nil)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	interchange := "UNB+UNOC:3+S+R+261130:1200+REF1'UNH+1+ORDERS:D:96A:UN'BGM+220+PO1+9'UNT+3+1'UNZ+1+REF1'"
	if _, err := js.Publish(ctx, "edi.ingest.ACME", []byte(interchange)); err != nil {
		t.Fatal(err)
	}
	c, err := js.OrderedConsumer(ctx, "PARSED", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"edi.parsed.ACME.ORDERS"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if m.Headers().Get("x-message-id") != "REF1" {
		t.Fatalf("headers %v", m.Headers())
	}
}
