package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A damaged index file. The checks at open (diskindex.go) read the meta
// and the file's size; a damaged data page inside passes them. bbolt
// reads pages from its memory map without checksums: on a page whose
// header is wrong it panics (FastCheck: "page expected to be ...", "has
// unexpected type/flags"); on a branch element that points past the map it
// faults, which kills the process unless the goroutine asked for a panic
// instead (debug.SetPanicOnFault); on damaged keys it may find nothing,
// silently. So:
//
//   - every touch of bbolt goes through guard, which turns faults into
//     panics and panics into a *damageError;
//   - a lookup or a write that gets one, and the check after open (verify:
//     a walk of the marks and the expiry in key order, then bbolt's own
//     tx.Check), report it to the store (onDamage), which closes the file,
//     moves it aside (ledger-index.db.damaged-<time>, the last one only)
//     and starts the index again as at a first start: the next lookup
//     reads the whole bucket into memory (lookups wait for that read, so
//     none answers "unseen" from what it has not read), and a new file is
//     written from it in the background;
//   - a file found damaged again within rebuildBackoff of the last rebuild
//     is not made again in this process: the index stays in memory.
//
// Errors that are the environment's (a full disk, a file that cannot be
// read) are not damage: they fail the call as before, and the file stays.

// Rebuild reasons, the label of edihub_ledger_index_rebuilds_total.
const (
	RebuildStale  = "stale"  // another bucket or stream, a newer format, ahead of the stream: removed
	RebuildOpen   = "open"   // damaged at open (not a bbolt file, bad meta, cut): moved aside
	RebuildCheck  = "check"  // the check after open found damage: moved aside
	RebuildLookup = "lookup" // a lookup hit a damaged page: moved aside
	RebuildWrite  = "write"  // a write hit a damaged page: moved aside
)

// RebuildReasons are every reason, for a metric with each label present.
var RebuildReasons = []string{RebuildStale, RebuildOpen, RebuildCheck, RebuildLookup, RebuildWrite}

// verifyAtOpen: a file that was there is checked after open (tests turn
// it off to find damage at a lookup or a write instead).
var verifyAtOpen = true

// rebuildBackoff: damage again this soon after a rebuild is the disk's,
// not one bad page; the index stays in memory rather than rebuild in a
// loop.
const rebuildBackoff = 10 * time.Minute

// damageError is an error that is the index file's, not the
// environment's: the file it came from is rebuilt.
type damageError struct {
	di  *diskIndex // nil until tagged
	err error
}

func (e *damageError) Error() string { return "ledger index file damaged: " + e.err.Error() }
func (e *damageError) Unwrap() error { return e.err }

func damaged(err error) error { return &damageError{err: err} }

func isDamage(err error) bool {
	var de *damageError
	return errors.As(err, &de)
}

// tag names di as the file of a damage error, and makes bbolt's errors
// that only a damaged file gives damage errors.
func (di *diskIndex) tag(err error) error {
	if err == nil {
		return nil
	}
	var de *damageError
	if errors.As(err, &de) {
		de.di = di
		return err
	}
	for _, structural := range []error{berrors.ErrIncompatibleValue, berrors.ErrInvalid, berrors.ErrChecksum, berrors.ErrVersionMismatch} {
		if errors.Is(err, structural) {
			return &damageError{di: di, err: err}
		}
	}
	return err
}

// guard runs f, the only way this package touches an open bbolt file:
// a fault on the memory map panics instead of killing the process, and a
// panic is a damage error.
func guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(fmt.Errorf("bbolt: %v", r))
		}
	}()
	return f()
}

// environmental: an error of the system (permissions, a full disk, I/O),
// not of the file's content.
func environmental(err error) bool {
	var pe *os.PathError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &errno)
}

// verify is the check after open: a walk of the marks and of the expiry
// in key order (every page on the way is read and its header checked by
// bbolt; keys must be 32 and 40 bytes and ascending), then bbolt's
// tx.Check (pages referenced twice, freed pages in use, key order across
// pages). The walk comes first because it reads pages in this goroutine,
// where a pointer past the map is caught; tx.Check reads them in one of
// its own, where it would not be. It holds writeMu: tx.Check reads the
// free list, which a write changes. Its cost is one read of the file
// (BENCHMARKS.md, issue 25); close stops the walk early.
func (di *diskIndex) verify() (err error) {
	defer func() { di.checkDone(err) }()
	di.writeMu.Lock()
	defer di.writeMu.Unlock()
	if di.stop.Load() {
		return nil
	}
	var stopped bool
	err = guard(func() error {
		return di.db.View(func(tx *bolt.Tx) error {
			for _, b := range []struct {
				name    []byte
				keySize int
			}{{diskMarks, 32}, {diskExpiry, 8 + 32}} {
				var prev []byte
				c := tx.Bucket(b.name).Cursor()
				n := 0
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if len(k) != b.keySize || (b.keySize == 32 && len(v) < 8) {
						return damaged(fmt.Errorf("%s: a key of %d bytes, a value of %d", b.name, len(k), len(v)))
					}
					if prev != nil && bytes.Compare(prev, k) >= 0 {
						return damaged(fmt.Errorf("%s: keys out of order", b.name))
					}
					prev = k
					if n++; n%4096 == 0 && di.stop.Load() {
						stopped = true
						return nil
					}
				}
			}
			var first error
			for err := range tx.Check() { // drained: its goroutine reads the transaction until it closes the channel
				if first == nil {
					first = damaged(fmt.Errorf("check: %w", err))
				}
			}
			return first
		})
	})
	if stopped {
		return nil
	}
	return di.tag(err)
}

