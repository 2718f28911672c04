package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
)

// entryCache keeps the listing entries (headers dropped) of DLQ, PARKING
// and POISON in memory so that the console's overview and pages do not
// read 100 000 messages per request. The first use reads everything
// (ops.Inspect); each later use reads only what was stored since the last
// one (ops.Inspect with a since, overlapping by cacheOverlap) and drops
// what the streams no longer hold (their first sequence and deleted
// sequences). An edit supersedes its original as soon as the edited copy
// is read, as Inspect does.
type entryCache struct {
	ops     *ops.Ops
	js      js.JetStream
	streams wire.StreamNames
	now     func() time.Time

	mu      sync.Mutex // one refresh at a time
	entries map[string]ops.Entry
	snap    []ops.Entry           // entries by stream and sequence, rebuilt on change
	seen    map[string]streamMark // the streams when snap was built
	last    time.Time             // when the last read started
	version uint64                // counts rebuilds of snap
	fullAt  time.Time             // when everything was last read
}

// cacheFullEvery reads everything again now and then, so that whatever an
// incremental read could miss (a message stored with a timestamp further
// back than the overlap) is found within this long.
const cacheFullEvery = 10 * time.Minute

// cacheOverlap re-reads this much before the last read's start, for
// messages stored while it ran and a server clock a little apart (the
// stream's timestamps are the server's).
const cacheOverlap = 5 * time.Second

// warm reads everything once in the background (serve calls it at start,
// so that the first page does not wait for the first full read).
func (c *entryCache) warm(ctx context.Context) {
	go func() { _, _ = c.snapshot(ctx) }()
}

func newEntryCache(o *ops.Ops, j js.JetStream, streams wire.StreamNames, now func() time.Time) *entryCache {
	return &entryCache{ops: o, js: j, streams: streams, now: now}
}

// snapshot brings the cache up to date and returns its entries (with
// superseded ones), by stream and sequence. The slice is shared: callers
// must not change it. When no stream changed since the last call (three
// stream-info requests tell), nothing is read.
func (c *entryCache) snapshot(ctx context.Context) ([]ops.Entry, error) {
	snap, _, err := c.versioned(ctx)
	return snap, err
}

// versioned is snapshot with the version of the slice (it changes when
// the slice is rebuilt), for results computed from it.
func (c *entryCache) versioned(ctx context.Context) ([]ops.Entry, uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := c.now()
	marks, err := c.marks(ctx)
	if err != nil {
		return nil, 0, err
	}
	if c.entries != nil && start.Sub(c.fullAt) >= cacheFullEvery {
		c.entries = nil
	}
	if c.entries != nil && maps.Equal(marks, c.seen) {
		return c.snap, c.version, nil
	}
	if c.entries == nil {
		c.fullAt = start
		all, err := c.ops.Inspect(ctx, ops.Filter{Superseded: true})
		if err != nil {
			return nil, 0, err
		}
		c.entries = make(map[string]ops.Entry, len(all))
		for _, e := range all {
			c.put(e)
		}
	} else {
		fresh, err := c.ops.Inspect(ctx, ops.Filter{Superseded: true, Since: start.Sub(c.last) + cacheOverlap})
		if err != nil {
			return nil, 0, err
		}
		for _, e := range fresh {
			c.put(e)
		}
		if err := c.superseded(ctx, fresh); err != nil {
			return nil, 0, err
		}
		if err := c.dropGone(ctx); err != nil {
			c.entries = nil // read everything again next time
			return nil, 0, err
		}
	}
	c.last, c.seen = start, marks
	c.version++
	c.snap = make([]ops.Entry, 0, len(c.entries))
	for _, e := range c.entries {
		c.snap = append(c.snap, e)
	}
	slices.SortFunc(c.snap, func(a, b ops.Entry) int {
		if a.Stream != b.Stream {
			return strings.Compare(a.Stream, b.Stream)
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return c.snap, c.version, nil
}

// superseded marks the originals that an edit replaces: those the edits
// bucket names (an edit may have been stored and replayed between two
// reads) and those whose edited copy was just read (its bucket entry may
// be lost), as Inspect does.
func (c *entryCache) superseded(ctx context.Context, fresh []ops.Entry) error {
	edits, replayed, err := c.ops.Edits(ctx)
	if err != nil {
		return err
	}
	for _, e := range fresh {
		if e.EditedFrom != "" && (edits[e.EditedFrom] == "" || edits[e.EditedFrom] == "pending") {
			edits[e.EditedFrom] = e.ID
		}
	}
	for id, by := range edits {
		if orig, ok := c.entries[id]; ok && (orig.SupersededBy != by || orig.EditReplayedAs != replayed[id]) {
			orig.SupersededBy, orig.EditReplayedAs = by, replayed[id]
			c.entries[id] = orig
		}
	}
	return nil
}

// streamMark is what tells that a stream changed: its last sequence, its
// message count and its first sequence (deletes, expiry).
type streamMark struct{ first, last, msgs uint64 }

func (c *entryCache) marks(ctx context.Context) (map[string]streamMark, error) {
	out := map[string]streamMark{}
	for _, name := range []string{c.streams.DLQ, c.streams.Parking, c.streams.Poison} {
		s, err := c.js.Stream(ctx, name)
		if errors.Is(err, js.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		st := s.CachedInfo().State
		out[name] = streamMark{first: st.FirstSeq, last: st.LastSeq, msgs: st.Msgs}
	}
	return out, nil
}

func (c *entryCache) put(e ops.Entry) {
	e.Headers = nil
	c.entries[e.ID] = e
}

// dropGone removes entries whose message was replayed, parked, dropped or
// expired: below the stream's first sequence or in its deleted list.
func (c *entryCache) dropGone(ctx context.Context) error {
	for _, name := range []string{c.streams.DLQ, c.streams.Parking, c.streams.Poison} {
		s, err := c.js.Stream(ctx, name)
		if errors.Is(err, js.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := s.Info(ctx, js.WithDeletedDetails(true))
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		deleted := make(map[uint64]bool, len(info.State.Deleted))
		for _, seq := range info.State.Deleted {
			deleted[seq] = true
		}
		for id, e := range c.entries {
			if e.Stream == name && (e.Seq < info.State.FirstSeq || e.Seq > info.State.LastSeq || info.State.Msgs == 0 || deleted[e.Seq]) {
				delete(c.entries, id)
			}
		}
	}
	return nil
}
