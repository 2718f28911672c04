package hubclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// ErrPayloadMismatch: the stored object is not the one the message names
// (another size or SHA-256).
var ErrPayloadMismatch = errors.New("stored payload does not match its reference")

// Payload is msg's payload: its body, or the object its x-payload-ref
// names, verified.
func Payload(ctx context.Context, j js.JetStream, msg js.Msg) ([]byte, error) {
	return PayloadOf(ctx, j, msg.Headers(), msg.Data())
}

// PayloadOf is Payload for a message read otherwise (a stream's
// GetMsg, a core NATS subscription).
func PayloadOf(ctx context.Context, j js.JetStream, h nats.Header, data []byte) ([]byte, error) {
	c, err := wire.ClaimOf(h.Get)
	if errors.Is(err, wire.ErrNoClaim) {
		return data, nil
	}
	if err != nil {
		return nil, err
	}
	return Fetch(ctx, j, c)
}

// Fetch reads the object c names, refusing one whose size or SHA-256 is
// not c's (read no further than c.Size+1 bytes).
func Fetch(ctx context.Context, j js.JetStream, c wire.Claim) ([]byte, error) {
	obj, err := j.ObjectStore(ctx, c.Ref.Bucket)
	if err != nil {
		return nil, fmt.Errorf("payload %s: bucket: %w", c.Ref, err)
	}
	r, err := obj.Get(ctx, c.Ref.Object)
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", c.Ref, err)
	}
	defer r.Close()
	// grown as read: a size in a header is not an allocation
	buf := make([]byte, 0, min(c.Size, 1<<20))
	h := sha256.New()
	buf, err = readAtMost(r, buf, c.Size+1)
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", c.Ref, err)
	}
	h.Write(buf)
	if got := hex.EncodeToString(h.Sum(nil)); int64(len(buf)) != c.Size || got != c.SHA256 {
		return nil, fmt.Errorf("payload %s: %w (%d bytes, SHA-256 %s; the message says %d, %s)",
			c.Ref, ErrPayloadMismatch, len(buf), got, c.Size, c.SHA256)
	}
	return buf, nil
}

func readAtMost(r io.Reader, buf []byte, n int64) ([]byte, error) {
	lr := io.LimitReader(r, n)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
