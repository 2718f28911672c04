package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
)

// hubLink follows send's connection to the hub: lost() is closed the moment
// the connection drops, back() when it is up again. nats.go reconnects by
// itself; send only needs to know, at once, so it can say so and stop
// waiting for acks that cannot come.
type hubLink struct {
	mu       sync.Mutex
	lostCh   chan struct{} // closed when the current connection is lost
	backCh   chan struct{} // closed while connected
	outages  int
	lastDrop error
}

func newHubLink() *hubLink {
	l := &hubLink{lostCh: make(chan struct{}), backCh: make(chan struct{})}
	close(l.backCh)
	return l
}

// options are the connection's callbacks. Publishing while disconnected
// fails at once (no reconnect buffer): send waits for the hub itself and
// re-sends under the same Nats-Msg-Id.
func (l *hubLink) options() []nats.Option {
	return []nats.Option{
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(c *nats.Conn, err error) {
			if c.IsClosed() { // our own Close at the end
				return
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			select {
			case <-l.lostCh:
			default:
				close(l.lostCh)
				l.backCh = make(chan struct{})
				l.outages++
				l.lastDrop = err
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			l.mu.Lock()
			defer l.mu.Unlock()
			select {
			case <-l.backCh:
			default:
				close(l.backCh)
				l.lostCh = make(chan struct{})
			}
		}),
	}
}

func (l *hubLink) lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostCh
}

func (l *hubLink) back() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.backCh
}

func (l *hubLink) connected() bool {
	select {
	case <-l.back():
		return true
	default:
		return false
	}
}

// errNotConnected: publish did not hand the message to the connection.
var errNotConnected = errors.New("not connected")

// publishOutcome is what one publish attempt learned.
type publishOutcome int

const (
	published publishOutcome = iota // the server acked
	hubGone                         // connection lost or the hub did not answer: try again
	refused                         // the server answered no (too large, stream full, ...)
)

// publish sends msg and waits for its ack, giving up at once when the
// connection drops (the ack cannot come) or after timeout.
func publish(ctx context.Context, j js.JetStream, l *hubLink, msg *nats.Msg, timeout time.Duration) (*js.PubAck, publishOutcome, error) {
	if !l.connected() {
		return nil, hubGone, errNotConnected
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lost := l.lost()
	go func() {
		select {
		case <-lost:
			cancel()
		case <-pctx.Done():
		}
	}()
	ack, err := j.PublishMsg(pctx, msg)
	if err == nil {
		return ack, published, nil
	}
	if ctx.Err() != nil {
		return nil, refused, ctx.Err()
	}
	select {
	case <-lost:
		return nil, hubGone, errors.New("connection to the hub lost")
	default:
	}
	if isHubSilent(err) {
		return nil, hubGone, err
	}
	return nil, refused, err
}

// isHubSilent reports errors that mean "no answer", not "no": the file may
// or may not be stored, and sending it again is safe (same Nats-Msg-Id).
func isHubSilent(err error) bool {
	for _, e := range []error{context.DeadlineExceeded, context.Canceled, nats.ErrTimeout, nats.ErrNoResponders,
		js.ErrNoStreamResponse, nats.ErrConnectionClosed, nats.ErrDisconnected, nats.ErrConnectionReconnecting,
		nats.ErrReconnectBufExceeded, nats.ErrConnectionDraining} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// waitForHub waits until the hub is reachable again or the outage that
// began at since has lasted longer than budget. On a terminal it shows a
// countdown on one line; otherwise a plain line every 10 seconds. It
// returns nil when it is worth trying again: connected (a hub that is
// connected but silent is given a second between tries).
func waitForHub(ctx context.Context, l *hubLink, since time.Time, budget time.Duration, tty bool, say func(string)) error {
	deadline := since.Add(budget)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastPlain := time.Time{}
	show := func() {
		left := max(time.Until(deadline), 0).Round(time.Second)
		state := "unreachable"
		if l.connected() {
			state = "connected but not answering"
		}
		text := fmt.Sprintf("hub %s for %s: waiting %s more (--wait), Ctrl-C stops; re-sending is safe", state,
			time.Since(since).Round(time.Second), left)
		if tty {
			say("\r\x1b[K" + text)
			return
		}
		if time.Since(lastPlain) >= 10*time.Second {
			lastPlain = time.Now()
			say(text + "\n")
		}
	}
	for {
		if time.Now().After(deadline) {
			if tty {
				say("\r\x1b[K")
			}
			return fmt.Errorf("the hub did not come back within %s (--wait)", budget)
		}
		show()
		if l.connected() {
			// Connected but silent (JetStream starting, or the ack
			// timed out): try again after a second.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			if tty {
				say("\r\x1b[K")
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.back():
			if tty {
				say("\r\x1b[K")
			}
			say(fmt.Sprintf("hub is back after %s; sending again\n", time.Since(since).Round(100*time.Millisecond)))
			return nil
		case <-tick.C:
		}
	}
}

// lostText says why the connection dropped, for the first line of an outage.
func (l *hubLink) lostText() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastDrop == nil {
		return "connection to the hub lost"
	}
	return "connection to the hub lost: " + escape.Text(oneLine(l.lastDrop.Error()))
}

// outagesSeen is how many times the connection dropped.
func (l *hubLink) outagesSeen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.outages
}
