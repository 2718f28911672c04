package ledger

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
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

	subject string // its batch entry's, the same when it is sent again
	token   string // of the reply it waits for (under acks.mu)
	tries   int    // sends so far: a "no responders" status is sent again
	settled atomic.Bool
	guard   *time.Timer   // fails it when no ack came within the store's CommitTimeout
	err     error         // set before done is closed
	done    chan struct{} // closed when settled
}

func newGroup() *group {
	g := &group{done: make(chan struct{})}
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
// groups with the server sends its group at once; the group's ack is
// handled where it arrives (onAck, on the reply subscription's goroutine),
// which adds its records to the index, wakes its waiters and sends the
// next group, if records came meanwhile. (Every goroutine in between cost
// a scheduling delay per group, which a busy machine turned into a slower
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

// await waits until g is stored or refused.
func (s *KVStore) await(ctx context.Context, g *group) error {
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

// send publishes g without waiting for its ack, which onAck handles.
func (s *KVStore) send(g *group) {
	if g.settled.Load() { // a "no responders" retry of a group whose guard gave up
		return
	}
	prefix, err := s.acks.subscribe(s.js.Conn(), s.onAck)
	if err != nil {
		s.settle(g, fmt.Errorf("ledger commit of %d interchanges: replies: %w", len(g.digests), err))
		return
	}
	if g.subject == "" {
		g.subject = s.pre + batchPrefix + nuid.Next()
		g.guard = time.AfterFunc(s.opts.CommitTimeout, func() {
			if g.settled.CompareAndSwap(false, true) {
				s.finish(g, fmt.Errorf("ledger commit of %d interchanges: no ack within %v: %w", len(g.digests), s.opts.CommitTimeout, nats.ErrTimeout))
			}
		})
	}
	g.tries++
	token := nuid.Next()
	s.acks.mu.Lock() // orders what was set above before onAck
	g.token = token
	s.acks.wait[token] = g
	s.acks.mu.Unlock()
	if err := s.js.Conn().PublishMsg(&nats.Msg{Subject: g.subject, Reply: prefix + token, Data: g.buf}); err != nil {
		s.settle(g, fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), err))
	}
}

// onAck settles the group a reply is for: stored, refused (the server's
// error, a *jetstream.APIError as from any publish), or, after
// noResponderRetries more sends, no stream answered.
func (s *KVStore) onAck(m *nats.Msg) {
	token := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	s.acks.mu.Lock()
	g := s.acks.wait[token]
	delete(s.acks.wait, token)
	s.acks.mu.Unlock()
	if g == nil {
		return // settled already (its guard gave up)
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == noResponders {
		if g.tries <= noResponderRetries {
			time.AfterFunc(noResponderWait, func() { s.send(g) })
			return
		}
		s.settle(g, fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), jetstream.ErrNoStreamResponse))
		return
	}
	var ack struct {
		Error  *jetstream.APIError `json:"error"`
		Stream string              `json:"stream"`
	}
	switch err := json.Unmarshal(m.Data, &ack); {
	case err != nil || ack.Error == nil && ack.Stream == "":
		s.settle(g, fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), jetstream.ErrInvalidJSAck))
	case ack.Error != nil:
		s.settle(g, fmt.Errorf("ledger commit of %d interchanges: %w", len(g.digests), ack.Error))
	default:
		s.settle(g, nil)
	}
}

// A batch entry that finds no stream ("no responders": a stream leader
// being elected) is sent again, as jetstream's own publish does.
const (
	noResponders       = "503"
	noResponderRetries = 2
	noResponderWait    = 250 * time.Millisecond
)

// settle ends g with err (nil: stored), once.
func (s *KVStore) settle(g *group, err error) {
	if !g.settled.CompareAndSwap(false, true) {
		return
	}
	if g.guard != nil {
		g.guard.Stop()
	}
	s.finish(g, err)
}

// finish records a stored g in the index, wakes its waiters and sends the
// next group; g was just settled.
func (s *KVStore) finish(g *group, err error) {
	s.acks.mu.Lock()
	if s.acks.wait[g.token] == g {
		delete(s.acks.wait, g.token)
	}
	s.acks.mu.Unlock()
	g.err = err
	if err == nil {
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

// commitAcks is the store's subscription to the replies of its batch
// entries. The replies are handled on the subscription's goroutine, which
// settles the group there: the ack of a PublishMsgAsync went from that
// goroutine to a waiter's through a channel, one more hand-off (a wait in
// the run queue on a busy machine) on the path of every record, and a
// record that comes while two groups are out waits for one of them.
type commitAcks struct {
	mu     sync.Mutex
	sub    *nats.Subscription
	prefix string            // <inbox>.
	wait   map[string]*group // by reply token
}

// subscribe subscribes once (again after a failure) and returns the
// replies' subject prefix.
func (a *commitAcks) subscribe(nc *nats.Conn, h nats.MsgHandler) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sub != nil {
		return a.prefix, nil
	}
	prefix := nc.NewInbox() + "."
	sub, err := nc.Subscribe(prefix+"*", h)
	if err != nil {
		return "", err
	}
	_ = sub.SetPendingLimits(-1, -1) // bounded by groupsInFlight
	a.sub, a.prefix, a.wait = sub, prefix, map[string]*group{}
	return prefix, nil
}

func (a *commitAcks) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sub != nil {
		_ = a.sub.Unsubscribe()
		a.sub = nil // a commit after Close subscribes again
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
