package jetstream

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// PingEvery and MaxPingsOut are the client's liveness check of its server
// (see Connect).
const (
	PingEvery   = 3 * time.Second
	MaxPingsOut = 2
)

// AsyncAckTimeout ends an async publish's wait for its ack (nats.go's
// default is none): a caller that gave up on a try (Retry) leaves the
// future behind, and one whose ack died with a stream leader would stay
// among the client's pending acks for ever, until their limit stalls
// every publish. It is the longest any caller waits (the single-server
// output timeout).
const AsyncAckTimeout = 30 * time.Second

// Connect dials url and returns the connection and its JetStream context.
// It retries the first connection briefly so that a hub that is still
// starting is not reported as unreachable. Credentials come in extra (see
// ClientAuth.Options) or in url; errors name url without its password.
func Connect(url, name string, extra ...nats.Option) (*nats.Conn, js.JetStream, error) {
	opts := append([]nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(3 * time.Second),
		// A server behind a cut link (or frozen) keeps the socket open and
		// answers nothing: only missed pings tell. nats.go's default (every
		// 2 min, two missed) left the hub on a dead node for minutes; this
		// notices within PingEvery×(MaxPingsOut+1) and reconnects to
		// another. Once the hub's own waits were short tries (Retry), the
		// connection still on the cut node was what held partitions up
		// (stale at +14 s with a 5 s ping, BENCHMARKS.md); 3 s, not 2 s:
		// a live server on a loaded machine (GC, -race) must then miss
		// answering for 6 s, not 4 s, before its clients leave it.
		nats.PingInterval(PingEvery),
		nats.MaxPingsOutstanding(MaxPingsOut),
	}, extra...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", RedactURL(url), err)
	}
	j, err := js.New(nc, js.WithPublishAsyncTimeout(AsyncAckTimeout))
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream context on %s: %w", RedactURL(url), err)
	}
	return nc, j, nil
}
