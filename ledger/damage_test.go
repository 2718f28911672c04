package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

const damagedInterchanges = 400

// writeIndexFile records damagedInterchanges interchanges with an index
// file at path, checkpoints them all into it and closes the store.
func writeIndexFile(t *testing.T, js jetstream.JetStream, path string) {
	t.Helper()
	a := openKV(t, js, &KVOptions{IndexFile: path})
	commitKeys(t, a, 0, damagedInterchanges)
	mustSeen(t, a, ckKey(0), true)
	if err := a.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := a.ix.inMemory(); n != 0 {
		t.Fatalf("%d marks not in the file", n)
	}
	a.Close()
}

// marksPages reads the file at path and returns it, its page size and the
// marks bucket's root page.
func marksPages(t testing.TB, path string) (file []byte, pageSize int, root uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	pageSize = db.Info().PageSize
	_ = db.View(func(tx *bolt.Tx) error { root = uint64(tx.Bucket(diskMarks).Root()); return nil })
	db.Close()
	file, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return file, pageSize, root
}

// damageLeaf overwrites, byte by byte, the first leaf page of the marks
// bucket in the (closed) file at path with garbage, and returns the
// interchanges (ckKey numbers, of the first n) whose marks that page held.
func damageLeaf(t testing.TB, path string, n int) []int {
	t.Helper()
	file, pageSize, root := marksPages(t, path)
	page := func(id uint64) []byte { return file[id*uint64(pageSize) : (id+1)*uint64(pageSize)] }
	// a page: id u64, flags u16 (1 branch, 2 leaf), count u16, overflow
	// u32; then count elements: branch (pos u32, ksize u32, pgid u64),
	// leaf (flags u32, pos u32, ksize u32, vsize u32), pos counted from
	// the element
	id := root
	for binary.LittleEndian.Uint16(page(id)[8:]) == 0x01 {
		id = binary.LittleEndian.Uint64(page(id)[16+8:]) // the first child
	}
	p := page(id)
	if binary.LittleEndian.Uint16(p[8:]) != 0x02 || id == root {
		t.Fatalf("page %d (the marks' root %d) is not a leaf under a branch: flags %x", id, root, p[8:10])
	}
	byDigest := map[digest]int{}
	for i := range n {
		byDigest[ckKey(i).digest()] = i
	}
	var on []int
	for e := range int(binary.LittleEndian.Uint16(p[10:])) {
		el := p[16+16*e:]
		pos, ksize := binary.LittleEndian.Uint32(el[4:]), binary.LittleEndian.Uint32(el[8:])
		k := el[pos : pos+ksize]
		i, ok := byDigest[digest(k)]
		if !ok {
			t.Fatalf("leaf %d holds a key %x of no interchange", id, k)
		}
		on = append(on, i)
	}
	if len(on) == 0 || len(on) == n {
		t.Fatalf("leaf %d holds %d of %d marks", id, len(on), n)
	}
	copy(p, bytes.Repeat([]byte{0xa5}, pageSize))
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return on
}

// elsewhere is a new interchange (a ckKey number) whose lookup reaches
// another page than the damaged one, the first leaf, which held on: one
// whose digest is above them all.
func elsewhere(on []int) int {
	var last digest
	for _, i := range on {
		if d := ckKey(i).digest(); bytes.Compare(d[:], last[:]) > 0 {
			last = d
		}
	}
	fresh := damagedInterchanges
	for d := ckKey(fresh).digest(); bytes.Compare(d[:], last[:]) <= 0; d = ckKey(fresh).digest() {
		fresh++
	}
	return fresh
}

