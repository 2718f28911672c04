package app

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
)

// uploadChunkFloor is the smallest body a server must take for uploads of
// interchanges over its limit to work.
const uploadChunkFloor = 64 << 10

// interchangeNeeds are the sizes the config promises to take: an
// interchange of parse.max_size (and of each partner's override)
// is stored in the ingest stream, and its copies (a retry, a dead letter,
// the parking lot, quarantine) carry it whole into theirs. With the claim
// check on, an interchange over the server's limit is uploaded instead
// (edihub send; claimcheck.Uploads) and its copies carry the
// announcement: then only an upload's chunk must fit.
func interchangeNeeds(cfg *Config) []ejs.Need {
	e, st := cfg.Parse, cfg.Hub.Streams
	sizes := []ejs.Need{{Setting: "parse.max_size", Size: e.MaxSize}}
	ids := make([]string, 0, len(e.Partners))
	for id := range e.Partners {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if n := e.Partners[id].MaxSize; n > 0 {
			sizes = append(sizes, ejs.Need{Setting: fmt.Sprintf("parse.partners.%s.max_size", id), Size: n})
		}
	}
	var needs []ejs.Need
	for _, n := range sizes {
		if cfg.Hub.ClaimCheck.On() {
			// larger ones arrive as uploads (chunks sized to the server,
			// an announcement of a few hundred bytes): what must fit is
			// a chunk
			n.Size = min(n.Size, uploadChunkFloor)
		}
		for _, stream := range []string{st.Ingest, st.Retry, st.DLQ, st.Parking, st.Poison} {
			n.Stream = stream
			needs = append(needs, n)
		}
	}
	return needs
}

// watchServerLimits refuses a config whose interchanges the server cannot
// take (its max_payload, the max_msg_size of the streams they go to), and reads them
// again after every reconnect: a server replaced by one with smaller
// limits is logged with the setting to change.
func watchServerLimits(ctx context.Context, nc *nats.Conn, j js.JetStream, cfg *Config, log zerolog.Logger) (*ejs.LimitWatch, error) {
	w, err := ejs.NewLimitWatch(ctx, nc, j, interchangeNeeds(cfg)...)
	if err != nil {
		return nil, err
	}
	w.WatchReconnects(func(err error) {
		if errors.Is(err, ejs.ErrLimitsUnread) {
			log.Warn().Str("component", "app").Err(err).Msg("the NATS server's limits could not be read after a reconnect; reading again until they are (not ready meanwhile)")
			return
		}
		log.Error().Str("component", "app").Err(err).Msg("the NATS server reconnected to cannot take the configured interchanges")
	})
	l := w.Limits()
	log.Info().Str("component", "app").Int64("max_payload", l.MaxPayload).Int64("max_interchange", l.MaxBody(cfg.Hub.Streams.Ingest)).
		Bool("uploads", cfg.Hub.ClaimCheck.On()).Msg("the NATS server's limits take the configured interchanges (larger ones as uploads, when uploads are on)")
	return w, nil
}