// checkDone ends the wait for the check after open, with its result.
func (di *diskIndex) checkDone(err error) {
	di.checkOnce.Do(func() {
		di.checkErr = err
		close(di.checked)
	})
}

// errStillChecking: a lookup the file did not answer waited the store's
// Timeout for the check after open (the environment's: tried again).
var errStillChecking = errors.New("ledger index file: the check after open is still running")

// awaitCheck waits, up to timeout, for the check after open: a file that
// does not have a mark may have lost it to a damaged page that reads
// without a panic (keys out of order: the check finds it), so "unseen" is
// not answered from the file before the check is done. Found and healthy
// answers need no wait. It says whether it waited (the file may have had
// a write meanwhile) and returns the check's damage, if any.
func (di *diskIndex) awaitCheck(timeout time.Duration) (waited bool, err error) {
	select {
	case <-di.checked:
		return false, di.checkErr
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-di.checked:
		return true, di.checkErr
	case <-t.C:
		return true, errStillChecking
	}
}

// rebuild is why a file was replaced and where the damaged one went.
type rebuild struct {
	reason string
	cause  error
	aside  string // "": removed
}

// moveAside renames a damaged file at path to path.damaged-<time>, for
// the operator, after removing the one kept before (at most one is kept:
// the bucket has everything, the copy is only for a look at the damage).
func moveAside(path string, now time.Time) (string, error) {
	old, _ := filepath.Glob(path + ".damaged-*")
	for _, o := range old {
		_ = os.Remove(o)
	}
	aside := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		if rerr := os.Remove(path); rerr != nil {
			return "", errors.Join(err, rerr)
		}
		return "", nil // removed, not kept
	}
	return aside, nil
}

// indexDamaged replaces the index's file after err, a damage error of it,
// found at reason: closed, moved aside, and the index started again as at
// a first start (detach); the next lookup reads the whole bucket and makes
// a new file, unless the last rebuild was less than rebuildBackoff ago.
// It holds readMu: no read of the bucket is under way while the index's
// sequence goes back to zero.
func (s *KVStore) indexDamaged(reason string, err error) {
	var de *damageError
	if !errors.As(err, &de) || de.di == nil {
		return
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if !s.ix.detach(de.di) {
		return // replaced already
	}
	aside, merr := moveAside(de.di.path, time.Now())
	r := &rebuild{reason: reason, cause: err, aside: aside}
	switch again := !s.lastRebuild.IsZero() && time.Since(s.lastRebuild) < rebuildBackoff; {
	case merr != nil:
		s.checkpointTried = true
		s.rebuilds[reason].Add(1)
		s.opts.Log.Error().Err(merr).AnErr("damage", err).Str("file", de.di.path).
			Msg("damaged ledger index file cannot be moved aside or removed; the index stays in memory until a restart")
	case again:
		s.checkpointTried = true
		s.rebuilds[reason].Add(1)
		s.opts.Log.Error().Err(err).Str("file", de.di.path).Str("kept_as", aside).Dur("since_last_rebuild", time.Since(s.lastRebuild)).
			Msg("ledger index file damaged again soon after a rebuild (check the disk); the index stays in memory until a restart")
	default:
		s.checkpointTried = false // the next read opens a new one
		s.rebuilt(r)
	}
}

// rebuilt counts and logs a file replaced; readMu is held.
func (s *KVStore) rebuilt(r *rebuild) {
	s.lastRebuild = time.Now()
	s.rebuilds[r.reason].Add(1)
	ev := s.opts.Log.Warn()
	if r.reason == RebuildStale {
		ev = s.opts.Log.Info()
	}
	ev = ev.Str("reason", r.reason).Err(r.cause).Str("file", s.opts.IndexFile)
	if r.aside != "" {
		ev = ev.Str("kept_as", r.aside)
	}
	ev.Msg("ledger index file rebuilt from the bucket; nothing to do (lookups read the bucket meanwhile)")
}

// IndexRebuilds is how many times this store replaced its index file for
// reason (one of RebuildReasons).
func (s *KVStore) IndexRebuilds(reason string) int64 {
	if c := s.rebuilds[reason]; c != nil {
		return c.Load()
	}
	return 0
}
