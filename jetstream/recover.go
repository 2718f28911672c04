package jetstream

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// RestartJetStream stops and starts the embedded server's JetStream in
// process: the file store that hit a full disk stays stuck (publishes get
// no answer) even after space returns, until JetStream is started again.
// Streams, consumers and their state are on disk and come back; clients
// keep their connections. The store limit is measured again from the disk
// (nats-server's 75% of the free space) unless the server was given one.
func RestartJetStream(srv *server.Server, fixedLimit bool) error {
	cfg := srv.JetStreamConfig()
	if cfg == nil {
		return fmt.Errorf("JetStream is not enabled on this server")
	}
	next := *cfg
	if !fixedLimit {
		next.MaxStore = 0
	}
	if err := srv.ShutdownJetStream(); err != nil {
		return fmt.Errorf("stop JetStream: %w", err)
	}
	if err := srv.EnableJetStream(&next); err != nil {
		return fmt.Errorf("start JetStream again: %w", err)
	}
	return nil
}
