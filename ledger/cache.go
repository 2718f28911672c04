package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The hub asks the ledger about every interchange, and a round trip to the
// server per message is most of the parse stage's cost. But one partner's
// interchanges are all processed by the worker of one partition, which
// writes their entries through this store: so the store reads a partner's
// entries once (a watch of ix.<partner>.*, the first time the partner is
// asked about) and then keeps them as it records. A key it does not hold
// is not in the bucket, and the answer costs no round trip; a key it holds
// is checked on the server, which decides (an entry whose publish failed
// is only in the cache). Duplicates are rare, so nearly every answer is
// local. This holds while one process writes a partner's entries — one
// hub, or several that own a partition one at a time and forget their
// cache of its partners (Forget) each time the partition comes back to
// them.

// partnerCache is what the store knows of one partner's keys.
type partnerCache struct {
	once sync.Once
	err  error

	mu   sync.Mutex
	keys map[string]time.Time // KV key → when recorded
}

// cacheFor returns the loaded cache of a partner, reading the partner's
// entries on first use.
func (s *KVStore) cacheFor(partner string) (*partnerCache, error) {
	s.cacheMu.Lock()
	pc := s.caches[partner]
	if pc == nil {
		pc = &partnerCache{keys: map[string]time.Time{}}
		s.caches[partner] = pc
	}
	s.cacheMu.Unlock()
	pc.once.Do(func() { pc.err = s.loadPartner(partner, pc) })
	if pc.err != nil {
		// Not kept: the next lookup reads the partner again (a leader
		// election or a lost connection is over in seconds).
		s.cacheMu.Lock()
		if s.caches[partner] == pc {
			delete(s.caches, partner)
		}
		s.cacheMu.Unlock()
		return nil, pc.err
	}
	return pc, nil
}

// loadPartner reads every current entry of a partner. It gives up when
// the server sends nothing for the store's Timeout (a partner with many
// entries may take longer than that in all, but never stalls that long
// between two), so that a lookup fails fast while the bucket has no leader
// instead of holding the stage past its deadline.
func (s *KVStore) loadPartner(partner string, pc *partnerCache) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Cancelled when the server sends nothing for the store's Timeout,
	// also while the watch is being set up.
	var stalled atomic.Bool
	idle := time.AfterFunc(s.opts.Timeout, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	fail := func(err error) error {
		if stalled.Load() {
			err = fmt.Errorf("no answer for %v", s.opts.Timeout)
		}
		return fmt.Errorf("ledger: read the entries of %q: %w", partner, err)
	}
	w, err := s.kv.Watch(ctx, partnerPrefix(partner)+"*", jetstream.IgnoreDeletes())
	if err != nil {
		return fail(err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fail(errors.New("watch closed"))
			}
			if e == nil { // every current entry has been seen
				return nil
			}
			idle.Reset(s.opts.Timeout)
			v, _, _ := strings.Cut(string(e.Value()), " ")
			if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
				pc.mu.Lock()
				pc.keys[e.Key()] = at
				pc.mu.Unlock()
			}
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
}

// cached reports whether the cache holds a live entry for key.
func (pc *partnerCache) cached(key string, now time.Time, ttl time.Duration) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	at, ok := pc.keys[key]
	if ok && now.Sub(at) >= ttl {
		delete(pc.keys, key)
		return false
	}
	return ok
}

func (pc *partnerCache) add(key string, at time.Time) {
	pc.mu.Lock()
	pc.keys[key] = at
	pc.mu.Unlock()
}

// Forget drops what the store cached of partners; their entries are read
// again on next use. A hub calls it when the server pins a partition to it
// again: meanwhile another instance may have recorded the partners'
// interchanges, and a cache that trusted its old keys would take a
// retransmission for new.
func (s *KVStore) Forget(partners ...string) {
	if s.caches == nil {
		return
	}
	s.cacheMu.Lock()
	for _, p := range partners {
		delete(s.caches, p)
	}
	s.cacheMu.Unlock()
}
