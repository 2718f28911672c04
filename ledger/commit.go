package ledger

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Group commit. Each stored message costs the server and the client far
// more than its bytes (measured: a second message per interchange, to
// another stream, doubles the CPU of a publish-and-await), and several
// partitions record interchanges at once. So the records of every
// interchange committed while the server has groups in hand (at most
// groupsInFlight) go out together as the next batch entry, $KV.<bucket>.gc.<id>: no timer, no waiting
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
	buf     []byte
	digests []digest
	marks   []mark

	sent  chan struct{} // closed when published (fut set) or refused (err set)
	fut   jetstream.PubAckFuture
	claim atomic.Bool   // one waiter awaits the ack and settles the group
	guard *time.Timer   // settles it when nobody waits
	err   error         // set before done is closed
	done  chan struct{} // closed when settled
}

func newGroup() *group {
	g := &group{sent: make(chan struct{}), done: make(chan struct{})}
	g.buf = append(g.buf, batchHeader...)
	return g
}

// groupsInFlight is how many groups may be with the server at once. With
// one, a record that came just after a group was sent waited a whole round
// trip behind it before its own went out (a partition's cycle grew by
// ~0.5 ms); with two, the next group goes out at once while groups still
// form under load (measured: 1.9 interchanges per entry instead of 2.6, the
// same CPU per interchange, a shorter cycle).
const groupsInFlight = 2

type committer struct {
	mu       sync.Mutex
	queue    []*group // not sent yet; the last one takes new records
	inFlight int      // groups with the server
}

// Commit records keys as processed by origin (the stream ID of the
// message at hand, INGEST:42; "" for none) and returns at once; the
// returned Wait says when the records are stored. The hub calls it when
// it publishes an interchange's outputs and awaits it with them, before it
// acks the interchange.
//
// No goroutine of its own: a commit that finds fewer than groupsInFlight
// groups with the server sends its group at once; the first caller to wait
// for a group awaits its ack, adds its records to the index and sends the
// next group, if records came meanwhile. (A goroutine in between cost a
// scheduling delay per group, which a busy machine turned into a slower
// partition.)
func (s *KVStore) Commit(keys []Key, origin string) Wait {
	if len(keys) == 0 {
		return func(context.Context) error { return nil }
	}
	// An origin is the hub's own stream ID; anything that would break
	// the line format is dropped rather than trusted.
	if strings.ContainsAny(origin, " \n\r") {
		origin = ""
	}
	// The lines are made before the lock (the partitions commit at once),
	// on the stack for the usual interchange of one key: every commit's
	// heap garbage is the hub's CPU per message.
	at := s.opts.Now()
	var tb [96]byte
	tail := append(tb[:0], ' ')
	tail = at.UTC().AppendFormat(tail, time.RFC3339Nano)
	if origin != "" {
		tail = append(append(tail, ' '), origin...)
	}
	lineLen := 1 + 2*len(digest{}) + len(tail)
	var lb [192]byte
	var db [2]digest
	lines, ds := lb[:0], db[:0]
	for _, k := range keys {
		d := k.digest()
		ds = append(ds, d)
		lines = append(lines, '\n')
		lines = hex.AppendEncode(lines, d[:])
		lines = append(lines, tail...)
	}
	m := mark{at: at.UnixNano(), origin: origin}
	c := &s.commit
	c.mu.Lock()
	var first *group // the groups this commit's records went to: first, then more
	var more []*group
	last := first
	for i, d := range ds {
		if len(c.queue) == 0 || len(c.queue[len(c.queue)-1].buf) >= maxBatchBytes {
			c.queue = append(c.queue, newGroup())
		}
		g := c.queue[len(c.queue)-1]
		switch {
		case first == nil:
			first, last = g, g
		case g != last:
			more, last = append(more, g), g
		}
		g.buf = append(g.buf, lines[i*lineLen:(i+1)*lineLen]...)
		g.digests = append(g.digests, d)
		g.marks = append(g.marks, m)
	}
	send := c.next()
	c.mu.Unlock()
	if send != nil {
		s.send(send)
	}
	return func(ctx context.Context) error {
		if err := s.await(ctx, first); err != nil {
			return err
		}
		for _, g := range more {
			if err := s.await(ctx, g); err != nil {
				return err
			}
		}
		return nil
	}
}

// await waits until g is stored (or refused), settling it if nobody has.
func (s *KVStore) await(ctx context.Context, g *group) error {
	select {
	case <-g.sent:
	case <-ctx.Done():
		return fmt.Errorf("ledger commit: %w", ctx.Err())
	}
	s.settle(g)
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return fmt.Errorf("ledger commit: %w", ctx.Err())
	}
}

// next takes the group to send, if one may go; c.mu is held.
func (c *committer) next() *group {
	if c.inFlight >= groupsInFlight || len(c.queue) == 0 {
		return nil
	}
	g := c.queue[0]
	c.queue = c.queue[1:]
	c.inFlight++
	return g
}

// send publishes g without waiting for its ack.
func (s *KVStore) send(g *group) {
	// The guard waits for sent, whose close orders everything set here
	// before whatever settles g.
	g.guard = time.AfterFunc(s.opts.Timeout, func() { <-g.sent; s.settle(g) })
	m := nats.NewMsg(s.pre + batchPrefix + nuid.Next())
	m.Data = g.buf
	fut, err := s.js.PublishMsgAsync(m)
	if err != nil {
		g.err = fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), err)
		close(g.sent)
		s.settle(g)
		return
	}
	g.fut = fut
	close(g.sent)
}

// settle waits for g's ack (the first caller only; the others return at
// once and wait for done), records g in the index, and sends the next
// group.
func (s *KVStore) settle(g *group) {
	if !g.claim.CompareAndSwap(false, true) {
		return
	}
	if g.guard != nil {
		g.guard.Stop()
	}
	if g.err == nil {
		t := time.NewTimer(s.opts.Timeout)
		select {
		case <-g.fut.Ok():
		case err := <-g.fut.Err():
			g.err = fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), err)
		case <-t.C:
			g.err = fmt.Errorf("ledger commit of %d interchanges: no ack within %v", len(g.digests), s.opts.Timeout)
		}
		t.Stop()
	}
	if g.err == nil {
		s.ix.mu.Lock()
		for i, d := range g.digests {
			s.ix.put(d, g.marks[i])
		}
		s.ix.mu.Unlock()
		s.groups.Add(1)
		s.recorded.Add(int64(len(g.digests)))
	}
	close(g.done)
	c := &s.commit
	c.mu.Lock()
	c.inFlight--
	send := c.next()
	c.mu.Unlock()
	if send != nil {
		s.send(send)
	}
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
