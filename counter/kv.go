package counter

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

// KVOptions configure a KVStore. A nil *KVOptions means defaults.
type KVOptions struct {
	// Bucket is the KV bucket ("edihub-attempts"); hubs that share a
	// cluster and consumers share it too.
	Bucket string
	// Replicas of the bucket (1); 3 on a cluster.
	Replicas int
	// TTL after the last failure, after which Purge removes a record
	// (7 days, as the bbolt store).
	TTL time.Duration
	// Storage is file (default) or memory.
	Storage jetstream.StorageType
	// Timeout bounds one call of the store (5 s), all its tries.
	Timeout time.Duration
	// Attempt bounds one try of a call (0: one try for the whole
	// Timeout). A request sent while the bucket elects a leader is never
	// answered; serve sets it to jetstream.OutputAttempt on a cluster, so
	// a call is sent again and answered within a try of the new leader
	// (jetstream.Retry) instead of failing after the whole Timeout.
	Attempt time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
}

func (o *KVOptions) setDefaults() {
	if o.Bucket == "" {
		o.Bucket = "edihub-attempts"
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.TTL == 0 {
		o.TTL = 7 * 24 * time.Hour
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate reports settings that cannot work.
func (o *KVOptions) Validate() error {
	if o.TTL < time.Minute {
		return fmt.Errorf("counter ttl %v: must be at least a minute", o.TTL)
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return fmt.Errorf("counter replicas %d: must be 1 to 5", o.Replicas)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("counter timeout %v: must be positive", o.Timeout)
	}
	if o.Attempt < 0 || o.Attempt > o.Timeout {
		return fmt.Errorf("counter attempt %v: must be 0 (one try) or up to the timeout %v", o.Attempt, o.Timeout)
	}
	return nil
}

// maxConflicts bounds the retries of one read-modify-write; each conflict
// means another writer made progress, so running out takes a storm.
const maxConflicts = 100

// KVStore is the attempt store on a (replicated) JetStream KV bucket, for
// hubs that share a cluster: a message redelivered to another hub finds
// the failures the first one recorded. Updates are compare-and-set on the
// key's revision, so concurrent writers never lose one.
//
// Unlike the bbolt store it keeps no local mirror of the keys (another hub
// may write any key), so Get and Delete of a healthy message cost a read.
//
// The bucket's MaxAge is the TTL: every write replaces the key's message,
// so the server drops a record TTL after its last write even if no Purge
// runs. A per-key TTL would need the header on Update, which the KV API
// does not offer.
type KVStore struct {
	kv   jetstream.KeyValue
	opts KVOptions
}

// OpenKV creates or updates the bucket and returns a store on it. The
// caller owns js's connection.
func OpenKV(ctx context.Context, js jetstream.JetStream, opts *KVOptions) (*KVStore, error) {
	var o KVOptions
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	kv, err := ejs.EnsureKeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket:      o.Bucket,
		Description: "edihub attempt records",
		TTL:         o.TTL,
		Replicas:    o.Replicas,
		Storage:     o.Storage,
	})
	if err != nil {
		return nil, fmt.Errorf("open counter bucket %s: %w", o.Bucket, err)
	}
	return &KVStore{kv: kv, opts: o}, nil
}

// Close does nothing: the connection is the caller's.
func (s *KVStore) Close() error { return nil }

func (s *KVStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.Timeout)
}

// kvKey maps k to a KV key, which allows [-/_=.a-zA-Z0-9] only: stream and
// consumer are base64url behind a '_' (never an empty token), the sequence
// decimal. Tokens are separated by dots, so keys of one consumer share a
// prefix ("a.<stream>.<consumer>.>").
func kvKey(k Key) string {
	enc := base64.RawURLEncoding
	return "a._" + enc.EncodeToString([]byte(k.Stream)) + "._" + enc.EncodeToString([]byte(k.Consumer)) + "." + strconv.FormatUint(k.Seq, 10)
}

// get returns k's record, revision (0 when it has none) and stored value,
// in tries of Attempt within ctx.
func (s *KVStore) get(ctx context.Context, key string) (Record, uint64, []byte, error) {
	var e jetstream.KeyValueEntry
	err := ejs.Retry(ctx, s.opts.Attempt, func(actx context.Context) error {
		var err error
		e, err = s.kv.Get(actx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return ejs.Permanent(err)
		}
		return err
	})
	var r Record
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return r, 0, nil, nil
	}
	if err != nil {
		return r, 0, nil, err
	}
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return r, 0, nil, fmt.Errorf("decode record: %w", err)
	}
	return r, e.Revision(), e.Value(), nil
}

// Get returns the record for k; a message with no failures has a zero Record.
func (s *KVStore) Get(k Key) (Record, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	r, _, _, err := s.get(ctx, kvKey(k))
	if err != nil {
		return Record{}, fmt.Errorf("read attempts of %s: %w", k, err)
	}
	return r, nil
}

// RecordFailure appends f to k's record and returns the new record; it is
// stored when it returns.
func (s *KVStore) RecordFailure(k Key, f Failure) (Record, error) {
	return recordFailure(s.update, s.opts.Now, k, f)
}

