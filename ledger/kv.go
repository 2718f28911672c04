package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KVOptions configure a KVStore; nil means defaults.
type KVOptions struct {
	// Bucket is the KV bucket ("edihub-ledger"). Hubs on one cluster that
	// name the same bucket share one ledger.
	Bucket string
	// TTL is how long an interchange is remembered (30 days).
	TTL time.Duration
	// Replicas of the bucket (1); 3 on a cluster.
	Replicas int
	// Storage is file (default) or memory; memory forgets on restart.
	Storage jetstream.StorageType
	// Timeout bounds one call to the server (5 s).
	Timeout time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
	// NoCache makes every Duplicate ask the server (see cache.go); for
	// stores whose process is not the only writer of a partner's entries.
	NoCache bool
}

func (o *KVOptions) setDefaults() {
	if o.Bucket == "" {
		o.Bucket = "edihub-ledger"
	}
	if o.TTL == 0 {
		o.TTL = 30 * 24 * time.Hour
	}
	if o.Replicas == 0 {
		o.Replicas = 1
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
	// The server counts message TTLs in whole seconds, from one up.
	if o.TTL < time.Second {
		return fmt.Errorf("ledger ttl %v: must be at least a second", o.TTL)
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return fmt.Errorf("ledger replicas %d: must be 1 to 5", o.Replicas)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("ledger timeout %v: must be positive", o.Timeout)
	}
	return nil
}

// legacyRefresh is how often a store re-reads the legacy flag, so that a
// migration run by another hub on the cluster is noticed.
const legacyRefresh = time.Minute

// KVStore is the ledger on a JetStream KV bucket. A record is one message
// on $KV.<bucket>.ix.<sha256>, so the hub can publish it asynchronously
// with an interchange's outputs and await all acks at once (RecordMsg).
//
// Expiry is per key (the Nats-TTL header, with the bucket's
// LimitMarkerTTL): entries migrated from a bbolt file keep their remaining
// TTL instead of restarting a full one. The bucket's MaxAge equals the TTL
// as well, a ceiling for anything written without the header.
type KVStore struct {
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	opts KVOptions
	pre  string // $KV.<bucket>.

	legacyUntil atomic.Int64 // unix ns: partner-less entries may exist until then
	legacyRead  atomic.Int64 // unix ns of the last read of the flag

	// caches hold each partner's keys (cache.go); nil: every lookup asks
	// the server.
	cacheMu sync.Mutex
	caches  map[string]*partnerCache
	// localAnswers counts Duplicate answers given without the server.
	localAnswers atomic.Int64
}

// OpenKV creates or updates the ledger bucket and returns a store on it.
// The caller owns js's connection.
func OpenKV(ctx context.Context, js jetstream.JetStream, opts *KVOptions) (*KVStore, error) {
	var o KVOptions
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         o.Bucket,
		Description:    "edihub interchange ledger",
		TTL:            o.TTL,
		Replicas:       o.Replicas,
		Storage:        o.Storage,
		LimitMarkerTTL: min(o.TTL, time.Minute), // enables per-key TTL
	})
	if err != nil {
		return nil, fmt.Errorf("open ledger bucket %s: %w", o.Bucket, err)
	}
	s := &KVStore{js: js, kv: kv, opts: o, pre: "$KV." + o.Bucket + "."}
	if !o.NoCache {
		s.caches = map[string]*partnerCache{}
	}
	if err := s.readLegacyFlag(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// BindKV returns a store on an existing ledger bucket without creating or
// changing it (the runbook CLI: the bucket's settings are serve's).
func BindKV(ctx context.Context, js jetstream.JetStream, opts *KVOptions) (*KVStore, error) {
	var o KVOptions
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, o.Bucket)
	if err != nil {
		return nil, fmt.Errorf("ledger bucket %s: %w", o.Bucket, err)
	}
	return &KVStore{js: js, kv: kv, opts: o, pre: "$KV." + o.Bucket + "."}, nil
}

func (s *KVStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.Timeout)
}

// Close does nothing: the connection is the caller's.
func (s *KVStore) Close() error { return nil }

// TTL returns how long entries are kept.
func (s *KVStore) TTL() time.Duration { return s.opts.TTL }

// Bucket returns the bucket's name.
func (s *KVStore) Bucket() string { return s.opts.Bucket }

// RecordMsg returns the message that records k, for the caller to publish
// (PublishMsgAsync) with the interchange's outputs and await with them.
// Nats-Msg-Id makes a retried publish within the bucket's duplicate window
// (2 min) one write; Nats-TTL expires the entry. Each call returns a new
// message.
func (s *KVStore) RecordMsg(k Key) *nats.Msg { return s.RecordMsgBy(k, "") }

// RecordMsgBy is RecordMsg naming the message that processed k (the hub
// uses its stream ID, INGEST:42): when that same message is delivered
// again after a partial failure, Duplicate does not count the entry
// against it, so its outputs are published again rather than lost.
func (s *KVStore) RecordMsgBy(k Key, origin string) *nats.Msg {
	key, now := kvKey(k.bytes()), s.opts.Now()
	if s.caches != nil {
		if pc, err := s.cacheFor(k.Partner); err == nil {
			pc.add(key, now) // the server decides if it is asked about it
		}
	}
	return s.entryMsg(key, now, s.opts.TTL, origin)
}

