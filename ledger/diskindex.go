package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The index on disk (KVOptions.IndexFile): a bbolt file that holds the
// marks the index has written out, with the stream sequence it had read
// the bucket to, so that a restart opens it and reads only the bucket's
// messages after that sequence. Opening it costs the same whatever the
// ledger's size; lookups that memory does not answer go to it.
//
// The bucket stays the truth. A write (flush) stores, in one transaction
// and one fsync, the marks not yet on disk, the sequence every message up
// to which they include, and the removal of marks past the TTL: a kill -9
// at any point leaves the file at its last complete write, whose sequence
// never claims a message whose marks it lacks. A file that names another
// bucket or stream, has a newer format or claims more than the stream
// holds is removed and built again from the bucket; one that is damaged
// (does not open, is shorter than its own pages, fails a lookup, a write
// or the check after open) is moved aside and built again (damage.go).
//
// Buckets of the file:
//
//	meta     format, bucket, stream-created (unix ns), applied, legacy-until (unix ns), count
//	marks    digest -> time (unix ns, big endian) and origin
//	expiry   time (big endian) and digest -> nothing: the marks in the order they expire
var (
	diskMeta   = []byte("meta")
	diskMarks  = []byte("marks")
	diskExpiry = []byte("expiry")

	metaFormat  = []byte("format")
	metaBucket  = []byte("bucket")
	metaCreated = []byte("stream-created")
	metaApplied = []byte("applied")
	metaLegacy  = []byte("legacy-until")
	metaCount   = []byte("count")
)

// diskFormat is the file's layout version; a file with a higher one was
// written by a newer edihub and is built again rather than misread.
const diskFormat = 1

// writeChunk bounds the marks of one transaction of a write (write).
const writeChunk = 65536

// sweepBatch bounds the expired marks one write removes (the rest go with
// the next write), so that a write after a long stop stays short.
const sweepBatch = 50_000

type diskIndex struct {
	db    *bolt.DB
	path  string
	count atomic.Int64 // marks on disk, as of the last write
	// existing: the file was there before this open (the check after
	// open, damage.go, has something to check)
	existing bool
	// writeMu: one writer at a time, the writes and the check (bbolt's
	// Check reads the free list, which a write changes)
	writeMu sync.Mutex
	stop    atomic.Bool // close: the check ends early
	// checked is closed when the check after open is done (at once when
	// there is none), checkErr set before: until then a lookup that the
	// file does not answer waits for it (awaitCheck)
	checked   chan struct{}
	checkOnce sync.Once
	checkErr  error

	// Lookups share one read transaction between writes: a transaction
	// of their own cost each ~10 allocations. A write closes it first
	// (bbolt grows its map only when no reader holds it) and opens the
	// next after; lookups meanwhile take one of their own.
	readMu sync.RWMutex
	read   *bolt.Tx
	marks  *bolt.Bucket // of read
}

// openRead starts the shared read transaction; readMu is held.
func (di *diskIndex) openRead() {
	if tx, err := di.db.Begin(false); err == nil {
		di.read, di.marks = tx, tx.Bucket(diskMarks)
	}
}

// closeRead ends it; readMu is held.
func (di *diskIndex) closeRead() {
	if di.read != nil {
		_ = di.read.Rollback()
		di.read, di.marks = nil, nil
	}
}

// diskState is what the file says it has read of the bucket.
type diskState struct {
	applied uint64
	legacy  time.Time
}

// errIndexBusy: another process has the file open; the index stays in
// memory (the whole bucket is read) rather than wait.
var errIndexBusy = errors.New("ledger index file is in use by another process")

// openDisk opens the index file at path for the bucket's stream (its
// creation time and last sequence); a file that cannot be used is removed
// (a damaged one moved aside) and made again, empty: rebuilt says why.
func openDisk(path, bucket string, created time.Time, lastSeq uint64) (di *diskIndex, st diskState, rebuilt *rebuild, err error) {
	di, st, err = openDiskFile(path, bucket, created, lastSeq)
	if err == nil || errors.Is(err, errIndexBusy) {
		return di, st, nil, err
	}
	rebuilt = &rebuild{reason: RebuildStale, cause: err}
	if isDamage(err) {
		rebuilt.reason = RebuildOpen
		rebuilt.aside, err = moveAside(path, time.Now())
	} else {
		err = os.Remove(path)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, diskState{}, nil, fmt.Errorf("ledger index %s: %w (and it cannot be removed: %v)", path, rebuilt.cause, err)
	}
	di, st, err = openDiskFile(path, bucket, created, lastSeq)
	if err != nil {
		return nil, diskState{}, nil, fmt.Errorf("ledger index %s: %w", path, err)
	}
	return di, st, rebuilt, nil
}

