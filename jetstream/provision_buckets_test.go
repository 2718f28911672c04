package jetstream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The first caller creates the bucket, the next ones bind to it, and a
// setting that differs is changed in place (its values kept).
func TestEnsureKeyValueCreatesBindsAndUpdates(t *testing.T) {
	s := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := js.KeyValueConfig{Bucket: "b", History: 2, TTL: time.Hour, Storage: js.FileStorage}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = ejs.EnsureKeyValue(ctx, j, want) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	kv, err := ejs.EnsureKeyValue(ctx, j, want)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	want.TTL = 2 * time.Hour
	kv, err = ejs.EnsureKeyValue(ctx, j, want)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.TTL() != 2*time.Hour || st.Values() != 1 {
		t.Fatalf("after the update: ttl %v, %d values; want 2h, 1", st.TTL(), st.Values())
	}
	want.Storage = js.MemoryStorage
	if _, err := ejs.EnsureKeyValue(ctx, j, want); err == nil {
		t.Fatal("a storage change was accepted; JetStream cannot make it")
	}
}

func TestEnsureObjectStoreCreatesAndBinds(t *testing.T) {
	s := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := js.ObjectStoreConfig{Bucket: "o", Storage: js.FileStorage, Description: "d"}
	for range 2 {
		if _, err := ejs.EnsureObjectStore(ctx, j, want); err != nil {
			t.Fatal(err)
		}
	}
	want.Description = "e"
	obj, err := ejs.EnsureObjectStore(ctx, j, want)
	if err != nil {
		t.Fatal(err)
	}
	st, err := obj.Status(ctx)
	if err != nil || st.Description() != "e" {
		t.Fatalf("description %q, %v; want e", st.Description(), err)
	}
}

func TestTransientErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"timeout", context.DeadlineExceeded, true},
		{"no meta leader", &js.APIError{Code: 503, ErrorCode: 10008}, true},
		{"no peers", &js.APIError{Code: 500, ErrorCode: 10005}, true},
		{"name in use", js.ErrStreamNameAlreadyInUse, false},
		{"bad config", &js.APIError{Code: 400, ErrorCode: 10052}, false},
		{"other", errors.New("x"), false},
	} {
		if got := ejs.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}
