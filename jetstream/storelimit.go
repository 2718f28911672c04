package jetstream

import (
	"context"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	js "github.com/nats-io/nats.go/jetstream"
)

// StoreLimit is how many bytes JetStream lets this account store, and
// where that figure comes from: the account's own limit when it has one,
// else the embedded server's store limit (nats-server sizes it at start
// to 75% of the free disk under its store folder when not configured).
// 0 means unknown (an external server without account limits: the disk
// is not visible from a client).
func StoreLimit(ctx context.Context, j js.JetStream, srv *server.Server) (int64, string, error) {
	ai, err := j.AccountInfo(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("account info: %w", err)
	}
	if ai.Limits.MaxStore > 0 {
		return ai.Limits.MaxStore, "the JetStream account's max_file_store", nil
	}
	if srv != nil {
		if c := srv.JetStreamConfig(); c != nil && c.MaxStore > 0 {
			return c.MaxStore, fmt.Sprintf("75%% of the free disk under %s when the embedded server started, or jetstream max_file_store", c.StoreDir), nil
		}
	}
	return 0, "", nil
}
