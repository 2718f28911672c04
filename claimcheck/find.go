package claimcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// ErrUploadGone: neither the payload bucket nor the upload stream holds an
// upload's bytes any more (its chunks expired after
// hub.claim_check.upload_ttl before the hub took them, were never sent
// under that partner, or the bucket's TTL dropped the object). Find
// returns it inside a *RefusedError.
var ErrUploadGone = errors.New("the upload's bytes are gone")

// Where names the place Find read an upload from.
type Where struct {
	// Object is <bucket>/<object> when the hub had taken it, else "".
	Object string `json:"object,omitempty"`
	// Subject is the partner's subject of stream Stream the chunks were
	// read from, when the hub had not.
	Stream  string `json:"stream,omitempty"`
	Subject string `json:"subject,omitempty"`
}

func (w Where) String() string {
	if w.Object != "" {
		return w.Object
	}
	return w.Stream + " " + w.Subject
}

// Find reads the bytes of partner's upload up without taking it (nothing
// is stored or purged): for readers beside the hub, such as the forensic
// worker, that must see a quarantined announcement's payload. The object
// the hub keeps in bucket comes first, else the chunks on partner's
// upload subject of stream; at most maxSize bytes (0: no bound) and
// their SHA-256 checked. A *RefusedError says why there are no such
// bytes (ErrUploadGone in its chain when neither place holds any); any
// other error is the environment's.
func Find(ctx context.Context, j js.JetStream, bucket, stream, partner string, up wire.Upload, maxSize int64) ([]byte, Where, error) {
	if err := wire.ValidPartnerID(partner); err != nil {
		return nil, Where{}, refused("upload %s: no partner to look it up under: %v", up.SHA256, err)
	}
	if maxSize > 0 && up.Size > maxSize {
		return nil, Where{}, refused("upload of %d bytes is over parse.max_size (%d bytes)", up.Size, maxSize)
	}
	bucket, stream = cmp.Or(bucket, wire.DefaultPayloadBucket), cmp.Or(stream, wire.DefaultUploadStream)
	name := wire.UploadObject(partner, up.SHA256)
	taken := Where{Object: bucket + "/" + name}
	obj, err := j.ObjectStore(ctx, bucket)
	switch {
	case err == nil:
		data, err := readTaken(ctx, obj, bucket, name, up)
		if err == nil || !errors.Is(err, js.ErrObjectNotFound) {
			return data, taken, err
		}
	case !errors.Is(err, js.ErrBucketNotFound):
		return nil, Where{}, fmt.Errorf("upload %s: payload bucket %s: %w", up.SHA256, bucket, err)
	}
	chunks := Where{Stream: stream, Subject: wire.UploadStoredSubject(partner)}
	s, err := j.Stream(ctx, stream)
	if errors.Is(err, js.ErrStreamNotFound) {
		return nil, Where{}, gone(up, taken, chunks)
	}
	if err != nil {
		return nil, Where{}, fmt.Errorf("upload %s: stream %s: %w", up.SHA256, stream, err)
	}
	data, _, err := assemble(ctx, s, partner, up)
	if errors.Is(err, errNoChunk) {
		return nil, Where{}, gone(up, taken, chunks)
	}
	if err != nil {
		return nil, Where{}, err
	}
	return data, chunks, nil
}

func gone(up wire.Upload, taken, chunks Where) error {
	return &RefusedError{Err: fmt.Errorf("upload %s (%d bytes): %w: not in %s, no chunk of it on %s in %s (expired after hub.claim_check.upload_ttl before the hub took them, or never sent by this partner)",
		up.SHA256, up.Size, ErrUploadGone, taken.Object, chunks.Subject, chunks.Stream)}
}
