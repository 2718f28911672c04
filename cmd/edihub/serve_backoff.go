package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
)

// Serve's own restart back-off for a store that cannot be used at start
// (a full disk, JetStream's store limit): the supervisor would restart at
// once, again and again; serve waits instead, 1 s doubling up to a minute,
// and tries again until the store takes writes or it is stopped. Any
// other error ends serve as before.
const (
	storeBackoffFirst = time.Second
	storeBackoffMax   = time.Minute
)

func serveWithStoreBackoff(ctx context.Context, log zerolog.Logger, run func(context.Context) error) error {
	delay := storeBackoffFirst
	for {
		err := run(ctx)
		if err == nil || !ejs.StorageFault(err) || ctx.Err() != nil {
			return err
		}
		log.Error().Str("component", "serve").Err(err).Dur("retry_in", delay).
			Msg("the JetStream store cannot be used (disk full or store limit reached): free space or lower the size settings named above; trying again")
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, storeBackoffMax)
	}
}
