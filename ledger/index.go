package ledger

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The hub asks the ledger about every interchange, so a lookup must not be
// a round trip to the server; and it records interchanges in groups (a
// batch entry holds many, see commit.go), which no key lookup could find.
// So every store that is asked reads the whole bucket once and then
// follows it (a watch), keeping what it read in memory: the index. Records
// this store commits are added when the server has stored them, records
// other hubs on the cluster commit arrive through the watch.
//
// A hub that gets a partition back from another instance (Forget) writes a
// fence entry and answers only once its watch has passed it: everything
// the other instance stored before is then in the index.

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

	mu      sync.Mutex
	marks   map[digest]mark
	applied uint64        // stream sequence of the last entry read
	loaded  bool          // the bucket was read to its end once
	moved   chan struct{} // closed (and replaced) whenever applied or loaded change
	legacy  time.Time     // meta.legacy-until, as last read
	swept   time.Time
	err     error // why the watch is down, if it is
}

func newIndex(ttl time.Duration, now func() time.Time) *index {
	return &index{ttl: ttl, now: now, marks: map[digest]mark{}, moved: make(chan struct{}), swept: now()}
}

// sweepEvery is how often expired marks are dropped (on the next write).
const sweepEvery = 10 * time.Minute

// put keeps the later of two marks of one interchange.
func (ix *index) put(d digest, m mark) {
	if cur, ok := ix.marks[d]; ok && cur.at >= m.at {
		return
	}
	ix.marks[d] = m
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

// add records marks this store committed (the server stored them).
func (ix *index) add(ds []digest, m mark) {
	ix.mu.Lock()
	for _, d := range ds {
		ix.put(d, m)
	}
	ix.mu.Unlock()
}

// get returns the live mark of d.
func (ix *index) get(d digest) (mark, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	m, ok := ix.marks[d]
	if ok && ix.now().UnixNano()-m.at >= int64(ix.ttl) {
		return mark{}, false
	}
	return m, ok
}

func (ix *index) legacyUntil() time.Time {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.legacy
}

func (ix *index) size() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.marks)
}

// wait returns when the index was read to the bucket's end once and has
// applied the entry at sequence seq (0: only the first), or with ctx's
// error, or the watch's if it is down.
func (ix *index) wait(ctx context.Context, seq uint64) error {
	for {
		ix.mu.Lock()
		ok, moved, err := ix.loaded && ix.applied >= seq, ix.moved, ix.err
		ix.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("ledger index: %w", err)
			}
			return fmt.Errorf("ledger index: not read within the timeout: %w", ctx.Err())
		}
	}
}

// signal wakes the waiters; ix.mu is held.
func (ix *index) signal() {
	close(ix.moved)
	ix.moved = make(chan struct{})
}

// apply reads one entry of the bucket into the index.
func (ix *index) apply(e jetstream.KeyValueEntry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if e.Revision() > ix.applied {
		ix.applied = e.Revision()
	}
	if e.Operation() == jetstream.KeyValuePut {
		ix.read(e.Key(), e.Value())
	}
	ix.signal()
}

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

// follow reads the bucket into ix and then follows it until ctx ends. A
// watch that ends early (the server went away for good) is started again
// from the start: the index keeps the later mark of an interchange, so
// reading an entry twice changes nothing.
func (ix *index) follow(ctx context.Context, kv jetstream.KeyValue, retry time.Duration) {
	for ctx.Err() == nil {
		err := ix.watch(ctx, kv)
		if ctx.Err() != nil {
			return
		}
		ix.mu.Lock()
		ix.err = err
		ix.signal()
		ix.mu.Unlock()
		select {
		case <-time.After(retry):
		case <-ctx.Done():
		}
	}
}

func (ix *index) watch(ctx context.Context, kv jetstream.KeyValue) error {
	// Deletes and expiry markers too: each advances the sequence read, so
	// that a fence behind them is seen to pass.
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch the bucket: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the bucket's watch ended")
			}
			if e == nil {
				ix.mu.Lock()
				ix.loaded, ix.err = true, nil
				ix.signal()
				ix.mu.Unlock()
				continue
			}
			ix.apply(e)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
