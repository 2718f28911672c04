package counter

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	ejs "github.com/edihub/edihub/jetstream"
)

var bucket = []byte("attempts")

// Options configure a Store. A nil *Options means defaults.
type Options struct {
	// TTL after the last failure, after which Purge removes a record.
	TTL time.Duration
	// Writers is how many goroutines record failures at once (the hub's
	// worker count); it sizes bbolt's write batches.
	Writers int
	// BatchDelay is how long a write may wait for others to join its batch.
	BatchDelay time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.TTL == 0 {
		o.TTL = 7 * 24 * time.Hour
	}
	if o.Writers <= 0 {
		o.Writers = 8
	}
	if o.BatchDelay == 0 {
		o.BatchDelay = 2 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate reports settings that cannot work.
func (o *Options) Validate() error {
	if o.TTL < time.Minute {
		return fmt.Errorf("counter ttl %v: must be at least a minute", o.TTL)
	}
	return nil
}

// Store is the bbolt attempt store.
type Store struct {
	db   *bolt.DB
	opts Options
	// present mirrors the keys in the file, so that Get of a message with
	// no record (every healthy message) needs no read transaction. One hub
	// owns a store file (bbolt locks it), so the mirror is exact.
	present sync.Map     // string(Key.bytes()) → struct{}
	records atomic.Int64 // keys in present: zero on a healthy hub, so Get returns at once
}

// Open opens or creates the store file at path.
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
		return nil, fmt.Errorf("open counter db %s: %w", path, err)
	}
	// One batch per round of workers: bbolt's default (1000 writes or 10 ms)
	// would make every failure wait 10 ms for writers that never come.
	db.MaxBatchSize = o.Writers
	db.MaxBatchDelay = o.BatchDelay
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("init counter db %s: %w", path, err)
	}
	s := &Store{db: db, opts: o}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, _ []byte) error {
			s.remember(string(k))
			return nil
		})
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("load counter db %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) remember(key string) {
	if _, had := s.present.LoadOrStore(key, struct{}{}); !had {
		s.records.Add(1)
	}
}

func (s *Store) forget(key string) {
	if _, had := s.present.LoadAndDelete(key); had {
		s.records.Add(-1)
	}
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Get returns the record for k; a message with no failures has a zero Record.
func (s *Store) Get(k Key) (Record, error) {
	var r Record
	if s.records.Load() == 0 {
		return r, nil
	}
	kb := k.bytes()
	if _, ok := s.present.Load(string(kb)); !ok {
		return r, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get(kb)
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &r)
	})
	if err != nil {
		return Record{}, fmt.Errorf("read attempts of %s: %w", k, err)
	}
	return r, nil
}

// RecordFailure appends f to k's record and returns the new record; it is
// stored when it returns.
func (s *Store) RecordFailure(k Key, f Failure) (Record, error) {
	return recordFailure(s.update, s.opts.Now, k, f)
}

// MarkSolo records that k is about to run alone (a suspect after a crash),
// stored when it returns, so that a death during the run is attributed to k.
func (s *Store) MarkSolo(k Key) (Record, error) { return markSolo(s.update, s.opts.Now, k) }

// update reads k's record, applies change and writes it back in one
// batched, fsynced transaction.
func (s *Store) update(k Key, change func(*Record)) (Record, error) {
	kb := k.bytes()
	var out Record
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		var r Record
		if v := b.Get(kb); v != nil {
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
		}
		change(&r)
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		out = r
		return b.Put(kb, v)
	})
	if err != nil {
		ejs.StoreFaults.Observe(err) // a full disk: the environment's, not the message's
		return Record{}, err
	}
	s.remember(string(kb))
	return out, nil
}

// Delete forgets k (on success or quarantine). Deleting nothing is fine.
func (s *Store) Delete(k Key) error {
	if s.records.Load() == 0 {
		return nil
	}
	if _, ok := s.present.Load(string(k.bytes())); !ok {
		return nil // nothing to delete: no transaction, no fsync
	}
	err := s.db.Batch(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).Delete(k.bytes())
	})
	if err != nil {
		return fmt.Errorf("delete attempts of %s: %w", k, err)
	}
	s.forget(string(k.bytes()))
	return nil
}

// Purge removes records whose last failure is older than the TTL and
// returns how many it removed.
func (s *Store) Purge() (int, error) {
	cutoff := s.opts.Now().Add(-s.opts.TTL)
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil; {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil || r.LastAt.Before(cutoff) {
				key := string(k) // copied before Delete changes the page
				if err := c.Delete(); err != nil {
					return err
				}
				s.forget(key)
				n++
				k, v = c.Seek([]byte(key)) // Delete moves the cursor; re-seek from here
				continue
			}
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("purge counter records: %w", err)
	}
	return n, nil
}

// Len returns how many messages have records (for the metrics gauge),
// from the in-memory mirror of the keys.
func (s *Store) Len() (int, error) { return int(s.records.Load()), nil }