func openDiskFile(path, bucket string, created time.Time, lastSeq uint64) (di *diskIndex, st diskState, err error) {
	var db *bolt.DB
	defer func() {
		if err != nil && db != nil {
			db.Close()
			di = nil
		}
	}()
	_, statErr := os.Stat(path)
	existing := statErr == nil
	err = guard(func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
		if errors.Is(err, bolt.ErrTimeout) {
			return errIndexBusy
		}
		if err != nil && !environmental(err) {
			return damaged(err) // not a bbolt file, a bad meta page, ...
		}
		return err
	})
	if err != nil {
		return nil, st, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, st, err
	}
	var count uint64
	err = guard(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if tx.Size() > fi.Size() {
				return damaged(fmt.Errorf("%d bytes of pages in a file of %d", tx.Size(), fi.Size()))
			}
			meta := tx.Bucket(diskMeta)
			if meta == nil { // a new file
				for _, name := range [][]byte{diskMeta, diskMarks, diskExpiry} {
					if _, err := tx.CreateBucket(name); err != nil {
						return err
					}
				}
				meta = tx.Bucket(diskMeta)
				return errors.Join(meta.Put(metaFormat, u64(diskFormat)), meta.Put(metaBucket, []byte(bucket)),
					meta.Put(metaCreated, u64(uint64(created.UnixNano()))), meta.Put(metaApplied, u64(0)),
					meta.Put(metaLegacy, u64(0)), meta.Put(metaCount, u64(0)))
			}
			if tx.Bucket(diskMarks) == nil || tx.Bucket(diskExpiry) == nil {
				return errors.New("not a ledger index")
			}
			format, ok := getU64(meta, metaFormat)
			if !ok || format > diskFormat {
				return fmt.Errorf("format %d, this edihub reads %d", format, diskFormat)
			}
			if string(meta.Get(metaBucket)) != bucket {
				return fmt.Errorf("written for bucket %q", meta.Get(metaBucket))
			}
			if c, _ := getU64(meta, metaCreated); int64(c) != created.UnixNano() {
				return errors.New("written for another stream of the bucket (deleted and made again)")
			}
			st.applied, _ = getU64(meta, metaApplied)
			if st.applied > lastSeq {
				return fmt.Errorf("has read to sequence %d, past the bucket's end %d", st.applied, lastSeq)
			}
			if l, _ := getU64(meta, metaLegacy); l != 0 {
				st.legacy = time.Unix(0, int64(l))
			}
			count, _ = getU64(meta, metaCount)
			return nil
		})
	})
	if err != nil {
		return nil, st, err
	}
	di = &diskIndex{db: db, path: path, existing: existing, checked: make(chan struct{})}
	if !existing || !verifyAtOpen {
		di.checkDone(nil) // nothing to check
	}
	di.count.Store(int64(count))
	di.openRead()
	return di, st, nil
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func getU64(b *bolt.Bucket, k []byte) (uint64, bool) {
	v := b.Get(k)
	if len(v) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), true
}

// get reads d's mark from the file. An error that is the file's (bbolt
// panicked on a damaged page, or faulted on a pointer out of the file) is
// a *damageError.
func (di *diskIndex) get(d digest) (m mark, ok bool, err error) {
	decode := func(v []byte) { // v is the file's memory: copied out
		if len(v) >= 8 {
			m, ok = mark{at: int64(binary.BigEndian.Uint64(v)), origin: string(v[8:])}, true
		}
	}
	shared := false
	err = guard(func() error {
		di.readMu.RLock()
		defer di.readMu.RUnlock()
		if di.marks != nil {
			shared = true
			decode(di.marks.Get(d[:]))
		}
		return nil
	})
	if err != nil || shared {
		return m, ok, di.tag(err)
	}
	err = guard(func() error {
		return di.db.View(func(tx *bolt.Tx) error {
			decode(tx.Bucket(diskMarks).Get(d[:]))
			return nil
		})
	})
	if err != nil {
		return mark{}, false, di.tag(fmt.Errorf("ledger index file: %w", err))
	}
	return m, ok, nil
}

