package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// With KVOptions.IndexFile the index keeps what it knows in a bbolt file
// (diskindex.go) and in memory only what it has not written yet and what
// it wrote last (a cache): a restart opens the file, whatever its size,
// and reads only the bucket's messages after the sequence the file has
// read to. Lookups that memory does not answer read the file.
//
// Writes go out in batches, one transaction and one fsync each (per
// writeChunk marks: a batch can be larger while a write is slow): when
// flushAfter marks wait in memory (started by the commit that adds the
// last of them, done by a goroutine of its own), and at each Checkpoint,
// which first reads the bucket to its end so that the sequence the file
// records covers everything the store committed. A restart after kill -9
// therefore reads the bucket's messages since the last Checkpoint (the
// serve command calls it every minute and at a clean stop), not its
// history.

// flushAfter is how many marks in memory start a write. bbolt copies
// every page a write changes and digests fall on pages at random, so a
// write costs about one page per mark until a batch is larger than the
// file's pages (BenchmarkIndexFileWrite: 46 CPU µs per mark in batches of
// 1000 into a million, 16 in batches of 131 072): large enough to share
// pages at a high rate, small enough that memory holds a few tens of MB.
var flushAfter = 65536

// flushRetryAfter keeps a failing file (a full disk) from being tried
// again by every commit; the marks stay in memory meanwhile.
const flushRetryAfter = 10 * time.Second

// Checkpoint brings the index up to the bucket's end and writes what it
// holds in memory to KVOptions.IndexFile, with the sequence it read to.
// Nothing to do without a file, or before the index was first read.
func (s *KVStore) Checkpoint(ctx context.Context) error {
	if s.opts.IndexFile == "" || !s.ix.loaded.Load() || !s.ix.onDisk() {
		return nil
	}
	s.readMu.Lock()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	err := s.ix.catchUp(ctx, s.js, s.stream, s.pre)
	cancel()
	s.readMu.Unlock()
	if err != nil {
		return fmt.Errorf("ledger checkpoint: %w", err)
	}
	if err := s.ix.flush(); err != nil {
		s.ix.report(RebuildWrite, err)
		return fmt.Errorf("ledger checkpoint: %w", err)
	}
	return nil
}

// open starts the index from the file at path (made if missing or not
// usable: rebuilt says why) for the bucket's stream; the caller then reads
// the bucket after the sequence it sets. A file that was there is checked
// in the background (verify, damage.go).
func (ix *index) open(path, bucket string, created time.Time, lastSeq uint64) (*rebuild, error) {
	di, st, rebuilt, err := openDisk(path, bucket, created, lastSeq)
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.disk = di
	ix.applied = max(ix.applied, st.applied)
	if st.legacy.After(ix.legacy) {
		ix.legacy = st.legacy
	}
	if di.existing && rebuilt == nil && verifyAtOpen {
		go func() {
			start := time.Now()
			if err := di.verify(); err != nil {
				ix.report(RebuildCheck, err)
				return
			}
			ix.log.Debug().Dur("took", time.Since(start)).Str("file", path).Msg("ledger index file checked")
		}()
	}
	return rebuilt, nil
}

// report passes an error that is the file's to the store (onDamage),
// which replaces the file; other errors are the environment's.
func (ix *index) report(reason string, err error) {
	if isDamage(err) && ix.onDamage != nil {
		ix.onDamage(reason, err)
	}
}

// detach drops di, damaged, from the index and closes it: the index
// starts again as at a first start (the next lookup reads the whole
// bucket; what memory holds stays, the bucket has it too). False when di
// is no longer the index's file.
func (ix *index) detach(di *diskIndex) bool {
	ix.flushMu.Lock() // no write under way
	defer ix.flushMu.Unlock()
	ix.mu.Lock()
	if ix.disk != di {
		ix.mu.Unlock()
		return false
	}
	ix.disk, ix.recent, ix.recentOnDisk, ix.applied = nil, nil, false, 0
	ix.loaded.Store(false)
	ix.flushFail.Store(0)
	ix.gen.Add(1)
	ix.mu.Unlock()
	_ = di.close()
	return true
}

func (ix *index) onDisk() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.disk != nil
}

// flushSoon starts a write unless one is under way or the last failed a
// moment ago; ix.mu is held.
func (ix *index) flushSoon() {
	if time.Since(time.Unix(0, ix.flushFail.Load())) < flushRetryAfter {
		return
	}
	if !ix.flushing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			err := ix.flush()
			if err != nil {
				ix.flushFail.Store(time.Now().UnixNano())
				ix.report(RebuildWrite, err)
			}
			ix.flushing.Store(false)
			// commits that came during the write and found it under way
			ix.mu.RLock()
			again := err == nil && ix.disk != nil && len(ix.marks) >= ix.flushAfter
			ix.mu.RUnlock()
			if !again || !ix.flushing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// flush writes the marks in memory to the file with the sequence every
// message up to which they (and the file) include. Lookups meanwhile find
// them in recent; a failed write puts them back.
func (ix *index) flush() error {
	ix.flushMu.Lock()
	defer ix.flushMu.Unlock()
	ix.mu.Lock()
	disk := ix.disk
	if disk == nil {
		ix.mu.Unlock()
		return nil
	}
	pending := ix.marks
	ix.marks, ix.recent, ix.recentOnDisk = make(map[digest]mark), pending, false
	applied, legacy := ix.applied, ix.legacy
	ix.mu.Unlock()
	err := disk.write(pending, applied, legacy, ix.now().Add(-ix.ttl).UnixNano())
	if err == nil {
		ix.mu.Lock()
		ix.recentOnDisk = true
		ix.mu.Unlock()
	}
	if err != nil {
		ix.mu.Lock()
		for d, m := range pending {
			if cur, ok := ix.marks[d]; !ok || cur.at < m.at {
				ix.marks[d] = m
			}
		}
		ix.recent = nil
		ix.mu.Unlock()
		return err
	}
	return nil
}

// size is how many interchanges the index holds: on disk (expired ones
// until a write removes them) and in memory but not yet on disk. It does
// not look the marks in memory up in the file (the gauge is read often):
// an interchange recorded again after it was written, or read again from
// the bucket after a restart, counts twice until the next write.
func (ix *index) size() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.disk == nil {
		return len(ix.marks)
	}
	n := int(ix.disk.count.Load()) + len(ix.marks)
	if !ix.recentOnDisk {
		n += len(ix.recent)
	}
	return n
}

// errClosed: lookups after Close would miss what is only in the file.
var errClosed = errors.New("ledger store closed")

// close closes the file without writing what is in memory (the bucket
// has it; the next start reads it again).
func (ix *index) close() error {
	ix.flushMu.Lock()
	defer ix.flushMu.Unlock()
	ix.mu.Lock()
	disk := ix.disk
	if disk != nil {
		ix.disk, ix.closed = nil, true
	}
	ix.mu.Unlock()
	if disk == nil {
		return nil
	}
	return disk.close()
}
