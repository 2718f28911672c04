package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hubclient"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// A stored message's payload may be a reference: the copy of an upload's
// announcement (x-upload-sha256, x-upload-size: the bytes are the object
// wire.UploadObject(partner, sha256) of the payload bucket once the hub
// took them) or a message whose payload the hub stored aside
// (x-payload-ref). Show, the editor's Payload, Edit and the dry run work
// on the real payload, fetched and checked against its size and SHA-256;
// a replay sends the reference as it is, never the payload inline.

// Referenced says where a payload shown in place of its reference is.
type Referenced struct {
	Ref    string `json:"ref"` // <bucket>/<object>
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Error: the payload could not be fetched (expired with its bucket's
	// TTL, never taken, not those bytes); the message's own body is shown.
	Error string `json:"error,omitempty"`
}

// claimOf is the reference a stored message's headers make (nil: its
// payload is its body). An upload's bytes are looked up under partner,
// the partner the hub recorded.
func (o *Ops) claimOf(h nats.Header, partner string) (*wire.Claim, error) {
	// the hub's spelling only: a producer's X-Payload-Ref is not the hub's
	c, err := wire.ClaimOf(func(k string) string {
		if vs := h[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	})
	if err == nil {
		return &c, nil
	}
	if !errors.Is(err, wire.ErrNoClaim) {
		return nil, err
	}
	up, err := wire.UploadOf(h.Get)
	if errors.Is(err, wire.ErrNoUpload) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if wire.ValidPartnerID(partner) != nil {
		return nil, fmt.Errorf("upload %s: the hub recorded no valid partner to look it up under", up.SHA256)
	}
	return &wire.Claim{Ref: wire.PayloadRef{Bucket: o.payloadBucket(), Object: wire.UploadObject(partner, up.SHA256)},
		Size: up.Size, SHA256: up.SHA256}, nil
}

func (o *Ops) payloadBucket() string {
	if o.o.PayloadBucket != "" {
		return o.o.PayloadBucket
	}
	return wire.DefaultPayloadBucket
}

// realPayload is raw's payload: its body, or the object its reference
// names, fetched and checked (ref says which; ref.Error when the fetch
// failed and the body is returned, err then too).
func (o *Ops) realPayload(ctx context.Context, raw *js.RawStreamMsg, partner string) (data []byte, ref *Referenced, err error) {
	c, err := o.claimOf(raw.Header, partner)
	if err != nil {
		return raw.Data, &Referenced{Error: err.Error()}, err
	}
	if c == nil {
		return raw.Data, nil, nil
	}
	ref = &Referenced{Ref: c.Ref.String(), Size: c.Size, SHA256: c.SHA256}
	data, err = hubclient.Fetch(ctx, o.o.JS, *c)
	if errors.Is(err, js.ErrObjectNotFound) && raw.Header.Get(wire.HdrUploadSHA256) != "" {
		err = fmt.Errorf("%w: the upload's bytes are not in the payload bucket: the hub never took them (their chunks expired after hub.claim_check.upload_ttl, or were never sent: the copy's %s says which) or the bucket's TTL dropped them", err, wire.HdrErrorMsg)
	}
	if err != nil {
		ref.Error = err.Error()
		return raw.Data, ref, fmt.Errorf("the payload it refers to: %w", err)
	}
	return data, ref, nil
}

// inlineLimit is the largest payload an operator's copy carries in its
// body on this connection (the server's max payload less the room for
// headers).
func (o *Ops) inlineLimit() int {
	return max(int(o.o.JS.Conn().MaxPayload())-ejs.HeaderRoom, 1<<10)
}

// referenceHeaders are the headers that make a body a reference.
var referenceHeaders = []string{wire.HdrUploadSHA256, wire.HdrUploadSize, wire.HdrPayloadRef, wire.HdrPayloadSize, wire.HdrPayloadSHA256}

// setPayload puts payload in m: inline when it fits the server, else
// stored in the payload bucket as partner's upload and m the
// announcement of it (which a replay sends, and the hub takes from the
// bucket as it takes an upload). Headers making the old body a reference
// go either way.
func (o *Ops) setPayload(ctx context.Context, m *nats.Msg, payload []byte, partner string) error {
	for _, k := range referenceHeaders {
		m.Header.Del(k)
	}
	if len(payload) <= o.inlineLimit() {
		m.Data = payload
		return nil
	}
	if wire.ValidPartnerID(partner) != nil {
		return fmt.Errorf("%d bytes are over the server's limit and must be stored as an upload, but the hub recorded no valid partner for it", len(payload))
	}
	up := wire.Upload{SHA256: audit.PayloadHash(payload), Size: int64(len(payload))}
	obj, err := o.o.JS.ObjectStore(ctx, o.payloadBucket())
	if err == nil {
		_, err = obj.Put(ctx, js.ObjectMeta{Name: wire.UploadObject(partner, up.SHA256),
			Metadata: map[string]string{"partner": partner, "sha256": up.SHA256}}, bytes.NewReader(payload))
	}
	if err != nil {
		return fmt.Errorf("%d bytes are over the server's limit: store them in the payload bucket %s (an operator's NATS user may only read it: edit through the API or the console, which act with the hub's): %w",
			len(payload), o.payloadBucket(), err)
	}
	m.Header.Set(wire.HdrUploadSHA256, up.SHA256)
	m.Header.Set(wire.HdrUploadSize, strconv.FormatInt(up.Size, 10))
	m.Data = wire.UploadStub(up)
	return nil
}
