package jetstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// TestPartnerRepliesNeverReachTheHub: with nats.auth users, a partner is
// in an account of its own. A JetStream publish to its ingest subject with
// a reply subject naming the hub's state (AUDIT, a bucket, another
// partner's ingest, POISON, a DLQ) is stored once in INGEST, and the
// PubAck goes nowhere inside the hub's account; a plain publish still gets
// its PubAck, and the partner still reads its own results.
func TestPartnerRepliesNeverReachTheHub(t *testing.T) {
	s, err := StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", Users: []AuthUser{
		{Name: "hub", Password: "hub-pw-123", Role: RoleHub},
		{Name: "acme", Password: "acme-pw-123", Role: RolePartner, Partner: "ACME"},
		{Name: "beta", Password: "beta-pw-123", Role: RolePartner, Partner: "BETA"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	ctx := context.Background()
	connect := func(a ClientAuth) (*nats.Conn, js.JetStream) {
		t.Helper()
		opts, err := a.Options()
		if err != nil {
			t.Fatal(err)
		}
		nc, j, err := Connect(s.ClientURL(), a.User, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc, j
	}
	_, hub := connect(ClientAuth{User: "hub", Password: "hub-pw-123"})
	for name, subjects := range map[string][]string{
		"INGEST": {"edi.ingest.>"}, "PARSED": {"edi.parsed.>"},
		"SINK": {"edi.audit.events", "edi.poison.parse", "edi.parse.dlq.>"},
	} {
		if _, err := hub.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: subjects}); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := hub.CreateKeyValue(ctx, js.KeyValueConfig{Bucket: "tickets"})
	if err != nil {
		t.Fatal(err)
	}

	acme, acmeJS := connect(ClientAuth{User: "acme", Password: "acme-pw-123", InboxPrefix: PartnerInboxPrefix("ACME")})
	for _, reply := range []string{"edi.audit.events", "$KV.tickets.x", "edi.ingest.BETA", "edi.poison.parse", "edi.parse.dlq.schema"} {
		if err := acme.PublishMsg(&nats.Msg{Subject: "edi.ingest.ACME", Reply: reply, Data: []byte("UNB")}); err != nil {
			t.Fatal(err)
		}
	}
	// A PubAck of a later publish comes after those of the earlier ones.
	if _, err := acmeJS.Publish(ctx, "edi.ingest.ACME", []byte("UNB last")); err != nil {
		t.Fatalf("the partner's own publish gets no PubAck: %v", err)
	}
	// The hub's own writes after them: a stray PubAck, sent before, would
	// be stored before these.
	if _, err := hub.Publish(ctx, "edi.audit.events", []byte("hub")); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "marker", []byte("hub")); err != nil {
		t.Fatal(err)
	}
	info := func(name string) js.StreamState {
		st, err := hub.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		i, err := st.Info(ctx, js.WithSubjectFilter(">"))
		if err != nil {
			t.Fatal(err)
		}
		return i.State
	}
	if st := info("SINK"); st.Msgs != 1 {
		t.Errorf("a PubAck reached the hub's AUDIT/POISON/DLQ subjects: %d messages %v", st.Msgs, st.Subjects)
	}
	if st := info("INGEST"); st.Msgs != 6 || st.Subjects["edi.ingest.ACME"] != 6 {
		t.Errorf("INGEST: want the partner's 6 messages on edi.ingest.ACME only, have %d: %v", st.Msgs, st.Subjects)
	}
	if _, err := kv.Get(ctx, "x"); !errors.Is(err, js.ErrKeyNotFound) {
		t.Errorf("a PubAck reached the tickets bucket: %v", err)
	}

	// Results through the stream import.
	own, err := acme.SubscribeSync("edi.parsed.ACME.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := acme.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Publish(ctx, "edi.parsed.ACME.INVOIC", []byte("result")); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Publish(ctx, "edi.parsed.BETA.INVOIC", []byte("beta's")); err != nil {
		t.Fatal(err)
	}
	if m, err := own.NextMsg(5 * time.Second); err != nil || string(m.Data) != "result" {
		t.Fatalf("own results: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := acmeJS.CreateOrUpdateConsumer(cctx, "PARSED", js.ConsumerConfig{Durable: "ACME"}); err == nil {
		t.Fatal("a partner created a consumer (its deliver subject would be in the hub's account)")
	}
}