// MarkSolo records that k is about to run alone (a suspect after a crash),
// stored when it returns, so that a death during the run is attributed to k.
func (s *KVStore) MarkSolo(k Key) (Record, error) { return markSolo(s.update, s.opts.Now, k) }

// update reads k's record, applies change and writes it back if nobody
// wrote it in between; otherwise it reads again. A write that got no
// answer within a try is tried again from the read: when the record then
// holds exactly what it wrote, the write was stored and change is not
// applied twice (a failure counted twice would make a message poison
// sooner).
func (s *KVStore) update(k Key, change func(*Record)) (Record, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	key := kvKey(k)
	var unanswered []byte // the value of a write whose answer was lost
	var wrote Record
	for range maxConflicts {
		r, rev, stored, err := s.get(ctx, key)
		if err != nil {
			return Record{}, err
		}
		if unanswered != nil && bytes.Equal(stored, unanswered) {
			return wrote, nil
		}
		change(&r)
		v, err := json.Marshal(r)
		if err != nil {
			return Record{}, err
		}
		err = s.write(ctx, key, v, rev)
		if err == nil {
			return r, nil
		}
		if conflict(err) {
			continue
		}
		ejs.StoreFaults.Observe(err)
		if s.opts.Attempt <= 0 || ctx.Err() != nil || !ejs.Transient(err) || ejs.StorageFault(err) {
			return Record{}, err
		}
		unanswered, wrote = v, r
		select { // a leaderless bucket may say "no responders" at once
		case <-ctx.Done():
			return Record{}, err
		case <-time.After(writePause):
		}
	}
	return Record{}, fmt.Errorf("%d conflicting writes in a row", maxConflicts)
}

// writePause is the least time between two tries of a write that got no
// answer: an election takes a second or more.
const writePause = 250 * time.Millisecond

// write stores v at key if its revision is still rev (0: no record), in
// one try of Attempt.
func (s *KVStore) write(ctx context.Context, key string, v []byte, rev uint64) error {
	if s.opts.Attempt > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Attempt)
		defer cancel()
	}
	var err error
	if rev == 0 {
		_, err = s.kv.Create(ctx, key, v) // also over a delete marker
	} else {
		_, err = s.kv.Update(ctx, key, v, rev)
	}
	return err
}

// conflict reports a write that lost a race: the key exists or has
// another revision (replicated buckets report it with another code).
func conflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Delete forgets k (on success or quarantine). Deleting nothing is fine
// and writes nothing: a marker per healthy message would fill the bucket.
func (s *KVStore) Delete(k Key) error {
	ctx, cancel := s.ctx()
	defer cancel()
	key := kvKey(k)
	_, rev, _, err := s.get(ctx, key)
	if err == nil && rev != 0 {
		err = ejs.Retry(ctx, s.opts.Attempt, func(actx context.Context) error { return s.kv.Purge(actx, key) })
	}
	if err != nil {
		return fmt.Errorf("delete attempts of %s: %w", k, err)
	}
	return nil
}

// Purge removes records whose last failure is older than the TTL (or that
// cannot be decoded, as the bbolt store does) and returns how many. A
// record updated meanwhile keeps its new revision. It also drops the
// markers that deletes left more than half an hour ago.
func (s *KVStore) Purge() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*s.opts.Timeout)
	defer cancel()
	cutoff := s.opts.Now().Add(-s.opts.TTL)
	n := 0
	err := s.scan(ctx, false, func(e jetstream.KeyValueEntry) error {
		var r Record
		if err := json.Unmarshal(e.Value(), &r); err == nil && !r.LastAt.Before(cutoff) {
			return nil
		}
		err := s.kv.Purge(ctx, e.Key(), jetstream.LastRevision(e.Revision()))
		if err == nil {
			n++
		} else if !conflict(err) {
			return fmt.Errorf("purge %s: %w", e.Key(), err)
		}
		return nil
	})
	if err == nil {
		err = s.kv.PurgeDeletes(ctx)
	}
	if err != nil {
		return n, fmt.Errorf("purge counter records: %w", err)
	}
	return n, nil
}

// Len counts the records by listing the bucket's keys: exact, and cheap
// while few messages fail (only failing messages have a record).
func (s *KVStore) Len() (int, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	n := 0
	err := s.scan(ctx, true, func(jetstream.KeyValueEntry) error { n++; return nil })
	if err != nil {
		return 0, fmt.Errorf("count counter records: %w", err)
	}
	return n, nil
}

// scan calls fn for every live record, as they are when it starts.
func (s *KVStore) scan(ctx context.Context, metaOnly bool, fn func(jetstream.KeyValueEntry) error) error {
	opts := []jetstream.WatchOpt{jetstream.IgnoreDeletes()}
	if metaOnly {
		opts = append(opts, jetstream.MetaOnly())
	}
	w, err := s.kv.WatchAll(ctx, opts...)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("watch closed")
			}
			if e == nil { // the initial values are done
				return nil
			}
			if err := fn(e); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
