package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func TestStoreBudgetNamesTheSettingToLower(t *testing.T) {
	c := Config{StoreLimit: 48 << 20, StoreLimitSource: "75% of the free disk"}
	c.DLQ.MaxBytes = 1 << 30
	c.setDefaults()
	err := c.Validate()
	if err == nil {
		t.Fatal("a 1 GiB DLQ on a 48 MiB store was accepted")
	}
	for _, want := range []string{"hub.dlq.max_bytes 1.0 GiB", "48.0 MiB", "75% of the free disk"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	c = Config{StoreLimit: 48 << 20}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("the defaults on a 48 MiB store: %v", err)
	}
	c.ClaimCheck.UploadMaxBytes = 1 << 30 // the upload stream's bound is counted too
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "hub.claim_check.upload_max_bytes 1.0 GiB") {
		t.Fatalf("a 1 GiB upload stream on a 48 MiB store: %v", err)
	}
}

// On a 64 MiB disk (a real tmpfs) the fixed 1 GiB reservations of DLQ,
// PARKING and POISON are refused by JetStream ("insufficient resources");
// sized from the store limit serve measures, every stream is created and
// takes a write.
func TestSmallDiskStartsWithReservationsFromTheStore(t *testing.T) {
	dir := jetstreamtest.Tmpfs(t, "64m")
	s := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: dir})
	nc, j := jetstreamtest.Connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	limit, src, err := ejs.StoreLimit(ctx, j, s.Server)
	if err != nil || limit <= 0 || limit > 64<<20 {
		t.Fatalf("store limit %d (%s), %v; want at most 64 MiB", limit, src, err)
	}
	store, err := counter.Open(t.TempDir()+"/counter.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	newHub := func(cfg Config) *Hub {
		h, err := New(Options{Config: cfg, Conn: nc, Store: store, Logger: zerolog.Nop(),
			Stages: []Stage{{Name: "parse", Handle: func(context.Context, *Message) error { return nil }}}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var old Config
	old.DLQ.MaxBytes, old.DLQ.ParkingMaxBytes, old.DLQ.PoisonMaxBytes = 1<<30, 1<<30, 1<<30
	err = newHub(old).Provision(ctx)
	if err == nil || !ejs.StorageFault(err) {
		t.Fatalf("fixed 1 GiB reservations on a 64 MiB disk: %v; want JetStream's insufficient resources", err)
	}
	for _, name := range []string{"DLQ", "PARKING", "POISON"} {
		_ = j.DeleteStream(ctx, name)
	}
	h := newHub(Config{StoreLimit: limit, StoreLimitSource: src})
	if err := h.Provision(ctx); err != nil {
		t.Fatalf("provision with reservations from the store: %v", err)
	}
	st, err := j.Stream(ctx, "DLQ")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().Config.MaxBytes; got != limit/16 {
		t.Errorf("DLQ MaxBytes %d, want %d (1/16 of the store)", got, limit/16)
	}
	if _, err := j.Publish(ctx, "edi.ingest.acme", []byte("UNA")); err != nil {
		t.Fatalf("publish to INGEST: %v", err)
	}
}
