package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func ckKey(i int) Key {
	return Key{Partner: "acme", Sender: "S", Recipient: "R", ControlRef: fmt.Sprintf("REF%05d", i)}
}

// commitKeys records keys [from, to) in batches of ten.
func commitKeys(tb testing.TB, s *KVStore, from, to int) {
	tb.Helper()
	for i := from; i < to; i += 10 {
		var ks []Key
		for j := i; j < min(i+10, to); j++ {
			ks = append(ks, ckKey(j))
		}
		if err := s.Commit(ks, fmt.Sprint("INGEST:", i))(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// A store that starts from a checkpoint reads only what the bucket stored
// after it: the bucket's messages up to the checkpoint are purged here,
// and the restarted store still knows those interchanges (from the file)
// and the ones committed after the checkpoint (from the bucket).
func TestCheckpointRestartReadsOnlyWhatCameAfter(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.index")
	a := openKV(t, js, &KVOptions{Checkpoint: path})
	if err := a.Checkpoint(ctx); err != nil { // before the first read: nothing to save
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint before the index was read: %v", err)
	}
	commitKeys(t, a, 0, 100)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	commitKeys(t, a, 100, 120)

	st, err := js.Stream(ctx, "KV_edihub-ledger")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	// what the checkpoint read: 10 batch entries of ten (and nothing else)
	if err := st.Purge(ctx, jetstream.WithPurgeSequence(11)); err != nil {
		t.Fatal(err)
	}
	b := openKV(t, js, &KVOptions{Checkpoint: path})
	for _, i := range []int{0, 57, 99, 100, 119} {
		mustSeen(t, b, ckKey(i), true)
	}
	mustSeen(t, b, ckKey(120), false)
	if n := b.Indexed(); n != 120 {
		t.Fatalf("restarted index holds %d, want 120 (stream had %d messages)", n, info.State.Msgs)
	}
	// Without the checkpoint the purged 100 are gone: the file was read.
	c := openKV(t, js, nil)
	mustSeen(t, c, ckKey(0), false)
	mustSeen(t, c, ckKey(100), true)
}

// A checkpoint of another bucket (deleted and made again: its sequences
// restart) or a damaged file is not used: the whole bucket is read.
func TestCheckpointOfAnotherBucketOrDamagedIsIgnored(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.index")
	a := openKV(t, js, &KVOptions{Checkpoint: path})
	commitKeys(t, a, 0, 30)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteKeyValue(ctx, "edihub-ledger"); err != nil {
		t.Fatal(err)
	}
	b := openKV(t, js, &KVOptions{Checkpoint: path})
	commitKeys(t, b, 1000, 1010)
	mustSeen(t, b, ckKey(0), false) // the old bucket's interchange: not from the stale file
	mustSeen(t, b, ckKey(1000), true)

	damaged := append([]byte(nil), good...)
	damaged[len(damaged)/2] ^= 0xff
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	c := openKV(t, js, &KVOptions{Checkpoint: path})
	mustSeen(t, c, ckKey(0), false)
	mustSeen(t, c, ckKey(1005), true)
}

// Interchanges past the TTL are neither saved nor loaded.
func TestCheckpointDropsExpired(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.index")
	now := time.Now()
	clock := func() time.Time { return now }
	a := openKV(t, js, &KVOptions{Checkpoint: path, TTL: time.Hour, Now: clock})
	commitKeys(t, a, 0, 10)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	ix := newIndex(time.Hour, clock)
	st, err := js.Stream(ctx, "KV_edihub-ledger")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.load(path, st.CachedInfo().Created, st.CachedInfo().State.LastSeq); err != nil {
		t.Fatal(err)
	}
	if len(ix.marks) != 0 {
		t.Fatalf("loaded %d expired interchanges", len(ix.marks))
	}
}