// afterRebuild checks what a rebuild leaves: every interchange seen, one
// rebuild for reason, one damaged copy kept, and a new file that holds
// every mark (marks of them) once the store has written it.
func afterRebuild(t *testing.T, s *KVStore, path, reason string, marks int) {
	t.Helper()
	for i := range damagedInterchanges {
		mustSeen(t, s, ckKey(i), true)
	}
	for _, r := range RebuildReasons {
		want := int64(0)
		if r == reason {
			want = 1
		}
		if n := s.IndexRebuilds(r); n != want {
			t.Fatalf("rebuilds for %s: %d, want %d", r, n, want)
		}
	}
	kept, _ := filepath.Glob(path + ".damaged-*")
	if len(kept) != 1 {
		t.Fatalf("damaged copies kept: %v, want one", kept)
	}
	if !s.ix.onDisk() {
		t.Fatal("no new index file")
	}
	if err := s.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(diskMarks).Stats().KeyN; n != marks {
			t.Errorf("the new file holds %d marks, want %d", n, marks)
		}
		for err := range tx.Check() {
			t.Errorf("the new file: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A damaged leaf of the marks found by the check after open: the file is
// moved aside and rebuilt from the bucket, and every stored interchange
// is seen. A lookup of a new interchange right after open (on a page that
// is not damaged) is not answered "unseen" before the check is done.
func TestIndexFileDamageFoundByTheCheck(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	writeIndexFile(t, js, path)
	fresh := elsewhere(damageLeaf(t, path, damagedInterchanges))
	s := openKV(t, js, &KVOptions{IndexFile: path})
	mustSeen(t, s, ckKey(fresh), false)
	if n := s.IndexRebuilds(RebuildCheck); n != 1 {
		t.Fatalf("a new interchange was answered before the check found the damage (rebuilds for check: %d)", n)
	}
	afterRebuild(t, s, path, RebuildCheck, damagedInterchanges)
}

// The same damage found by a lookup that reaches the page (the check is
// off): the lookup is answered from the bucket, rightly.
func TestIndexFileDamageFoundByALookup(t *testing.T) {
	defer func(v bool) { verifyAtOpen = v }(verifyAtOpen)
	verifyAtOpen = false
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	writeIndexFile(t, js, path)
	on := damageLeaf(t, path, damagedInterchanges)
	var logged syncBuffer
	s := openKV(t, js, &KVOptions{IndexFile: path, Log: zerolog.New(&logged).With().Str("component", "ledger").Logger()})
	for _, i := range on { // each on the damaged page
		mustSeen(t, s, ckKey(i), true)
	}
	line := logged.String()
	for _, want := range []string{`"level":"warn"`, `"component":"ledger"`, `"reason":"lookup"`, `"kept_as":"` + path + `.damaged-`, "nothing to do"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log %q lacks %s", line, want)
		}
	}
	afterRebuild(t, s, path, RebuildLookup, damagedInterchanges)
}

// The same damage found by a write: an interchange of the damaged page
// recorded again (a replay) is written at the checkpoint, which fails on
// the page; the file is rebuilt and the one damaged copy kept replaces
// an older one.
func TestIndexFileDamageFoundByAWrite(t *testing.T) {
	defer func(v bool) { verifyAtOpen = v }(verifyAtOpen)
	verifyAtOpen = false
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	older := path + ".damaged-20260101T000000Z"
	if err := os.WriteFile(older, []byte("an earlier damaged copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeIndexFile(t, js, path)
	on := damageLeaf(t, path, damagedInterchanges)
	s := openKV(t, js, &KVOptions{IndexFile: path})
	mustSeen(t, s, ckKey(elsewhere(on)), false) // not on the damaged page
	if err := s.Commit([]Key{ckKey(on[0])}, "INGEST:9999")(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(context.Background()); err == nil || !isDamage(err) {
		t.Fatalf("checkpoint on a damaged page: %v, want the damage", err)
	}
	if _, err := os.Stat(older); !os.IsNotExist(err) {
		t.Fatalf("the older damaged copy is still there: %v", err)
	}
	if by, err := s.ProcessedBy(ckKey(on[0])); err != nil || by != "INGEST:9999" {
		t.Fatalf("the replayed interchange after the rebuild: by %q, %v", by, err)
	}
	afterRebuild(t, s, path, RebuildWrite, damagedInterchanges)
}

// A branch element of the marks that points far past the file: bbolt
// reads the page from its memory map at that offset, a fault that would
// kill the process; the lookup turns it into damage and is answered from
// the bucket.
func TestIndexFileBadPointerIsCaught(t *testing.T) {
	defer func(v bool) { verifyAtOpen = v }(verifyAtOpen)
	verifyAtOpen = false
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	writeIndexFile(t, js, path)
	file, pageSize, root := marksPages(t, path)
	p := file[root*uint64(pageSize):]
	if binary.LittleEndian.Uint16(p[8:]) != 0x01 {
		t.Fatalf("the marks' root %d is not a branch", root)
	}
	for e := range int(binary.LittleEndian.Uint16(p[10:])) {
		// 4 TiB into the map: within bbolt's array, mapped by nothing
		binary.LittleEndian.PutUint64(p[16+16*e+8:], 1<<42/uint64(pageSize))
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openKV(t, js, &KVOptions{IndexFile: path})
	mustSeen(t, s, ckKey(7), true)
	afterRebuild(t, s, path, RebuildLookup, damagedInterchanges)
}

// A file damaged again soon after a rebuild is the disk's: the second
// one is moved aside too, but no third is made; the index stays in
// memory and still answers rightly.
func TestIndexFileDamagedAgainSoonStaysInMemory(t *testing.T) {
	defer func(v bool) { verifyAtOpen = v }(verifyAtOpen)
	verifyAtOpen = false
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	writeIndexFile(t, js, path)
	on := damageLeaf(t, path, damagedInterchanges)
	s := openKV(t, js, &KVOptions{IndexFile: path})
	mustSeen(t, s, ckKey(on[0]), true) // the first rebuild
	if !s.ix.onDisk() {
		t.Fatal("no file after the first rebuild")
	}
	s.ix.mu.RLock()
	second := s.ix.disk
	s.ix.mu.RUnlock()
	// what a lookup reports when it hits a bad page of the new file
	s.indexDamaged(RebuildLookup, &damageError{di: second, err: errors.New("a bad page again")})
	for i := range damagedInterchanges {
		mustSeen(t, s, ckKey(i), true)
	}
	if s.ix.onDisk() {
		t.Fatal("a third file was made after damage twice within the backoff")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an index file at %s: %v", path, err)
	}
	if n := s.IndexRebuilds(RebuildLookup); n != 2 {
		t.Fatalf("rebuilds for lookup: %d, want 2", n)
	}
	if kept, _ := filepath.Glob(path + ".damaged-*"); len(kept) != 1 {
		t.Fatalf("damaged copies kept: %v, want one", kept)
	}
}

// syncBuffer is a log sink for tests: the rebuild may log from another
// goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
