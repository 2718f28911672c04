package jetstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Fast batch publish (nats-server >= 2.14, a stream with
// AllowBatchPublish, "allow_batched"). The batch travels in the reply
// subject, <inbox>.<batch id>.<flow>.fail.<seq>.<op>.$FI, and the server
// stores each message as it arrives, without staging it. In "gap: fail"
// mode a message it lost or refused ends the batch there: the ones after
// it are dropped, so what is stored is always a prefix of what was sent.
// Its answer, a PubAck with the batch's id and the count stored, goes to
// the reply subject of the message that ended the batch (the commit, or
// the one refused). Duplicates (a dedupe id stored before) are skipped,
// not refused. Flow acks ({"type":"ack"}) and reports of gaps or errors
// come on the same subjects; only the PubAck ends a publish.
//
// For the hub this is the group settle of a single-replica file stream:
// the atomic batch stages each group in a file of its own, synced before
// the commit, slower than the round trips a group saves; a fast batch
// costs one answer for the group (BenchmarkPublishGroup).
const (
	fastBatchSuffix = ".$FI"
	// the operations of the reply subject (nats-server stream.go)
	fastOpStart  = 0
	fastOpAppend = 1
	fastOpCommit = 2
)

// The server's error codes of a fast batch the callers tell apart.
const (
	errCodeFastDisabled       js.ErrorCode = 10205
	errCodeFastInvalidPattern js.ErrorCode = 10206
)

// ErrFastUnsupported says the server answered a fast batch's message as an
// ordinary publish (no batch id in its answer): a server before 2.14,
// which stored every message of the batch on its own.
var ErrFastUnsupported = errors.New("the server does not take fast batches (nats-server 2.14 or later is needed)")

// ErrFastPrefix says the server ended a fast batch before its last message:
// the messages before that one are stored, the rest are not.
var ErrFastPrefix = errors.New("the server stored only a part of the fast batch")

// FastBatcher publishes fast batches on one connection, with one
// subscription for the answers of all of them (no subscription per batch).
// Safe for concurrent use; Close ends it.
type FastBatcher struct {
	nc     *nats.Conn
	prefix string // <inbox>.
	sub    *nats.Subscription

	mu   sync.Mutex
	open map[string]chan []byte // batch id -> its answer
}

// NewFastBatcher subscribes to the answers of nc's fast batches.
func NewFastBatcher(nc *nats.Conn) (*FastBatcher, error) {
	f := &FastBatcher{nc: nc, prefix: nc.NewInbox() + ".", open: map[string]chan []byte{}}
	sub, err := nc.Subscribe(f.prefix+">", f.onAnswer)
	if err != nil {
		return nil, fmt.Errorf("fast batch answers: %w", err)
	}
	f.sub = sub
	return f, nil
}

// Close stops the answers; a publish in progress ends at its context.
func (f *FastBatcher) Close() { _ = f.sub.Unsubscribe() }

// onAnswer hands a batch's PubAck to its publish; flow acks and the
// server's reports of a gap or an error only precede it.
func (f *FastBatcher) onAnswer(m *nats.Msg) {
	if bytes.Contains(m.Data, []byte(`"type":`)) {
		return // {"type":"ack"|"gap"|"err"}: the PubAck that follows says the outcome
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, f.prefix), ".")
	f.mu.Lock()
	ch := f.open[id]
	delete(f.open, id)
	f.mu.Unlock()
	if ch != nil {
		ch <- m.Data // buffered: never blocks the subscription
	}
}

// Publish sends msgs into one stream as one fast batch in "gap: fail"
// mode, each with its own dedupe id (idOf(i)), and waits for the answer:
// nil when every one is stored (or was stored before); otherwise an
// error, and what is stored is a prefix of msgs. The messages' headers
// are copied, not changed. All of msgs must go to one stream, at most
// MaxAtomicBatch of them (the flow acks' count is a uint16).
func (f *FastBatcher) Publish(ctx context.Context, msgs []*nats.Msg, idOf func(i int) string) error {
	n := len(msgs)
	if n == 0 {
		return nil
	}
	if n > MaxAtomicBatch {
		return fmt.Errorf("fast batch of %d messages: at most %d", n, MaxAtomicBatch)
	}
	id := nuid.Next()
	ch := make(chan []byte, 1)
	f.mu.Lock()
	f.open[id] = ch
	f.mu.Unlock()
	defer func() { f.mu.Lock(); delete(f.open, id); f.mu.Unlock() }()
	// the flow: one flow ack per n messages at most, so a batch alone on its
	// stream is answered once (its first message's settings) and then by its PubAck
	reply := f.prefix + id + "." + strconv.Itoa(n) + ".fail."
	for i, m := range msgs {
		op := fastOpAppend
		switch {
		case i == n-1 && n > 1:
			op = fastOpCommit
		case i == 0 && n == 1:
			op = fastOpCommit // a batch of one commits at its start
		case i == 0:
			op = fastOpStart
		}
		out := &nats.Msg{Subject: m.Subject, Reply: reply + strconv.Itoa(i+1) + "." + strconv.Itoa(op) + fastBatchSuffix, Header: headerWithID(m.Header, idOf(i), 0), Data: m.Data}
		if err := f.nc.PublishMsg(out); err != nil {
			return fmt.Errorf("fast batch of %d messages: %w", n, err)
		}
	}
	select {
	case data := <-ch:
		return fastAnswer(data, id, n)
	case <-ctx.Done():
		StoreFaults.Observe(ctx.Err())
		return fmt.Errorf("fast batch of %d messages: %w", n, ctx.Err())
	}
}

// fastAnswer reads the PubAck that ended the fast batch id of n messages.
func fastAnswer(data []byte, id string, n int) error {
	ack, err := readBatchAck(data, "fast batch", n)
	if err != nil {
		return err
	}
	switch {
	case ack.BatchID == "":
		return fmt.Errorf("fast batch of %d messages into %s: %w", n, ack.Stream, ErrFastUnsupported)
	case ack.BatchID != id:
		return fmt.Errorf("fast batch of %d messages into %s (answer for batch %q): %w", n, ack.Stream, ack.BatchID, js.ErrInvalidJSAck)
	case ack.BatchSize != n:
		return fmt.Errorf("fast batch of %d messages into %s (%d stored): %w", n, ack.Stream, ack.BatchSize, ErrFastPrefix)
	}
	return nil
}

// FastUnavailable says err is a stream or server that takes no fast
// batches (the stream's AllowBatchPublish is off, or the server is older
// than 2.14): the caller publishes another way.
func FastUnavailable(err error) bool {
	var ae *js.APIError
	if errors.As(err, &ae) && (ae.ErrorCode == errCodeFastDisabled || ae.ErrorCode == errCodeFastInvalidPattern) {
		return true
	}
	return errors.Is(err, ErrFastUnsupported)
}

// FastServer says whether a server of version (nats.Conn's
// ConnectedServerVersion) takes fast batches: 2.14 or later.
func FastServer(version string) bool { return serverAtLeast(version, 2, 14) }
