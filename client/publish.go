package client

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// ErrNotConnected: Publish did not hand the message to the connection.
var ErrNotConnected = errors.New("not connected")

// PublishOutcome is what one publish attempt learned.
type PublishOutcome int

const (
	Published PublishOutcome = iota // the server acked
	HubGone                         // connection lost or the hub did not answer: try again
	Refused                         // the server answered no (too large, stream full, ...)
)

// Publish sends msg and waits for its ack, giving up at once when the
// connection drops (the ack cannot come) or after timeout.
func Publish(ctx context.Context, j js.JetStream, l *Link, msg *nats.Msg, timeout time.Duration) (*js.PubAck, PublishOutcome, error) {
	if !l.Connected() {
		return nil, HubGone, ErrNotConnected
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lost := l.Lost()
	go func() {
		select {
		case <-lost:
			cancel()
		case <-pctx.Done():
		}
	}()
	ack, err := j.PublishMsg(pctx, msg)
	if err == nil {
		return ack, Published, nil
	}
	if ctx.Err() != nil {
		return nil, Refused, ctx.Err()
	}
	select {
	case <-lost:
		return nil, HubGone, errors.New("connection to the hub lost")
	default:
	}
	if IsHubSilent(err) {
		return nil, HubGone, err
	}
	return nil, Refused, err
}

// IsHubSilent reports errors that mean "no answer", not "no": the file may
// or may not be stored, and sending it again is safe (same Nats-Msg-Id).
func IsHubSilent(err error) bool {
	for _, e := range []error{context.DeadlineExceeded, context.Canceled, nats.ErrTimeout, nats.ErrNoResponders,
		js.ErrNoStreamResponse, nats.ErrConnectionClosed, nats.ErrDisconnected, nats.ErrConnectionReconnecting,
		nats.ErrReconnectBufExceeded, nats.ErrConnectionDraining} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
