package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucket = []byte("interchanges")

// Options configure a Store; nil means defaults.
type Options struct {
	// TTL is how long an interchange is remembered after it was processed
	// (30 days). A retransmission after that is processed again.
	TTL time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.TTL == 0 {
		o.TTL = 30 * 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate reports settings that cannot work.
func (o *Options) Validate() error {
	if o.TTL < time.Minute {
		return fmt.Errorf("ledger ttl %v: must be at least a minute", o.TTL)
	}
	return nil
}

// Store is the bbolt ledger. It is safe for concurrent use; bbolt allows
// one process per file, so a second `edihub serve` on the same data folder
// fails to open it (after a 5 s wait) instead of corrupting it.
type Store struct {
	db   *bolt.DB
	opts Options
}

// Open opens or creates the ledger file at path.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("init ledger %s: %w", path, err)
	}
	return &Store{db: db, opts: o}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// TTL returns how long entries are kept.
func (s *Store) TTL() time.Duration { return s.opts.TTL }

// lookup returns k's entry, or else the partner-less entry that a ledger
// written before keys had a partner holds for it: such an entry matches
// every partner until it expires (forgetting it would reprocess it).
func lookup(b *bolt.Bucket, k Key) []byte {
	if v := b.Get(k.bytes()); v != nil {
		return v
	}
	return b.Get(k.legacyBytes())
}

func encodeTime(t time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())) }

func decodeTime(v []byte) (time.Time, error) {
	if len(v) != 8 {
		return time.Time{}, errors.New("ledger entry is not a timestamp")
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))), nil
}

// Seen reports whether k was recorded within the TTL. An expired entry
// that Purge has not removed yet counts as not seen, so the TTL is exact.
func (s *Store) Seen(k Key) (bool, error) {
	var seen bool
	err := s.db.View(func(tx *bolt.Tx) error {
		v := lookup(tx.Bucket(bucket), k)
		if v == nil {
			return nil
		}
		at, err := decodeTime(v)
		if err != nil {
			return err
		}
		seen = s.opts.Now().Sub(at) < s.opts.TTL
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("ledger lookup %s: %w", k, err)
	}
	return seen, nil
}

// Recorded returns when k was recorded (zero if never or expired), for
// dry-runs and the runbook.
func (s *Store) Recorded(k Key) (time.Time, error) {
	var at time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		v := lookup(tx.Bucket(bucket), k)
		if v == nil {
			return nil
		}
		t, err := decodeTime(v)
		if err == nil && s.opts.Now().Sub(t) < s.opts.TTL {
			at = t
		}
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("ledger lookup %s: %w", k, err)
	}
	return at, nil
}

// Record remembers k as processed now; recording it again refreshes the
// time (a forced reprocessing starts a new TTL). It is durable when it
// returns. Batch lets the partitions' workers share one fsync.
func (s *Store) Record(k Key) error {
	v := encodeTime(s.opts.Now())
	err := s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put(k.bytes(), v) })
	if err != nil {
		return fmt.Errorf("ledger record %s: %w", k, err)
	}
	return nil
}

// Purge removes the entries older than the TTL and returns how many.
func (s *Store) Purge() (int, error) {
	cutoff := s.opts.Now().Add(-s.opts.TTL)
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil; {
			at, err := decodeTime(v)
			if err != nil || !at.After(cutoff) {
				if err := c.Delete(); err != nil {
					return err
				}
				n++
				k, v = c.Seek(k) // Delete moves the cursor; re-seek from here
				continue
			}
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("purge ledger: %w", err)
	}
	return n, nil
}

// Len returns how many entries the file holds (expired ones included
// until the next Purge), for a metrics gauge.
func (s *Store) Len() (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	})
	return n, err
}
