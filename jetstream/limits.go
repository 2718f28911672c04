package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// HeaderRoom is what a message body leaves of the server's max payload for
// the headers: the hub's x-* headers, the sender's and the server's Nats-*
// ones together stay far below it.
const HeaderRoom = 16 << 10

// Limits are the largest message a server takes: the connection's max
// payload (the server's max_payload, 1 MiB unless configured) and each
// stream's max message size (-1 or 0: none of its own).
type Limits struct {
	MaxPayload int64
	Streams    map[string]int64
}

// MaxBody is the largest body a message to stream can have (headers
// counted at HeaderRoom); 0 when nothing fits.
func (l Limits) MaxBody(stream string) int64 {
	n := l.MaxPayload - HeaderRoom
	if s, ok := l.Streams[stream]; ok && s > 0 && s-HeaderRoom < n {
		n = s - HeaderRoom
	}
	return max(n, 0)
}

// Need is a size a setting promises to take in through a stream.
type Need struct {
	Setting string // the config key, as the operator writes it: edifact.max_size
	Size    int64
	Stream  string
}

// CheckLimits refuses every need the server cannot take, saying which
// setting to change: a pure check of ReadLimits' result against the
// configuration, at start and after every reconnect.
func CheckLimits(l Limits, needs ...Need) error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range needs {
		fit := l.MaxBody(n.Stream)
		if n.Size <= fit {
			continue
		}
		limit, where := l.MaxPayload, "the NATS server's max_payload"
		fix := fmt.Sprintf("raise max_payload in the NATS server's configuration to at least %d (max_payload: %d; the hub's embedded server has 32 MiB)",
			n.Size+HeaderRoom, n.Size+HeaderRoom)
		if s, ok := l.Streams[n.Stream]; ok && s > 0 && s < l.MaxPayload {
			limit, where = s, fmt.Sprintf("stream %s's max_msg_size", n.Stream)
			fix = fmt.Sprintf("raise max_msg_size of stream %s to at least %d (nats stream edit %s --max-msg-size=%d)",
				n.Stream, n.Size+HeaderRoom, n.Stream, n.Size+HeaderRoom)
		}
		err := fmt.Errorf("%s is %d bytes, but %s is %d bytes (%d for a body, %d held for headers): %s, or lower %s to %d",
			n.Setting, n.Size, where, limit, fit, HeaderRoom, fix, n.Setting, fit)
		if !seen[err.Error()] { // max_payload is one for every stream: said once
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReadLimits reads the connection's max payload and the max message size
// of each of streams (a stream not found yet has none of its own).
func ReadLimits(ctx context.Context, nc *nats.Conn, j js.JetStream, streams ...string) (Limits, error) {
	l := Limits{MaxPayload: nc.MaxPayload(), Streams: make(map[string]int64, len(streams))}
	if l.MaxPayload <= 0 {
		return Limits{}, errors.New("read the server's limits: the connection is not established")
	}
	for _, name := range streams {
		s, err := j.Stream(ctx, name)
		if errors.Is(err, js.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return Limits{}, fmt.Errorf("read the max message size of stream %s: %w", name, err)
		}
		l.Streams[name] = int64(s.CachedInfo().Config.MaxMsgSize)
	}
	return l, nil
}

// LimitWatch holds the server's current limits: read at start and again
// after every reconnect (the server behind a URL may have been replaced by
// one with other settings), each reading checked against needs. A reading
// that fails (a cluster electing the leader of a stream after a server
// died answers no stream info for seconds) is tried again until one
// succeeds: a failed read is not a verdict, and nothing else would ever
// read again before the next reconnect.
type LimitWatch struct {
	nc      *nats.Conn
	j       js.JetStream
	streams []string
	needs   []Need
	gen     atomic.Uint64 // reconnects seen: a newer one's reads replace an older one's

	mu     sync.Mutex
	limits Limits
	err    error
}

// ErrLimitsUnread marks the error of a reading that failed (the server did
// not answer), as against a check the limits failed.
var ErrLimitsUnread = errors.New("the NATS server's limits are not read")

// Re-reading after a failed read: the first wait, doubled up to the last.
const (
	limitsRetryFirst = 250 * time.Millisecond
	limitsRetryMax   = 5 * time.Second
	limitsReadWait   = 5 * time.Second
)

// NewLimitWatch reads and checks the limits and returns the watch, or the
// check's error (a configuration the server cannot ingest); a reading
// that fails is tried again until ctx ends (then its error wraps
// ErrLimitsUnread).
func NewLimitWatch(ctx context.Context, nc *nats.Conn, j js.JetStream, needs ...Need) (*LimitWatch, error) {
	w := &LimitWatch{nc: nc, j: j, needs: needs}
	for _, n := range needs {
		w.streams = append(w.streams, n.Stream)
	}
	for wait := limitsRetryFirst; ; wait = min(2*wait, limitsRetryMax) {
		err := w.Refresh(ctx)
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, ErrLimitsUnread) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// Refresh reads the limits again and checks them; the error (also kept
// for Err) says which setting to change, or wraps ErrLimitsUnread when the
// reading failed.
func (w *LimitWatch) Refresh(ctx context.Context) error {
	l, err := ReadLimits(ctx, w.nc, w.j, w.streams...)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrLimitsUnread, err)
	} else {
		err = CheckLimits(l, w.needs...)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if l.MaxPayload > 0 {
		w.limits = l
	}
	w.err = err
	return err
}

// WatchReconnects refreshes the limits after every reconnect (before
// the connection's own reconnect handler, which it keeps), on a goroutine
// of its own that reads again, backing off, until a reading succeeds or
// the connection closes. report gets each failed check and the first
// failed reading of a reconnect; the Err of the watch says it until a
// check passes.
func (w *LimitWatch) WatchReconnects(report func(error)) {
	next := w.nc.Opts.ReconnectedCB
	w.nc.SetReconnectHandler(func(nc *nats.Conn) {
		gen := w.gen.Add(1)
		go w.readUntilRead(gen, report)
		if next != nil {
			next(nc)
		}
	})
}

// readUntilRead is WatchReconnects' loop for the reconnect gen.
func (w *LimitWatch) readUntilRead(gen uint64, report func(error)) {
	wait := limitsRetryFirst
	for first := true; w.gen.Load() == gen && !w.nc.IsClosed(); first = false {
		ctx, cancel := context.WithTimeout(context.Background(), limitsReadWait)
		err := w.Refresh(ctx)
		cancel()
		unread := errors.Is(err, ErrLimitsUnread)
		if err != nil && report != nil && (!unread || first) {
			report(err)
		}
		if !unread {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, limitsRetryMax)
	}
}

// Limits are the last limits read.
func (w *LimitWatch) Limits() Limits {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.limits
}

// Err is the last check's error: nil while the server takes every need.
func (w *LimitWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
