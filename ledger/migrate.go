package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// The bbolt ledger of before (ledger.db, read only by MigrateBolt): one
// bucket of keys (Key.bytes, or Key.legacyBytes for entries written
// before keys had a partner) to the time recorded, big-endian UnixNano.
var bucket = []byte("interchanges")

func decodeTime(v []byte) (time.Time, error) {
	if len(v) != 8 {
		return time.Time{}, errors.New("ledger entry is not a timestamp")
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))), nil
}

// migrateWindow is how many publishes the migration keeps in flight.
const migrateWindow = 1000

// MigrateBolt copies every unexpired entry of the bbolt ledger at path into
// dst, each with its original time and its remaining TTL (dst's TTL), then
// renames the file to path+".migrated" so that the next start migrates
// nothing. A missing file migrates nothing. It returns how many live
// entries the file held (copied, or already in the bucket with a time as
// recent); an error leaves the file in place, and running it again is safe.
//
// Entries written before keys had a partner go under legacy keys and set
// the bucket's legacy flag, so that Seen still finds them for any partner
// until the last of them expires (see doc.go).
func MigrateBolt(path string, dst *KVStore) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return 0, fmt.Errorf("migrate ledger: open %s: %w", path, err)
	}
	n, legacyUntil, err := migrateEntries(db, dst)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("migrate ledger %s: %w", path, err)
	}
	if !legacyUntil.IsZero() {
		if err := dst.raiseLegacyFlag(legacyUntil); err != nil {
			return n, fmt.Errorf("migrate ledger %s: %w", path, err)
		}
	}
	if err := os.Rename(path, path+".migrated"); err != nil {
		return n, fmt.Errorf("migrate ledger: %w", err)
	}
	dst.reread.Store(true) // lookups see the copied entries and the flag
	return n, nil
}

type pending struct {
	key string
	at  time.Time
	ack jetstream.PubAckFuture
}

// migrateEntries publishes the live entries asynchronously, a window at a
// time, and returns how many it copied and until when legacy ones live.
func migrateEntries(db *bolt.DB, dst *KVStore) (int, time.Time, error) {
	now := dst.opts.Now()
	var (
		n           int
		legacyUntil time.Time
		inflight    []pending
	)
	flush := func() error {
		for _, p := range inflight {
			if err := dst.awaitMigrated(p); err != nil {
				return err
			}
			n++
		}
		inflight = inflight[:0]
		return nil
	}
	err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			at, err := decodeTime(v)
			if err != nil {
				return nil // the bbolt store itself fails on it and purges it
			}
			left := dst.opts.TTL - now.Sub(at)
			fields := countFields(k)
			if left <= 0 || (fields != 3 && fields != 4) {
				return nil
			}
			key := kvKey(k)
			if fields == 3 && at.Add(dst.opts.TTL).After(legacyUntil) {
				legacyUntil = at.Add(dst.opts.TTL)
			}
			ack, err := dst.js.PublishMsgAsync(dst.migrateMsg(key, at, left))
			if err != nil {
				return fmt.Errorf("publish %s: %w", key, err)
			}
			inflight = append(inflight, pending{key: key, at: at, ack: ack})
			if len(inflight) >= migrateWindow {
				return flush()
			}
			return nil
		})
	})
	if err == nil {
		err = flush()
	}
	return n, legacyUntil, err
}

// migrateMsg writes an entry only where the bucket has none: an entry a
// hub already recorded in the bucket is newer than the file's. No
// Nats-Msg-Id, so that the fallback in awaitMigrated is not deduplicated.
func (s *KVStore) migrateMsg(key string, at time.Time, ttl time.Duration) *nats.Msg {
	m := s.entryMsg(key, at, ttl, "")
	m.Header.Del(jetstream.MsgIDHeader)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	return m
}

// awaitMigrated waits for p's ack. A key that exists is fine while its
// entry is live; if it expired (the server leaves a marker), p is written
// over it.
func (s *KVStore) awaitMigrated(p pending) error {
	var err error
	select {
	case <-p.ack.Ok():
		return nil
	case err = <-p.ack.Err():
	case <-time.After(s.opts.Timeout):
		return fmt.Errorf("publish %s: no ack within %v", p.key, s.opts.Timeout)
	}
	if !wrongLastSeq(err) {
		return fmt.Errorf("publish %s: %w", p.key, err)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	live, _, err := s.get(ctx, p.key)
	if err != nil {
		return fmt.Errorf("read %s: %w", p.key, err)
	}
	if !live.IsZero() && !live.Before(p.at) {
		return nil
	}
	m := s.entryMsg(p.key, p.at, s.opts.TTL-s.opts.Now().Sub(p.at), "")
	m.Header.Del(jetstream.MsgIDHeader)
	if _, err := s.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("publish %s: %w", p.key, err)
	}
	return nil
}

// raiseLegacyFlag sets the legacy flag to until unless it is later
// already; revisions make two hubs migrating at once keep the later one.
// The flag needs no TTL of its own: the bucket's MaxAge (the TTL) drops it
// no earlier than the entries it stands for.
func (s *KVStore) raiseLegacyFlag(until time.Time) error {
	ctx, cancel := s.ctx()
	defer cancel()
	value := []byte(until.UTC().Format(time.RFC3339Nano))
	for {
		cur, rev, err := s.legacyFlag(ctx)
		if err != nil {
			return fmt.Errorf("read legacy flag: %w", err)
		}
		if !cur.Before(until) {
			break
		}
		if rev == 0 {
			_, err = s.kv.Create(ctx, kvLegacyFlag, value)
		} else {
			_, err = s.kv.Update(ctx, kvLegacyFlag, value, rev)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("write legacy flag: %w", err)
		}
	}
	return nil
}

// wrongLastSeq reports a failed expectation: the key exists. Replicated
// buckets report it with another code.
func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
