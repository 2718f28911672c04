package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"

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

// A store that starts from its index file reads only what the bucket
// stored after the file's sequence: the bucket's messages up to the
// checkpoint are purged here, and the restarted store still knows those
// interchanges (from the file) and the ones committed after (from the
// bucket), having read only those messages.
func TestIndexFileRestartReadsOnlyWhatCameAfter(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	a := openKV(t, js, &KVOptions{IndexFile: path})
	if err := a.Checkpoint(ctx); err != nil { // before the first read: nothing to write
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an index file before the index was read: %v", err)
	}
	commitKeys(t, a, 0, 100)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := a.ix.inMemory(); n != 0 {
		t.Fatalf("%d marks in memory after a checkpoint, want 0 (all in the file)", n)
	}
	mustSeen(t, a, ckKey(57), true) // from the file
	commitKeys(t, a, 100, 120)
	a.Close() // as a kill -9 would: the last 20 are only in the bucket
	if _, err := a.Seen(ckKey(500)); err == nil {
		t.Fatal("a lookup after Close answered without the file")
	}

	st, err := js.Stream(ctx, "KV_edihub-ledger")
	if err != nil {
		t.Fatal(err)
	}
	// what the checkpoint read: 10 batch entries of ten (and nothing else)
	if err := st.Purge(ctx, jetstream.WithPurgeSequence(11)); err != nil {
		t.Fatal(err)
	}
	b := openKV(t, js, &KVOptions{IndexFile: path})
	for _, i := range []int{0, 57, 99, 100, 119} {
		mustSeen(t, b, ckKey(i), true)
	}
	mustSeen(t, b, ckKey(120), false)
	if n := b.Indexed(); n != 120 {
		t.Fatalf("restarted index holds %d, want 120", n)
	}
	if n := b.ix.tailRead.Load(); n != 2 {
		t.Fatalf("the restart read %d messages of the bucket, want the 2 after the checkpoint", n)
	}
	if dup, err := b.Duplicate(ckKey(5), "INGEST:0"); err != nil || dup {
		t.Fatalf("the message that recorded an interchange is its own duplicate: %v %v", dup, err)
	}
	// Without the file the purged 100 are gone: the file was read.
	c := openKV(t, js, nil)
	mustSeen(t, c, ckKey(0), false)
	mustSeen(t, c, ckKey(100), true)
}

// Marks in memory go to the file in batches once flushAfter of them wait
// (without a Checkpoint), and lookups find them there.
func TestIndexFileWritesInBatchesAndAnswersFromIt(t *testing.T) {
	defer func(n int) { flushAfter = n }(flushAfter)
	flushAfter = 25
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	a := openKV(t, js, &KVOptions{IndexFile: path})
	mustSeen(t, a, ckKey(9999), false)
	commitKeys(t, a, 0, 50)
	// lookups go on while writes replace the file's shared read transaction
	done, failed := make(chan struct{}), make(chan error, 1)
	go func() {
		defer close(failed)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if seen, err := a.Seen(ckKey(i % 50)); err != nil || !seen {
				failed <- fmt.Errorf("interchange %d during writes: seen %v, %v", i%50, seen, err)
				return
			}
		}
	}()
	commitKeys(t, a, 50, 200)
	close(done)
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return a.ix.inMemory() < flushAfter }, "marks written out")
	for i := range 200 {
		mustSeen(t, a, ckKey(i), true)
	}
	if n := a.Indexed(); n != 200 {
		t.Fatalf("indexed %d, want 200", n)
	}
}

// A file the store cannot use (another stream of the bucket's name,
// damaged, cut short, written by a newer edihub, not a ledger index) is
// built again from the bucket: what the bucket holds is seen, what only
// the stale file held is not.
func TestIndexFileNotUsableIsRebuiltFromTheBucket(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger-index.db")
	a := openKV(t, js, &KVOptions{IndexFile: path})
	commitKeys(t, a, 0, 30)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteKeyValue(ctx, "edihub-ledger"); err != nil {
		t.Fatal(err)
	}
	b := openKV(t, js, &KVOptions{IndexFile: path})
	commitKeys(t, b, 1000, 1010)
	mustSeen(t, b, ckKey(0), false) // the old stream's interchange: not from the stale file
	mustSeen(t, b, ckKey(1000), true)
	if err := b.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	b.Close()
	current, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	newer := filepath.Join(dir, "newer.db")
	if err := os.WriteFile(newer, current, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(newer, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(diskMeta).Put(metaFormat, u64(diskFormat+1)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newerFile, _ := os.ReadFile(newer)

	for _, c := range []struct {
		name   string
		file   []byte
		reason string // the rebuild's: stale ones are removed, damaged ones kept
	}{
		{"another stream", good, RebuildStale},
		{"cut short", current[:len(current)/2], RebuildOpen},
		{"garbage", []byte("not a bbolt file, not at all, not even close to a page"), RebuildOpen},
		{"written by a newer edihub", newerFile, RebuildStale},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			s := openKV(t, js, &KVOptions{IndexFile: path})
			mustSeen(t, s, ckKey(0), false)
			for _, i := range []int{1000, 1005, 1009} {
				mustSeen(t, s, ckKey(i), true)
			}
			if n := s.ix.tailRead.Load(); n != 1 {
				t.Fatalf("read %d messages of the bucket, want all of it (1)", n)
			}
			if !s.ix.onDisk() {
				t.Fatal("the index did not make a new file")
			}
			if n := s.IndexRebuilds(c.reason); n != 1 {
				t.Fatalf("rebuilds for %s: %d, want 1", c.reason, n)
			}
			kept, _ := filepath.Glob(path + ".damaged-*")
			for _, k := range kept {
				os.Remove(k)
			}
			if want := c.reason == RebuildOpen; (len(kept) == 1) != want {
				t.Fatalf("damaged copies kept: %v (a copy wanted: %v)", kept, want)
			}
			s.Close()
		})
	}
}

// Interchanges past the TTL are removed from the file by its next write,
// as the bucket drops them, and are not seen meanwhile.
func TestIndexFileDropsExpired(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	now := time.Now()
	clock := func() time.Time { return now }
	a := openKV(t, js, &KVOptions{IndexFile: path, TTL: time.Hour, Now: clock})
	commitKeys(t, a, 0, 10)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Minute)
	commitKeys(t, a, 10, 20)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(45 * time.Minute) // the first ten are past the TTL
	mustSeen(t, a, ckKey(0), false)
	mustSeen(t, a, ckKey(15), true)
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := a.Indexed(); n != 10 {
		t.Fatalf("indexed %d after the sweep, want 10", n)
	}
	a.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(diskMarks).Stats().KeyN; n != 10 {
			t.Errorf("file holds %d marks, want 10", n)
		}
		if n := tx.Bucket(diskExpiry).Stats().KeyN; n != 10 {
			t.Errorf("file holds %d expiry entries, want 10", n)
		}
		return nil
	})
}

// inMemory is how many marks wait in memory to be written to the file.
func (ix *index) inMemory() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.marks)
}
