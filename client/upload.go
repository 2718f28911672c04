package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// minChunk is the smallest chunk an upload is cut into, whatever the
// server says.
const minChunk = 1 << 10

// InlineLimit is the largest payload sent inline on nc: the server's max
// payload less the room its headers need (ejs.HeaderRoom). Larger ones
// are uploaded (Send).
func InlineLimit(nc *nats.Conn) int {
	return max(int(nc.MaxPayload())-ejs.HeaderRoom, minChunk)
}

// Send publishes msg (on edi.ingest.<partner>) as Publish does, or, when
// its payload is over InlineLimit, uploads it first: the chunks on the
// partner's upload subject (wire.UploadSubject, each under its own
// Nats-Msg-Id, so an upload sent again is dropped chunk by chunk), then
// msg's subject and headers with the upload's (x-upload-sha256,
// x-upload-size) and a small stub body in its place. The hub reads the
// chunks under the partner of the ingest subject and checks their
// SHA-256 before parsing. chunks is how many were sent (0: inline).
func Send(ctx context.Context, j js.JetStream, l *Link, partner string, msg *nats.Msg, timeout time.Duration) (ack *js.PubAck, chunks int, res PublishOutcome, err error) {
	limit := InlineLimit(j.Conn())
	if len(msg.Data) <= limit {
		ack, res, err = Publish(ctx, j, l, msg, timeout)
		return ack, 0, res, err
	}
	sum := sha256.Sum256(msg.Data)
	up := wire.Upload{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(msg.Data))}
	subject := wire.UploadSubject(partner, up.SHA256)
	for off := 0; off < len(msg.Data); off += limit {
		c := &nats.Msg{Subject: subject, Data: msg.Data[off:min(off+limit, len(msg.Data))], Header: nats.Header{}}
		c.Header.Set(wire.HdrUploadChunk, strconv.Itoa(chunks))
		c.Header.Set(wire.HdrUploadSHA256, up.SHA256) // the stream keeps a partner's chunks on one subject
		c.Header.Set(js.MsgIDHeader, wire.UploadChunkMsgID(partner, up.SHA256, chunks))
		if _, res, err = Publish(ctx, j, l, c, timeout); res != Published {
			return nil, chunks, res, err
		}
		chunks++
	}
	// msg's headers all (its Nats-Msg-Id too: the file's dedupe id)
	ann := &nats.Msg{Subject: msg.Subject, Header: make(nats.Header, len(msg.Header)+2), Data: wire.UploadStub(up)}
	for k, v := range msg.Header {
		ann.Header[k] = append([]string(nil), v...)
	}
	ann.Header.Set(wire.HdrUploadSHA256, up.SHA256)
	ann.Header.Set(wire.HdrUploadSize, strconv.FormatInt(up.Size, 10))
	ack, res, err = Publish(ctx, j, l, ann, timeout)
	return ack, chunks, res, err
}