// write stores marks (keeping the later of two marks of one interchange),
// removes marks recorded at or before cut, and records applied and legacy,
// in one transaction.
func (di *diskIndex) write(marks map[digest]mark, applied uint64, legacy time.Time, cut int64) error {
	ds := make([]digest, 0, len(marks))
	for d := range marks {
		ds = append(ds, d)
	}
	// in key order: bbolt fills pages one after another instead of
	// splitting them at random
	slices.SortFunc(ds, func(a, b digest) int { return bytes.Compare(a[:], b[:]) })
	di.writeMu.Lock()
	defer di.writeMu.Unlock()
	di.readMu.Lock()
	di.closeRead()
	di.readMu.Unlock()
	defer func() {
		di.readMu.Lock()
		di.openRead()
		di.readMu.Unlock()
	}()
	// In transactions of at most writeChunk marks: bbolt splits a node
	// only at commit, so one transaction of a whole rebuilt index (a
	// million marks after a first start) grew its nodes without bound and
	// each insert moved them (hours). Only the last records applied: a
	// crash between two leaves marks the file has beyond its sequence,
	// which the bucket's read gives again.
	for from := 0; ; from += writeChunk {
		to := min(from+writeChunk, len(ds))
		if err := di.writeChunk(ds[from:to], marks, to == len(ds), applied, legacy, cut); err != nil {
			return di.tag(fmt.Errorf("ledger index file: %w", err))
		}
		if to == len(ds) {
			return nil
		}
	}
}

// writeChunk is one transaction of write: the marks of ds, and with last
// the sweep of the expired and applied and legacy.
func (di *diskIndex) writeChunk(ds []digest, marks map[digest]mark, last bool, applied uint64, legacy time.Time, cut int64) error {
	var count int64
	err := guard(func() error {
		return di.db.Update(func(tx *bolt.Tx) error {
			mb, eb, meta := tx.Bucket(diskMarks), tx.Bucket(diskExpiry), tx.Bucket(diskMeta)
			c, _ := getU64(meta, metaCount)
			count = int64(c)
			expiryKey := func(at uint64, d digest) []byte {
				return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+32), at), d[:]...)
			}
			// expiry keys are written after the marks, in their own key
			// order (time first): in the marks' order they fell at random
			// into the last page, one move of it each
			var expDel, expPut [][]byte
			for _, d := range ds {
				m := marks[d]
				if m.at <= cut {
					continue
				}
				if cur := mb.Get(d[:]); len(cur) >= 8 {
					curAt := binary.BigEndian.Uint64(cur)
					if int64(curAt) >= m.at {
						continue
					}
					expDel = append(expDel, expiryKey(curAt, d))
				} else {
					count++
				}
				v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(m.origin)), uint64(m.at))
				if err := mb.Put(bytes.Clone(d[:]), append(v, m.origin...)); err != nil {
					return err
				}
				expPut = append(expPut, expiryKey(uint64(m.at), d))
			}
			for _, ks := range [][][]byte{expDel, expPut} {
				slices.SortFunc(ks, bytes.Compare)
			}
			for _, k := range expDel {
				if err := eb.Delete(k); err != nil {
					return err
				}
			}
			for _, k := range expPut {
				if err := eb.Put(k, nil); err != nil {
					return err
				}
			}
			if !last {
				return meta.Put(metaCount, u64(uint64(max(count, 0))))
			}
			// the expired, oldest first; deleted after the walk (a cursor
			// that deletes as it goes may skip keys)
			var gone [][]byte
			cur := eb.Cursor()
			for k, _ := cur.First(); k != nil && len(gone) < sweepBatch; k, _ = cur.Next() {
				if len(k) != 8+32 || int64(binary.BigEndian.Uint64(k)) > cut {
					break
				}
				gone = append(gone, bytes.Clone(k))
			}
			for _, k := range gone {
				if err := eb.Delete(k); err != nil {
					return err
				}
				if v := mb.Get(k[8:]); len(v) >= 8 && bytes.Equal(v[:8], k[:8]) {
					if err := mb.Delete(k[8:]); err != nil {
						return err
					}
					count--
				}
			}
			old, _ := getU64(meta, metaApplied)
			var l uint64
			if !legacy.IsZero() {
				l = uint64(legacy.UnixNano())
			}
			return errors.Join(meta.Put(metaApplied, u64(max(old, applied))), meta.Put(metaLegacy, u64(l)),
				meta.Put(metaCount, u64(uint64(max(count, 0)))))
		})
	})
	if err != nil {
		return err
	}
	di.count.Store(count)
	return nil
}

func (di *diskIndex) close() error {
	di.stop.Store(true)
	di.writeMu.Lock() // a write or the check under way ends first
	defer di.writeMu.Unlock()
	di.readMu.Lock()
	di.closeRead()
	di.readMu.Unlock()
	return di.db.Close()
}
