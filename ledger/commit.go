package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Group commit. Each stored message costs the server and the client far
// more than its bytes (measured: a second message per interchange, to
// another stream, doubles the CPU of a publish-and-await), and several
// partitions record interchanges at once. So the records of every
// interchange committed while the previous group is being stored go out
// together as one batch entry, $KV.<bucket>.gc.<id>: no timer, no waiting
// when the store is idle, and groups grow with the load. A committer waits
// for its group's ack (awaited with its interchange's outputs), then the
// records are in this store's index, so its next lookup sees them.
//
// A batch entry's value is a header line and one line per interchange:
//
//	edihub-ledger-batch 1
//	<sha-256 of the key, hex> <time, RFC 3339> <origin>
//
// Its expiry is the bucket's MaxAge (the TTL): the records of one group
// were made within milliseconds of each other. Each batch has a key of its
// own, never rewritten; a batch stored twice (a lost ack) records the same
// interchanges twice, which changes nothing.

const (
	batchPrefix = "gc."
	batchHeader = "edihub-ledger-batch 1"
	// maxBatchBytes keeps an entry well below the server's default
	// max_payload (1 MiB); a group that would be larger is split.
	maxBatchBytes = 256 << 10
)

// Wait blocks until what it was returned for is stored, or ctx ends.
type Wait func(ctx context.Context) error

// group is one batch entry being collected or stored.
type group struct {
	first   time.Time // when its first record came
	buf     []byte
	digests []digest
	marks   []mark
	done    chan struct{}
	err     error
}

func newGroup() *group {
	g := &group{done: make(chan struct{})}
	g.buf = append(g.buf, batchHeader...)
	return g
}

type committer struct {
	mu      sync.Mutex
	queue   []*group // collecting: the last one takes new records
	storing bool     // one group is with the server
}

// Commit records keys as processed by origin (the stream ID of the
// message at hand, INGEST:42; "" for none) and returns at once; the
// returned Wait says when the records are stored. The hub calls it when
// its stage has rendered an interchange and awaits it with the outputs,
// before it acks the interchange.
func (s *KVStore) Commit(keys []Key, origin string) Wait {
	if len(keys) == 0 {
		return func(context.Context) error { return nil }
	}
	// An origin is the hub's own stream ID; anything that would break
	// the line format is dropped rather than trusted.
	if strings.ContainsAny(origin, " \n\r") {
		origin = ""
	}
	at := s.opts.Now()
	stamp := at.UTC().Format(time.RFC3339Nano)
	m := mark{at: at.UnixNano(), origin: origin}
	c := &s.commit
	c.mu.Lock()
	var gs []*group // the groups this commit's records went to
	for _, k := range keys {
		d := digest(sha256.Sum256(k.bytes()))
		if len(c.queue) == 0 || len(c.queue[len(c.queue)-1].buf) >= maxBatchBytes {
			c.queue = append(c.queue, newGroup())
			c.queue[len(c.queue)-1].first = time.Now()
		}
		g := c.queue[len(c.queue)-1]
		if len(gs) == 0 || gs[len(gs)-1] != g {
			gs = append(gs, g)
		}
		g.buf = append(g.buf, '\n')
		g.buf = hex.AppendEncode(g.buf, d[:])
		g.buf = append(g.buf, ' ')
		g.buf = append(g.buf, stamp...)
		if origin != "" {
			g.buf = append(g.buf, ' ')
			g.buf = append(g.buf, origin...)
		}
		g.digests = append(g.digests, d)
		g.marks = append(g.marks, m)
	}
	start := !c.storing
	c.storing = true
	c.mu.Unlock()
	if start {
		go s.storeGroups()
	}
	return func(ctx context.Context) error {
		for _, g := range gs {
			select {
			case <-g.done:
				if g.err != nil {
					return g.err
				}
			case <-ctx.Done():
				return fmt.Errorf("ledger commit: %w", ctx.Err())
			}
		}
		return nil
	}
}

// storeGroups stores the queued groups one at a time until none is left.
func (s *KVStore) storeGroups() {
	c := &s.commit
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.storing = false
			c.mu.Unlock()
			return
		}
		g := c.queue[0]
		if d := s.opts.CommitDelay - time.Since(g.first); d > 0 && len(g.buf) < maxBatchBytes {
			c.mu.Unlock()
			time.Sleep(d)
			continue
		}
		c.queue = c.queue[1:]
		c.mu.Unlock()
		g.err = s.storeGroup(g)
		close(g.done)
	}
}

func (s *KVStore) storeGroup(g *group) error {
	ctx, cancel := s.ctx()
	defer cancel()
	m := nats.NewMsg(s.pre + batchPrefix + nuid.Next())
	m.Data = g.buf
	if _, err := s.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), err)
	}
	s.ix.mu.Lock()
	for i, d := range g.digests {
		s.ix.put(d, g.marks[i])
	}
	s.ix.mu.Unlock()
	s.groups.Add(1)
	s.recorded.Add(int64(len(g.digests)))
	return nil
}

// readBatch calls put for each record of a batch entry's value.
func readBatch(value []byte, put func(digest, mark)) {
	head, rest, _ := bytes.Cut(value, []byte{'\n'})
	if string(head) != batchHeader {
		return
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		h, entry, ok := strings.Cut(string(line), " ")
		if !ok {
			continue
		}
		d, ok := parseDigest(h)
		if !ok {
			continue
		}
		if at, origin, ok := parseEntry(entry); ok {
			put(d, mark{at: at.UnixNano(), origin: origin})
		}
	}
}

// CommitStats returns how many interchanges this store has recorded and in
// how many batch entries: the group size the load made.
func (s *KVStore) CommitStats() (interchanges, groups int64) {
	return s.recorded.Load(), s.groups.Load()
}
