package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
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
	// IndexFile is a local bbolt file the index is kept in (checkpoint.go,
	// diskindex.go): the first lookup opens it and reads only what the
	// bucket stored after it. Empty: the index is in memory only and the
	// first lookup reads the whole bucket.
	IndexFile string
	// CommitTimeout bounds the wait for a batch entry's ack (Timeout).
	// A group unanswered after it fails for everyone waiting on it, who
	// may commit again: serve sets it to the hub's output try on a
	// cluster (jetstream.OutputAttempt), so that a group sent during the
	// bucket's election does not hold the next groups behind it (at most
	// groupsInFlight are out) for the whole Timeout.
	CommitTimeout time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Log gets a line when the index file is rebuilt (damage.go); the
	// zero value logs nothing.
	Log zerolog.Logger
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
	if o.CommitTimeout == 0 {
		o.CommitTimeout = o.Timeout
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
	if o.CommitTimeout <= 0 {
		return fmt.Errorf("ledger commit timeout %v: must be positive", o.CommitTimeout)
	}
	return nil
}

// KVStore is the ledger on a JetStream KV bucket. Interchanges are
// recorded in groups (Commit, commit.go): one batch entry per group, so
// that the hub's partitions share one stored message instead of writing
// one each. Lookups are answered from the index (index.go), which reads
// the whole bucket once and then adds what this store commits.
//
// Single entries, $KV.<bucket>.ix.<partner>.<sha256> with a per-key TTL
// (Nats-TTL, with the bucket's LimitMarkerTTL), are what a migrated bbolt
// ledger becomes (an entry keeps its remaining TTL) and what earlier
// versions wrote; the index reads them too. The bucket's MaxAge equals the
// TTL, which expires batch entries.
type KVStore struct {
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	opts   KVOptions
	pre    string // $KV.<bucket>.
	stream string // KV_<bucket>

	ix              *index
	readMu          sync.Mutex // one reader of the bucket at a time
	callMu          sync.Mutex // guards reading
	reading         *readCall  // the read lookups share, if one is in progress
	checkpointTried bool       // under readMu: no (further) file is opened
	lastRebuild     time.Time  // under readMu
	rebuilds        map[string]*atomic.Int64
	reread          atomic.Bool // Forget was called: read what was stored since
	commit          committer
	acks            commitAcks
	groups          atomic.Int64
	recorded        atomic.Int64
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
	kv, err := ejs.EnsureKeyValue(ctx, js, jetstream.KeyValueConfig{
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
	return newKVStore(js, kv, o), nil
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
	return newKVStore(js, kv, o), nil
}

func newKVStore(js jetstream.JetStream, kv jetstream.KeyValue, o KVOptions) *KVStore {
	s := &KVStore{js: js, kv: kv, opts: o, pre: "$KV." + o.Bucket + ".", stream: "KV_" + o.Bucket,
		ix: newIndex(o.TTL, o.Now), rebuilds: map[string]*atomic.Int64{}}
	for _, r := range RebuildReasons {
		s.rebuilds[r] = new(atomic.Int64)
	}
	s.ix.log = o.Log
	s.ix.checkWait = o.Timeout
	s.ix.onDamage = s.indexDamaged
	return s
}

func (s *KVStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.Timeout)
}

// Close ends the subscription to the commits' replies and closes the
// index file, if any, without writing what is in memory (Checkpoint does);
// the connection is the caller's. Lookups that need the file fail after it.
func (s *KVStore) Close() error {
	s.acks.close()
	return s.ix.close()
}

// TTL returns how long entries are kept.
func (s *KVStore) TTL() time.Duration { return s.opts.TTL }

// Bucket returns the bucket's name.
func (s *KVStore) Bucket() string { return s.opts.Bucket }

// entryMsg is a single entry (a migrated one): its value is the record
// time, then a space and the origin if any.
func (s *KVStore) entryMsg(key string, at time.Time, ttl time.Duration, origin string) *nats.Msg {
	m := nats.NewMsg(s.pre + key)
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
	if err := s.Commit([]Key{k}, "")(ctx); err != nil {
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
// server expires entries to the second; the time in the mark makes the
// TTL exact, as in the bbolt store.
func (s *KVStore) Recorded(k Key) (time.Time, error) {
	m, ok, err := s.lookup(k)
	if err != nil || !ok {
		return time.Time{}, err
	}
	return time.Unix(0, m.at), nil
}

// Duplicate reports whether k was recorded within the TTL by a message
// other than origin (an entry without an origin counts as another's).
func (s *KVStore) Duplicate(k Key, origin string) (bool, error) {
	m, ok, err := s.lookup(k)
	return ok && (m.origin == "" || m.origin != origin), err
}

// ProcessedBy is the origin (INGEST:42) that recorded k, "" when none
// is known or k is not recorded.
func (s *KVStore) ProcessedBy(k Key) (string, error) {
	m, ok, err := s.lookup(k)
	if err != nil || !ok {
		return "", err
	}
	return m.origin, nil
}

// lookup answers from the index, once it has read the bucket (again
// after a Forget); partner-less keys of a migrated ledger are tried while
// they may be live.
func (s *KVStore) lookup(k Key) (mark, bool, error) {
	for try := 1; ; try++ {
		gen := s.ix.gen.Load()
		m, ok, err := s.lookupOnce(k)
		if err == nil || try == 3 {
			return m, ok, err
		}
		if isDamage(err) { // the file is replaced; this lookup reads the bucket
			s.indexDamaged(RebuildLookup, err)
			continue
		}
		if s.ix.gen.Load() == gen {
			return m, ok, err
		}
		// it failed on a file that was replaced meanwhile
	}
}

func (s *KVStore) lookupOnce(k Key) (mark, bool, error) {
	if err := s.read(); err != nil {
		return mark{}, false, fmt.Errorf("ledger lookup %s: %w", k, err)
	}
	if m, ok, err := s.ix.get(k.digest()); ok || err != nil {
		return m, ok, err
	}
	if s.opts.Now().Before(s.ix.legacyUntil()) {
		return s.ix.get(k.legacyDigest())
	}
	return mark{}, false, nil
}

// Forget makes the next lookup first read what the bucket stored since
// the index last read it: a hub calls it each time the server pins a
// partition to it, since another instance may have recorded the
// partition's interchanges after this store read the bucket. (The partners are not needed: the index holds
// every partner.)
func (s *KVStore) Forget(partners ...string) {
	s.reread.Store(true)
}

// read brings the index up to date when it must be: on first use and
// after Forget. Lookups that need it meanwhile share the one read in
// progress and its answer: a read that fails (after the store's Timeout
// without an answer, as during an election) fails them all at once,
// instead of each waiting a Timeout of its own in turn, which queued
// lookups past the stage's deadline (a stage timeout is charged to the
// message; a failed lookup is the environment's). A failed read is tried
// again by the next lookup.
func (s *KVStore) read() error {
	for {
		if s.ix.loaded.Load() && !s.reread.Load() {
			return nil
		}
		s.callMu.Lock()
		if c := s.reading; c != nil {
			s.callMu.Unlock()
			<-c.done
			if c.err != nil {
				return c.err
			}
			continue // read; a Forget meanwhile asks for another
		}
		c := &readCall{done: make(chan struct{})}
		s.reading = c
		s.callMu.Unlock()
		c.err = s.readOnce()
		s.callMu.Lock()
		s.reading = nil
		s.callMu.Unlock()
		close(c.done)
		return c.err
	}
}

// readCall is one read of the bucket and its answer, shared by the
// lookups that wait for it.
type readCall struct {
	done chan struct{}
	err  error
}

// readOnce is one read of the bucket (read's).
func (s *KVStore) readOnce() error {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.ix.loaded.Load() && !s.reread.Load() {
		return nil // a checkpoint read it meanwhile
	}
	again := s.reread.Swap(false)
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	if !s.ix.loaded.Load() && s.opts.IndexFile != "" && !s.checkpointTried {
		if st, err := s.js.Stream(ctx, s.stream); err == nil {
			s.checkpointTried = true // once: a failed read below goes on from what it opened
			info := st.CachedInfo()
			// none usable (in use by another process): in memory, read it all
			if rebuilt, err := s.ix.open(s.opts.IndexFile, s.opts.Bucket, info.Created, info.State.LastSeq); err == nil && rebuilt != nil {
				s.rebuilt(rebuilt)
			}
		}
	}
	if err := s.ix.catchUp(ctx, s.js, s.stream, s.pre); err != nil {
		if again {
			s.reread.Store(true)
		}
		return err
	}
	return nil
}

// get returns a single entry's time and origin; zero for none or expired
// (the migration asks whether the bucket holds a newer one).
func (s *KVStore) get(ctx context.Context, key string) (time.Time, string, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return time.Time{}, "", nil
	}
	if err != nil {
		return time.Time{}, "", err
	}
	at, origin, ok := parseEntry(string(e.Value()))
	if !ok {
		return time.Time{}, "", fmt.Errorf("entry %s: unreadable time", key)
	}
	if s.opts.Now().Sub(at) >= s.opts.TTL {
		return time.Time{}, "", nil
	}
	return at, origin, nil
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

// Indexed returns how many interchanges the index holds, in memory and in
// its file (0 before the bucket was read), without asking the server.
func (s *KVStore) Indexed() int { return s.ix.size() }

// Len returns how many interchanges the index holds (expired ones until
// its next sweep), once it was read; before, the messages in the bucket.
// It is for a gauge, like the bbolt Len that counts expired entries until
// Purge.
func (s *KVStore) Len() (int, error) {
	if s.ix.loaded.Load() {
		return s.Indexed(), nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	st, err := s.kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger size: %w", err)
	}
	return int(st.Values()), nil
}
