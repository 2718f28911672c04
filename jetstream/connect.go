package jetstream

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

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
	}, extra...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", RedactURL(url), err)
	}
	j, err := js.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream context on %s: %w", RedactURL(url), err)
	}
	return nc, j, nil
}
