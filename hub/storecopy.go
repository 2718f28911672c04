package hub

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/headers"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Bounds of the wait between two tries to store a copy.
const (
	copyRetryBase = 500 * time.Millisecond
	copyRetryMax  = 30 * time.Second
	copyTryTime   = 30 * time.Second
)

// storeCopy stores a copy (poison, dead letter, retry, the backstop's) and
// returns its ack.
// A copy the server refuses for what it carries (a header it cannot take,
// headers over its limit) is stored once more with the hub's own headers
// only. A store that fails for the environment (disk or stream full, no
// quorum, a timeout) is tried again in place with backoff, the message kept
// in progress and an alert raised: the message stays in its source and is
// never redelivered for it, so a failing store is not taken for a process
// death. It gives up only when the hub stops (ctx), and then returns the
// error.
func (h *Hub) storeCopy(ctx context.Context, c *hubCopy, id string) (*js.PubAck, error) {
	m, kind := c.stored, c.kind
	wait := copyRetryBase
	for try := 1; ; try++ {
		// A try is not cut short by shutdown: a message being drained still
		// gets its copy; only the waits between tries end.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), copyTryTime)
		ack, err := ejs.Publish(tctx, h.js, m, id, c.opts...)
		cancel()
		if err == nil {
			if try > 1 {
				h.log.Info().Str("kind", kind).Int("tries", try).Msg("copy stored after all; the partition moves on")
			}
			return ack, nil
		}
		h.met.CopyFailures.WithLabelValues(kind).Inc()
		if refusedForContent(err) && m.Header.Get(wire.HdrHeadersDropped) != "*" {
			h.log.Warn().Err(err).Str("kind", kind).Msg("the copy's headers cannot be stored; storing it with the hub's headers only")
			m.Header = headers.HubOnly(m.Header)
			continue
		}
		if ctx.Err() != nil {
			return nil, err
		}
		h.log.Error().Err(err).Str("kind", kind).Int("try", try).Dur("next_in", wait).
			Msg("could not store the copy; the message stays in its source and the partition waits")
		h.alerter.Fire(ctx, alert.Alert{Name: "CopyStoreFailing", Severity: "critical", Partner: c.partner,
			Summary: "a " + kind + " copy cannot be stored (" + escape.Header(err.Error()) + "); the partition waits and retries",
			Labels:  map[string]string{"kind": kind, "stream": c.stream}})
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, copyRetryMax)
	}
}

// refusedForContent reports whether the client or server refused the
// message for what it carries rather than for the state of the system.
func refusedForContent(err error) bool {
	if errors.Is(err, nats.ErrBadHeaderMsg) || errors.Is(err, nats.ErrMaxPayload) {
		return true
	}
	var apiErr *js.APIError
	// The server reports a message it cannot take (headers or size over
	// its limits) as a bad request.
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == js.JSErrCodeBadRequest || apiErr.Code == 400)
}
