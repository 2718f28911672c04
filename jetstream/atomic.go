package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Atomic batch publish (nats-server >= 2.12, a stream with
// AllowAtomicPublish): every message carries Nats-Batch-Id and
// Nats-Batch-Sequence (1..n), the last one Nats-Batch-Commit: 1. The
// server stages the messages and stores all of them or none when the
// commit arrives; only the commit is answered. The server's limits
// (server/stream.go): at most 1000 messages a batch, 50 open batches a
// stream and 1000 a server, 10 s between two messages of one batch.
const (
	hdrBatchID     = "Nats-Batch-Id"
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"
	// MaxAtomicBatch is the server's default largest atomic batch.
	MaxAtomicBatch = 1000
)

// The server's error codes of an atomic batch the callers tell apart.
const (
	errCodeAtomicDisabled  js.ErrorCode = 10174
	errCodeAtomicDuplicate js.ErrorCode = 10201
)

// ErrAtomicUnsupported says the server stored a batch's commit as an
// ordinary message (it answered without the batch's id and size): a
// server before 2.12, which knows nothing of atomic batches.
var ErrAtomicUnsupported = errors.New("the server does not store atomic batches (nats-server 2.12 or later is needed)")

// PublishAtomic publishes msgs into one stream as one atomic batch, each
// with its own dedupe id (idOf(i)), and waits for the commit's answer:
// nil when every one is stored, else none is. The messages' headers are
// copied, not changed (a stage may share one header map among outputs).
// All of msgs must go to one stream, at most MaxAtomicBatch of them.
func PublishAtomic(ctx context.Context, nc *nats.Conn, msgs []*nats.Msg, idOf func(i int) string) error {
	if len(msgs) == 0 {
		return nil
	}
	if len(msgs) > MaxAtomicBatch {
		return fmt.Errorf("atomic batch of %d messages: the server takes at most %d", len(msgs), MaxAtomicBatch)
	}
	id := nuid.Next()
	for i, m := range msgs {
		h := headerWithID(m.Header, idOf(i), 3)
		h.Set(hdrBatchID, id)
		h.Set(hdrBatchSeq, strconv.Itoa(i+1))
		out := &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}
		if i < len(msgs)-1 {
			// no reply: the server answers only the commit; a message it
			// refused makes the commit's answer say the batch is incomplete
			if err := nc.PublishMsg(out); err != nil {
				return fmt.Errorf("atomic batch of %d messages: %w", len(msgs), err)
			}
			continue
		}
		h.Set(hdrBatchCommit, "1")
		resp, err := nc.RequestMsgWithContext(ctx, out)
		if err != nil {
			StoreFaults.Observe(err)
			return fmt.Errorf("atomic batch of %d messages: %w", len(msgs), err)
		}
		return batchAnswer(resp.Data, len(msgs))
	}
	return nil
}

// headerWithID is a batch message's header: h's entries (shared, not
// changed: a stage may share one header map among outputs) and the dedupe
// id, with room for extra more.
func headerWithID(h nats.Header, id string, extra int) nats.Header {
	out := make(nats.Header, len(h)+1+extra)
	for k, v := range h {
		out[k] = v
	}
	out.Set(js.MsgIDHeader, id)
	return out
}

// batchAck is the server's answer that ends a batch, atomic or fast: the
// stream, the batch's id and how many of its messages are stored.
type batchAck struct {
	Stream    string `json:"stream"`
	BatchID   string `json:"batch"`
	BatchSize int    `json:"count"`
}

// readBatchAck reads that answer for a batch of n messages (what names
// the kind of batch in the errors); a refusal is a store fault observed.
func readBatchAck(data []byte, what string, n int) (batchAck, error) {
	var ack struct {
		Error *js.APIError `json:"error"`
		batchAck
	}
	if err := json.Unmarshal(data, &ack); err != nil || ack.Error == nil && ack.Stream == "" {
		return batchAck{}, fmt.Errorf("%s of %d messages: %w", what, n, js.ErrInvalidJSAck)
	}
	if ack.Error != nil {
		StoreFaults.Observe(ack.Error)
		return batchAck{}, fmt.Errorf("%s of %d messages: %w", what, n, ack.Error)
	}
	return ack.batchAck, nil
}

// batchAnswer reads the server's answer to an atomic batch's commit.
func batchAnswer(data []byte, n int) error {
	ack, err := readBatchAck(data, "atomic batch", n)
	if err != nil {
		return err
	}
	if ack.BatchID == "" || ack.BatchSize != n {
		return fmt.Errorf("atomic batch of %d messages into %s (answer: batch %q of %d): %w", n, ack.Stream, ack.BatchID, ack.BatchSize, ErrAtomicUnsupported)
	}
	return nil
}

// AtomicUnavailable says err is a stream or server that takes no atomic
// batches (the stream's AllowAtomicPublish is off, or the server is
// older than 2.12): the caller publishes one message at a time.
func AtomicUnavailable(err error) bool {
	var ae *js.APIError
	if errors.As(err, &ae) && ae.ErrorCode == errCodeAtomicDisabled {
		return true
	}
	return errors.Is(err, ErrAtomicUnsupported)
}

// AtomicDuplicate says the server refused a batch because one of its
// dedupe ids is stored already (a redelivery after a crash): published
// one at a time, each is deduplicated on its own.
func AtomicDuplicate(err error) bool {
	var ae *js.APIError
	return errors.As(err, &ae) && ae.ErrorCode == errCodeAtomicDuplicate
}

// AtomicServer says whether a server of version (nats.Conn's
// ConnectedServerVersion) stores atomic batches: 2.12 or later. An older
// one would store a batch's messages one by one, unanswered.
func AtomicServer(version string) bool { return serverAtLeast(version, 2, 12) }

// serverAtLeast says whether version ("v2.15.2", "2.12.0-RC.1") is at
// least major.minor.
func serverAtLeast(version string, major, minor int) bool {
	ma, rest, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	mi, _, _ := strings.Cut(rest, ".")
	a, err1 := strconv.Atoi(ma)
	i, err2 := strconv.Atoi(mi)
	return err1 == nil && err2 == nil && (a > major || a == major && i >= minor)
}
