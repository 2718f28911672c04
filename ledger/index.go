package ledger

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
)

// The hub asks the ledger about every interchange, so a lookup must not be
// a round trip to the server; and it records interchanges in groups (a
// batch entry holds many, see commit.go), which no key lookup could find.
// So a store that is asked reads the whole bucket once into memory, the
// index, and adds what it commits itself when the server has stored it.
// It does not follow the bucket: that would send every batch it writes
// back to it. While one process writes a partition's records (one hub, or
// several that own a partition one at a time), that is all it needs. A hub
// calls Forget each time the server pins a partition to it: the next lookup
// first reads what was stored since the index last read the bucket.

// digest is the SHA-256 of a length-prefixed key encoding (key.go): one
// per interchange, whichever entry recorded it.
type digest [32]byte

// mark is what the index knows of one interchange.
type mark struct {
	at     int64 // unix ns, when recorded
	origin string
}

type index struct {
	ttl time.Duration
	now func() time.Time

	mu sync.RWMutex // lookups read while commits add
	// marks holds every interchange, or with a file (disk) those not
	// written to it yet; recent those of the write under way or the last
	// one (a cache of what is on disk).
	marks  map[digest]mark
	recent map[digest]mark
	// recentOnDisk: the write of recent is done
	recentOnDisk bool
	disk         *diskIndex  // nil: the index is in memory only (diskindex.go)
	closed       bool        // the file was closed: lookups fail
	applied      uint64      // stream sequence of the last message read
	loaded       atomic.Bool // the bucket was read to its end once
	legacy       time.Time   // meta.legacy-until, as last read
	swept        time.Time

	// gen counts the files detached (damage.go): a lookup that failed on
	// one that was replaced meanwhile tries again
	gen      atomic.Uint64
	onDamage func(reason string, err error) // the store's indexDamaged
	// checkWait bounds a lookup's wait for the check after open (the
	// store's Timeout)
	checkWait time.Duration
	log       zerolog.Logger

	flushMu    sync.Mutex  // one write to the file at a time
	flushing   atomic.Bool // a write started by put is under way
	flushFail  atomic.Int64
	tailRead   atomic.Int64 // messages read from the bucket (tests)
	flushAfter int          // marks in memory that start a write (flushAfter)
}

func newIndex(ttl time.Duration, now func() time.Time) *index {
	return &index{ttl: ttl, now: now, marks: map[digest]mark{}, swept: now(), flushAfter: flushAfter}
}

// sweepEvery is how often expired marks are dropped (on the next write).
const sweepEvery = 10 * time.Minute

// put keeps the later of two marks of one interchange.
func (ix *index) put(d digest, m mark) {
	if cur, ok := ix.marks[d]; ok && cur.at >= m.at {
		return
	}
	ix.marks[d] = m
	if ix.disk != nil && len(ix.marks) >= ix.flushAfter {
		ix.flushSoon()
	}
	if now := ix.now(); now.Sub(ix.swept) >= sweepEvery {
		ix.swept = now
		cut := now.Add(-ix.ttl).UnixNano()
		for k, v := range ix.marks {
			if v.at <= cut {
				delete(ix.marks, k)
			}
		}
	}
}

// get returns the live mark of d: from memory, else from the file.
func (ix *index) get(d digest) (mark, bool, error) {
	ix.mu.RLock()
	m, ok := ix.marks[d]
	if !ok {
		m, ok = ix.recent[d]
	}
	disk, closed := ix.disk, ix.closed
	ix.mu.RUnlock()
	if !ok && closed {
		return mark{}, false, errClosed
	}
	if !ok && disk != nil {
		var err error
		if m, ok, err = disk.get(d); err != nil {
			return mark{}, false, err
		}
		if !ok { // "unseen" only from a checked file (damage.go)
			waited, err := disk.awaitCheck(ix.checkWait)
			if err != nil {
				ix.report(RebuildCheck, err)
				return mark{}, false, err
			}
			if waited {
				if m, ok, err = disk.get(d); err != nil {
					return mark{}, false, err
				}
			}
		}
	}
	if ok && ix.now().UnixNano()-m.at >= int64(ix.ttl) {
		return mark{}, false, nil
	}
	return m, ok, nil
}

func (ix *index) legacyUntil() time.Time {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.legacy
}

// apply reads one stored message of the bucket into the index.
func (ix *index) apply(key string, h nats.Header, value []byte, seq uint64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.applied = max(ix.applied, seq)
	ix.tailRead.Add(1)
	// deletes, purges and the server's expiry markers hold no record
	if h.Get(kvOperationHeader) != "" || h.Get(jetstream.MarkerReasonHeader) != "" {
		return
	}
	ix.read(key, value)
}

// kvOperationHeader marks a KV delete or purge (nats.go does not export
// its name).
const kvOperationHeader = "KV-Operation"

// read decodes one entry's value; ix.mu is held. Anything it does not
// understand is skipped: only the hubs and the operators' tools can write
// the bucket, and a mark it cannot read is one it cannot use either.
func (ix *index) read(key string, value []byte) {
	switch {
	case strings.HasPrefix(key, batchPrefix):
		readBatch(value, ix.put)
	case strings.HasPrefix(key, kvPrefix), strings.HasPrefix(key, kvLegacyPrefix):
		d, ok := parseDigest(key[strings.LastIndexByte(key, '.')+1:])
		if !ok {
			return
		}
		at, origin, ok := parseEntry(string(value))
		if ok {
			ix.put(d, mark{at: at.UnixNano(), origin: origin})
		}
	case key == kvLegacyFlag:
		if until, err := time.Parse(time.RFC3339Nano, string(value)); err == nil {
			ix.legacy = until
		}
	}
}

// parseEntry reads a single entry's value: the record time, then a space
// and the origin if any.
func parseEntry(v string) (time.Time, string, bool) {
	t, origin, _ := strings.Cut(v, " ")
	at, err := time.Parse(time.RFC3339Nano, t)
	return at, origin, err == nil
}

func parseDigest(s string) (digest, bool) {
	var d digest
	if len(s) != 2*len(d) {
		return d, false
	}
	_, err := hex.Decode(d[:], []byte(s))
	return d, err == nil
}

// catchUp reads what the bucket stored after the index last read it (all
// of it the first time).
func (ix *index) catchUp(ctx context.Context, j jetstream.JetStream, stream, prefix string) error {
	ix.mu.Lock()
	from := ix.applied + 1
	ix.mu.Unlock()
	err := ejs.Scan(ctx, j, stream, &ejs.ScanOptions{FromSeq: from}, func(m jetstream.Msg, md *jetstream.MsgMetadata) error {
		key, ok := strings.CutPrefix(m.Subject(), prefix)
		if ok {
			ix.apply(key, m.Headers(), m.Data(), md.Sequence.Stream)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the bucket: %w", err)
	}
	ix.loaded.Store(true)
	return nil
}
