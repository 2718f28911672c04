package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func openKV(t *testing.T, js jetstream.JetStream, o *KVOptions) *KVStore {
	t.Helper()
	s, err := OpenKV(context.Background(), js, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustSeen(t *testing.T, l Ledger, k Key, want bool) {
	t.Helper()
	seen, err := l.Seen(k)
	if err != nil {
		t.Fatalf("seen %v: %v", k, err)
	}
	if seen != want {
		t.Fatalf("seen %v = %v, want %v", k, seen, want)
	}
}

func TestKVSeenRecordRecorded(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	k := Key{Partner: "acme", Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"}
	mustSeen(t, s, k, false)
	before := time.Now()
	if err := s.Record(k); err != nil {
		t.Fatal(err)
	}
	mustSeen(t, s, k, true)
	at, err := s.Recorded(k)
	if err != nil || at.Before(before) || at.After(time.Now()) {
		t.Fatalf("recorded at %v (err %v), want after %v", at, err, before)
	}
	if s.TTL() != 30*24*time.Hour {
		t.Fatalf("default ttl %v", s.TTL())
	}
	for _, other := range []Key{
		{Partner: "acme", Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0002"},
		{Partner: "acme", Sender: "SENDER2", Recipient: "RECEIVER1", ControlRef: "REF0001"},
		{Partner: "acme", Sender: "SENDER1", Recipient: "RECEIVER2", ControlRef: "REF0001"},
		{Partner: "globex", Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"},
		{Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"},
	} {
		mustSeen(t, s, other, false)
	}
	if n, err := s.Purge(); err != nil || n != 0 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if n, err := s.Len(); err != nil || n != 1 {
		t.Fatalf("len: %d %v", n, err)
	}
}

// The server expires entries by their per-key TTL; Seen stops at the TTL
// exactly, before the server drops the entry.
func TestKVTTLExpiry(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, &KVOptions{TTL: 2 * time.Second})
	k := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "1"}
	if err := s.Record(k); err != nil {
		t.Fatal(err)
	}
	mustSeen(t, s, k, true)
	jetstreamtest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		if seen, err := s.Seen(k); err != nil || seen {
			return fmt.Errorf("still seen (err %v)", err)
		}
		return nil
	})
	// the server drops its batch entry too (the bucket's MaxAge), not only Seen
	jetstreamtest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		keys, err := s.kv.ListKeys(context.Background())
		if err != nil {
			return err
		}
		for k := range keys.Keys() {
			if strings.HasPrefix(k, batchPrefix) {
				return fmt.Errorf("batch entry %s still in the bucket", k)
			}
		}
		return nil
	})
	if err := s.Record(k); err != nil { // recorded again after expiry
		t.Fatal(err)
	}
	mustSeen(t, s, k, true)
}

