package app

import (
	"context"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
)

// watchEmbeddedStore watches the disk of the embedded server's store
// until ctx ends: a full disk is a storage fault (/readyz not ready, the
// StorageUnavailable alert), and when the disk has room again JetStream is
// restarted in process, its store limit measured again, since the file
// store that hit the full disk answers nothing until then.
func watchEmbeddedStore(ctx context.Context, srv *server.Server, log zerolog.Logger) {
	cfg := srv.JetStreamConfig()
	if cfg == nil {
		return
	}
	log = log.With().Str("component", "app").Logger()
	ejs.StoreFaults.WatchDisk(ctx, cfg.StoreDir, time.Second, func() {
		if err := ejs.RestartJetStream(srv, false); err != nil {
			log.Error().Err(err).Msg("the store's disk has room again, but JetStream could not be restarted: restart serve")
			return
		}
		log.Warn().Str("store", cfg.StoreDir).Msg("the store's disk has room again: JetStream restarted in process")
	})
}