// entryMsg's value is the record time, then a space and the origin if any.
func (s *KVStore) entryMsg(key string, at time.Time, ttl time.Duration, origin string) *nats.Msg {
	m := nats.NewMsg(s.pre + key)
	m.Header.Set(jetstream.MsgIDHeader, key)
	m.Header.Set(jetstream.MsgTTLHeader, strconv.FormatInt(ttlSeconds(ttl), 10))
	v := at.UTC().Format(time.RFC3339Nano)
	if origin != "" {
		v += " " + origin
	}
	m.Data = []byte(v)
	return m
}

// ttlSeconds rounds up: the server counts whole seconds, and an entry
// must not expire before its time (Seen checks the exact time itself).
func ttlSeconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}

// Record remembers k as processed now; it is stored (and replicated) when
// it returns.
func (s *KVStore) Record(k Key) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if _, err := s.js.PublishMsg(ctx, s.RecordMsg(k)); err != nil {
		return fmt.Errorf("ledger record %s: %w", k, err)
	}
	return nil
}

// Seen reports whether k was recorded within the TTL.
func (s *KVStore) Seen(k Key) (bool, error) {
	at, err := s.Recorded(k)
	return !at.IsZero(), err
}

// Recorded returns when k was recorded (zero if never or expired). The
// server expires entries to the second; the time in the value makes the
// TTL exact, as in the bbolt store.
func (s *KVStore) Recorded(k Key) (time.Time, error) {
	at, _, err := s.lookup(k)
	return at, err
}

// Duplicate reports whether k was recorded within the TTL by a message
// other than origin (an entry without an origin counts as another's).
func (s *KVStore) Duplicate(k Key, origin string) (bool, error) {
	if s.caches != nil {
		pc, err := s.cacheFor(k.Partner)
		if err != nil {
			return false, err
		}
		if !s.legacyActive() && !pc.cached(kvKey(k.bytes()), s.opts.Now(), s.opts.TTL) {
			s.localAnswers.Add(1)
			return false, nil // not in the bucket: no round trip
		}
	}
	at, by, err := s.lookup(k)
	return !at.IsZero() && (by == "" || by != origin), err
}

func (s *KVStore) lookup(k Key) (time.Time, string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	at, by, err := s.get(ctx, kvKey(k.bytes()))
	if err == nil && at.IsZero() && s.legacyActive() {
		at, by, err = s.get(ctx, kvKey(k.legacyBytes()))
	}
	if err != nil {
		return time.Time{}, "", fmt.Errorf("ledger lookup %s: %w", k, err)
	}
	return at, by, nil
}

// get returns an entry's time and origin; zero for none or expired.
func (s *KVStore) get(ctx context.Context, key string) (time.Time, string, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return time.Time{}, "", nil
	}
	if err != nil {
		return time.Time{}, "", err
	}
	v, origin, _ := strings.Cut(string(e.Value()), " ")
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("entry %s: %w", key, err)
	}
	if s.opts.Now().Sub(at) >= s.opts.TTL {
		return time.Time{}, "", nil
	}
	return at, origin, nil
}

// legacyActive reports whether partner-less entries may still be live,
// re-reading the flag at most once a legacyRefresh. A failed re-read keeps
// the last answer: lookups should not fail for the flag's sake.
func (s *KVStore) legacyActive() bool {
	now := s.opts.Now().UnixNano()
	if now-s.legacyRead.Load() >= int64(legacyRefresh) {
		ctx, cancel := s.ctx() // a timer only when the flag is read again
		_ = s.readLegacyFlag(ctx)
		cancel()
	}
	return now < s.legacyUntil.Load()
}

func (s *KVStore) readLegacyFlag(ctx context.Context) error {
	until, _, err := s.legacyFlag(ctx)
	if err != nil {
		return fmt.Errorf("read ledger legacy flag: %w", err)
	}
	s.legacyUntil.Store(until.UnixNano())
	s.legacyRead.Store(s.opts.Now().UnixNano())
	return nil
}

// legacyFlag returns until when migrated partner-less entries may live,
// and the flag's revision (0: none).
func (s *KVStore) legacyFlag(ctx context.Context) (time.Time, uint64, error) {
	e, err := s.kv.Get(ctx, kvLegacyFlag)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return time.Time{}, 0, nil
	}
	if err != nil {
		return time.Time{}, 0, err
	}
	until, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("legacy flag: %w", err)
	}
	return until, e.Revision(), nil
}

// Purge removes nothing: the server expires entries by their TTL (and
// Seen ignores an entry past its time before the server drops it).
func (s *KVStore) Purge() (int, error) { return 0, nil }

// Len returns the messages in the bucket: entries, plus the legacy flag
// and the short-lived markers the server leaves when entries expire. It is
// for a gauge, like the bbolt Len that counts expired entries until Purge.
func (s *KVStore) Len() (int, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	st, err := s.kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger size: %w", err)
	}
	return int(st.Values()), nil
}
