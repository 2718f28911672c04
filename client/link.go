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
	nc       *nats.Conn    // Bind: its status is read too (the callbacks come late)
	lostCh   chan struct{} // closed when the current connection is lost
	backCh   chan struct{} // closed while connected
	outages  int
	lastDrop error
	// early says the link saw the current drop in the connection's
	// status before its disconnect callback ran: the callback then only
	// says why, and counts no second outage.
	early bool
}

// Bind gives the link its connection once made: the link then follows the
// connection's own status as well as its callbacks, which nats.go runs
// later, on a queue of their own. A publish can fail with "outbound
// buffer limit exceeded" (the connection is reconnecting) before the
// disconnect callback has run; the sender must then say the connection is
// lost, not that the hub is silent, and wait for it to come back.
func (l *Link) Bind(nc *nats.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nc = nc
}

// syncLocked makes the link follow the connection's status; l.mu is held.
func (l *Link) syncLocked() {
	if l.nc == nil || l.nc.IsClosed() {
		return
	}
	switch l.nc.Status() {
	case nats.CONNECTED:
		l.upLocked()
	case nats.RECONNECTING, nats.DISCONNECTED:
		select {
		case <-l.lostCh:
		default:
			l.downLocked(nil)
			l.early = true
		}
	}
}

// downLocked marks the connection lost and counts the outage; err, when
// known, is why it dropped. l.mu is held.
func (l *Link) downLocked(err error) {
	select {
	case <-l.lostCh:
	default:
		close(l.lostCh)
		l.backCh = make(chan struct{})
	}
	l.outages++
	l.lastDrop = err
}

// upLocked marks the connection up again; l.mu is held.
func (l *Link) upLocked() {
	select {
	case <-l.backCh:
	default:
		close(l.backCh)
		l.lostCh = make(chan struct{})
	}
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
			if l.early { // counted when the status showed it
				l.early = false
				l.lastDrop = err
				return
			}
			select {
			case <-l.lostCh: // a drop not followed by a reconnect yet: nothing new
				return
			default:
			}
			l.downLocked(err)
			if c.Status() == nats.CONNECTED {
				l.upLocked() // back already: the callbacks come late
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.upLocked()
		}),
	}
}

// Lost is closed when the current connection is lost.
func (l *Link) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLocked()
	return l.lostCh
}

// Back is closed while connected.
func (l *Link) Back() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLocked()
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
