package client

import (
	"sync"

	"github.com/nats-io/nats.go"
)

// Link follows a client's connection to the hub: Lost is closed the moment
// the connection drops, Back when it is up again. nats.go reconnects by
// itself; a sender only needs to know, at once, so it can say so and stop
// waiting for acks that cannot come.
type Link struct {
	mu       sync.Mutex
	lostCh   chan struct{} // closed when the current connection is lost
	backCh   chan struct{} // closed while connected
	outages  int
	lastDrop error
}

// NewLink is a Link for a connection not made yet (pass Options to it).
func NewLink() *Link {
	l := &Link{lostCh: make(chan struct{}), backCh: make(chan struct{})}
	close(l.backCh)
	return l
}

// Options are the connection's callbacks. Publishing while disconnected
// fails at once (no reconnect buffer): the sender waits for the hub itself
// and re-sends under the same Nats-Msg-Id.
func (l *Link) Options() []nats.Option {
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

// Lost is closed when the current connection is lost.
func (l *Link) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostCh
}

// Back is closed while connected.
func (l *Link) Back() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.backCh
}

// Connected reports whether the connection is up now.
func (l *Link) Connected() bool {
	select {
	case <-l.Back():
		return true
	default:
		return false
	}
}

// Outages is how many times the connection dropped.
func (l *Link) Outages() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.outages
}

// LastDrop is the error the connection last dropped with (nil: none).
func (l *Link) LastDrop() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastDrop
}