// Interchanges committed at once (the hub's partitions) share batch
// entries; every one is seen, by this store and by another that reads the
// bucket afresh (a restart, or another hub).
func TestKVCommitGroups(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := Key{Partner: fmt.Sprint("p", w), Sender: "S", Recipient: "R", ControlRef: fmt.Sprint(i)}
				errs <- s.Commit([]Key{k}, fmt.Sprintf("INGEST:%d", w*each+i))(t.Context())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	n, groups := s.CommitStats()
	if n != writers*each || groups < 1 || groups >= n {
		t.Fatalf("%d interchanges in %d batch entries: want them grouped", n, groups)
	}
	t.Logf("%d interchanges in %d batch entries", n, groups)
	if got := s.Indexed(); got != writers*each {
		t.Fatalf("the index holds %d interchanges, want %d", got, writers*each)
	}
	other := openKV(t, js, nil)
	for w := range writers {
		for i := range each {
			k := Key{Partner: fmt.Sprint("p", w), Sender: "S", Recipient: "R", ControlRef: fmt.Sprint(i)}
			mustSeen(t, s, k, true)
			mustSeen(t, other, k, true)
			if dup, err := other.Duplicate(k, fmt.Sprintf("INGEST:%d", w*each+i)); err != nil || dup {
				t.Fatalf("%v is its own message's record, not a duplicate: %v %v", k, dup, err)
			}
		}
	}
	// one interchange's several envelopes are recorded together; a store
	// that read the bucket before sees them once it reads it again (a hub
	// that gets a partition back from another instance)
	keys := []Key{{Partner: "multi", ControlRef: "1"}, {Partner: "multi", ControlRef: "2"}}
	if err := s.Commit(keys, "INGEST:999")(t.Context()); err != nil {
		t.Fatal(err)
	}
	// a document of thousands of interchanges spills over into a second
	// batch entry; the commit waits for both
	for i := range 3000 {
		keys = append(keys, Key{Partner: "multi", ControlRef: fmt.Sprint("big", i)})
	}
	_, groupsBefore := s.CommitStats()
	if err := s.Commit(keys[2:], "INGEST:1000")(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, groups := s.CommitStats(); groups-groupsBefore < 2 {
		t.Fatalf("%d keys went into %d batch entry", len(keys)-2, groups-groupsBefore)
	}
	other.Forget("multi")
	for _, k := range keys {
		mustSeen(t, s, k, true)
		mustSeen(t, other, k, true)
	}
}

// Fields are hostile bytes: they neither break the KV key nor collide.
func TestKVHostileKeys(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	keys := []Key{
		{Partner: "a.b", Sender: "*", Recipient: ">", ControlRef: "x\x00y"},
		{Partner: "a", Sender: "b.*", Recipient: ">", ControlRef: "x\x00y"},
		{Partner: "", Sender: "", Recipient: "", ControlRef: ""},
		{Partner: "ünï", Sender: "çødé ☃", Recipient: "$KV.x.>", ControlRef: "\xff\xfe"},
		{Partner: "AB", Sender: "C", Recipient: "1", ControlRef: ""},
		{Partner: "A", Sender: "BC", Recipient: "1", ControlRef: ""},
	}
	for i, k := range keys {
		if i%2 == 0 {
			if err := s.Record(k); err != nil {
				t.Fatalf("record %q: %v", k, err)
			}
		}
	}
	for i, k := range keys {
		mustSeen(t, s, k, i%2 == 0)
	}
}

func TestKVSurvivesServerRestart(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	k := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "KEEP"}
	if err := s.Record(k); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	srv = jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir})
	_, js = jetstreamtest.Connect(t, srv.URL)
	s = openKV(t, js, nil)
	mustSeen(t, s, k, true)
}

// Two writers (two partitions, or two hubs) record one key at once.
func TestKVConcurrentRecordSameKey(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	other := openKV(t, js, nil) // a second hub on the same bucket
	k := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "RACE"}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, st := range []*KVStore{s, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- st.Record(k)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustSeen(t, s, k, true)
	mustSeen(t, other, k, true)
	if n, _ := s.Len(); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
}

func TestKVOptionsValidate(t *testing.T) {
	for _, o := range []KVOptions{{TTL: time.Millisecond}, {Replicas: 7}, {Timeout: -1}} {
		o.setDefaults()
		if err := o.Validate(); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}

// An entry names the message that recorded it: that same message, seen
// again after a partial failure, is not its own duplicate; any other is.
func TestKVDuplicateByOrigin(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	k := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	if dup, err := s.Duplicate(k, "INGEST:1"); err != nil || dup {
		t.Fatalf("fresh key: %v %v", dup, err)
	}
	if err := s.Commit([]Key{k}, "INGEST:1")(t.Context()); err != nil {
		t.Fatal(err)
	}
	if dup, err := s.Duplicate(k, "INGEST:1"); err != nil || dup {
		t.Fatalf("its own record: %v %v", dup, err)
	}
	if dup, err := s.Duplicate(k, "INGEST:2"); err != nil || !dup {
		t.Fatalf("another message: %v %v", dup, err)
	}
	k2 := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "2"}
	if err := s.Record(k2); err != nil { // no origin: everyone's duplicate
		t.Fatal(err)
	}
	if dup, _ := s.Duplicate(k2, "INGEST:3"); !dup {
		t.Fatal("an entry without origin is not a duplicate")
	}
	if at, err := s.Recorded(k); err != nil || at.IsZero() {
		t.Fatalf("recorded: %v %v", at, err)
	}
}

// A batch entry the server refuses fails its commit with the server's
// error (what the hub classifies, as for any publish), records nothing, and
// the next commit goes out once the stream takes entries again.
func TestKVCommitRefused(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	st, err := js.Stream(t.Context(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxMsgSize = 16 // smaller than any batch entry
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	refused := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	err = s.Commit([]Key{refused}, "INGEST:1")(t.Context())
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != jetstream.JSErrCodeStreamMessageExceedsMaximum {
		t.Fatalf("commit of a refused entry: %v, want the server's error %d", err, jetstream.JSErrCodeStreamMessageExceedsMaximum)
	}
	if dup, err := s.Duplicate(refused, "INGEST:2"); err != nil || dup {
		t.Fatalf("a refused record counts: %v %v", dup, err)
	}
	cfg.MaxMsgSize = -1
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit([]Key{refused}, "INGEST:2")(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustSeen(t, s, refused, true)
}
