package claimcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Defaults of the upload stream.
const (
	DefaultUploadTTL      = time.Hour
	DefaultUploadMaxBytes = 1 << 30
)

// UploadsConfig is the upload stream's settings; zero values take the
// defaults.
type UploadsConfig struct {
	// Stream names it (wire.DefaultUploadStream).
	Stream string
	// Replicas as the streams' (1).
	Replicas int
	// TTL is how long the chunks of an upload the hub has not taken are
	// kept (DefaultUploadTTL): an upload that never completes, or is never
	// announced, is gone after it.
	TTL time.Duration
	// MaxBytes bounds the stream (DefaultUploadMaxBytes); a chunk past it
	// is refused to its sender.
	MaxBytes int64
	// PartnerMaxBytes is one partner's share of it (MaxBytes/4): the
	// server refuses a partner's chunk past it, to that partner only, so
	// that one partner's flood leaves the rest of the stream to the
	// others. It is kept as the stream's per-subject message limit (all
	// of a partner's chunks are on one subject): PartnerMaxBytes over the
	// chunk edihub send cuts on this connection, rounded up.
	PartnerMaxBytes int64
}

// partnerChunks is the per-subject limit that holds PartnerMaxBytes of
// chunks as edihub send cuts them (client.InlineLimit: the server's max
// payload less ejs.HeaderRoom). A partner's bytes stay under it times the
// max payload.
func (c UploadsConfig) partnerChunks(maxPayload int64) int64 {
	chunk := max(maxPayload-ejs.HeaderRoom, 1<<10)
	return max((c.PartnerMaxBytes+chunk-1)/chunk, 1)
}

// Uploads reads partners' uploads into the payload bucket.
type Uploads struct {
	j        js.JetStream
	name     string
	stream   js.Stream
	payloads *Store
}

// OpenUploads creates the upload stream, or binds to it and brings its
// settings to cfg. Taken uploads go into payloads.
func OpenUploads(ctx context.Context, j js.JetStream, payloads *Store, cfg UploadsConfig) (*Uploads, error) {
	if cfg.Stream == "" {
		cfg.Stream = wire.DefaultUploadStream
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultUploadTTL
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultUploadMaxBytes
	}
	if cfg.PartnerMaxBytes <= 0 {
		cfg.PartnerMaxBytes = cfg.MaxBytes / 4
	}
	// Every chunk is stored under its partner's subject (the transform),
	// and only edi.upload.<partner>.<sha256> is stored (a longer subject
	// would escape the per-subject limit): the limit is each partner's.
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{
		Name: cfg.Stream, Description: "edihub: chunks of interchanges too large for the server, until the hub takes them",
		Subjects:         []string{wire.UploadChunks},
		SubjectTransform: &js.SubjectTransformConfig{Source: wire.UploadChunks, Destination: wire.UploadStoredTransform},
		Storage:          js.FileStorage, Replicas: max(cfg.Replicas, 1),
		MaxAge: cfg.TTL, MaxBytes: cfg.MaxBytes, Discard: js.DiscardNew, Duplicates: min(cfg.TTL, 10*time.Minute),
		MaxMsgsPerSubject: cfg.partnerChunks(j.Conn().MaxPayload()), DiscardNewPerSubject: true,
	}); err != nil {
		return nil, fmt.Errorf("upload stream: %w", err)
	}
	s, err := j.Stream(ctx, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("upload stream: %w", err)
	}
	return &Uploads{j: j, name: cfg.Stream, stream: s, payloads: payloads}, nil
}

// RefusedError is an upload refused for what it is (not there, not the
// bytes it names, too large, a forged reference): the message's failure,
// for good. Any other error of Resolve is the environment's.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

func refused(format string, a ...any) error { return &RefusedError{Err: fmt.Errorf(format, a...)} }

// Resolve is the payload of an ingest message stored under partner's
// subject: nil when the message carries it inline, else the upload its
// headers name, read from partner's upload subject only, at most maxSize
// bytes, its SHA-256 checked, and kept in the payload bucket (where a
// later delivery, a retry or a replay of the same message finds it once
// the chunks are gone). An x-payload-ref on an ingest message is refused:
// it is the hub's header, and the hub never takes a payload named by one.
func (u *Uploads) Resolve(ctx context.Context, partner string, h nats.Header, maxSize int64) ([]byte, error) {
	for k := range h {
		if len(k) == len(wire.HdrPayloadRef) && strings.EqualFold(k, wire.HdrPayloadRef) {
			return nil, refused("the message carries %s, the hub's own header: a partner sends a large interchange as an upload (edihub send), never a reference", wire.HdrPayloadRef)
		}
	}
	up, err := wire.UploadOf(h.Get)
	if errors.Is(err, wire.ErrNoUpload) {
		return nil, nil
	}
	if err != nil {
		return nil, &RefusedError{Err: err}
	}
	if maxSize > 0 && up.Size > maxSize {
		return nil, refused("upload of %d bytes is over parse.max_size (%d bytes)", up.Size, maxSize)
	}
	name := wire.UploadObject(partner, up.SHA256)
	// taken before (a later delivery, a retry, a replay): the object is
	// the hub's, read back only if it is still the bytes
	if data, err := readTaken(ctx, u.payloads.obj, u.payloads.Bucket(), name, up); err == nil {
		return data, nil
	} else if !errors.Is(err, js.ErrObjectNotFound) {
		return nil, err
	}
	data, seqs, err := assemble(ctx, u.stream, partner, up)
	if errors.Is(err, errNoChunk) { // expired, or never sent under partner
		err = gone(up, Where{Object: u.payloads.Bucket() + "/" + name},
			Where{Stream: u.name, Subject: wire.UploadStoredSubject(partner)})
	}
	if err != nil {
		var r *RefusedError
		if errors.As(err, &r) {
			// all of its chunks, also past the refusal: a partner's
			// next try must not meet them
			seqs = seqs[:0]
			_ = eachChunk(ctx, u.stream, partner, up.SHA256, func(raw *js.RawStreamMsg) (bool, error) {
				seqs = append(seqs, raw.Sequence)
				return true, nil
			})
			u.drop(ctx, seqs)
		}
		return nil, err
	}
	meta := js.ObjectMeta{Name: name, Metadata: map[string]string{"partner": partner, "sha256": up.SHA256},
		Opts: &js.ObjectMetaOptions{ChunkSize: u.payloads.chunkSize()}}
	if _, err := u.payloads.obj.Put(ctx, meta, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("upload %s: store %d bytes in %s: %w", up.SHA256, len(data), u.payloads.Bucket(), err)
	}
	u.drop(ctx, seqs)
	return data, nil
}

// errNoChunk: the upload subject holds no chunk at all.
var errNoChunk = errors.New("no chunk")

// readTaken reads the object name of an upload the hub took, if it is
// still those bytes (js.ErrObjectNotFound when it is not there).
func readTaken(ctx context.Context, obj js.ObjectStore, bucket, name string, up wire.Upload) ([]byte, error) {
	info, err := obj.GetInfo(ctx, name)
	if errors.Is(err, js.ErrObjectNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("upload %s: payload bucket: %w", up.SHA256, err)
	}
	if info.Size != uint64(up.Size) {
		return nil, refused("upload %s: the payload bucket holds %d bytes under %s, not %d", up.SHA256, info.Size, name, up.Size)
	}
	data, err := obj.GetBytes(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("upload %s: read %s/%s: %w", up.SHA256, bucket, name, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != up.SHA256 || int64(len(data)) != up.Size {
		return nil, refused("upload %s: %s/%s is not those bytes", up.SHA256, bucket, name)
	}
	return data, nil
}

// assemble reads the chunks of up from partner's subject of stream (all
// of partner's chunks are on it, each naming its upload in
// x-upload-sha256), in order, stopping at up.Size bytes, and checks their
// SHA-256. seqs are the chunks of up it read (also on an error), for
// drop.
func assemble(ctx context.Context, stream js.Stream, partner string, up wire.Upload) (data []byte, seqs []uint64, err error) {
	subject := wire.UploadStoredSubject(partner)
	buf := make([]byte, 0, up.Size)
	next := 0
	err = eachChunk(ctx, stream, partner, up.SHA256, func(raw *js.RawStreamMsg) (bool, error) {
		seqs = append(seqs, raw.Sequence)
		i, err := strconv.Atoi(raw.Header.Get(wire.HdrUploadChunk))
		switch {
		case err != nil || i < 0:
			return false, refused("upload %s: chunk at %s:%d has no %s", up.SHA256, raw.Subject, raw.Sequence, wire.HdrUploadChunk)
		case i < next: // sent again after the server's duplicate window
			return true, nil
		case i > next:
			return false, refused("upload %s: chunk %d missing (chunk %d follows chunk %d)", up.SHA256, next, i, next-1)
		case int64(len(buf)+len(raw.Data)) > up.Size:
			return false, refused("upload %s: the chunks carry more than its %d bytes", up.SHA256, up.Size)
		}
		buf = append(buf, raw.Data...)
		next++
		return int64(len(buf)) < up.Size, nil
	})
	switch {
	case err != nil:
		return nil, seqs, err
	case next == 0:
		return nil, seqs, refused("upload %s: %w of it on %s (never sent by this partner, or expired)", up.SHA256, errNoChunk, subject)
	case int64(len(buf)) < up.Size:
		return nil, seqs, refused("upload %s incomplete: %d of %d bytes in %d chunks on %s", up.SHA256, len(buf), up.Size, next, subject)
	}
	sum := sha256.Sum256(buf)
	if got := hex.EncodeToString(sum[:]); got != up.SHA256 {
		return nil, seqs, refused("upload %s: its %d bytes hash to %s", up.SHA256, len(buf), got)
	}
	return buf, seqs, nil
}

// eachChunk calls f with the chunks of upload sha on partner's subject of
// stream, in stream order, while f says go on. A partner's subject holds
// at most its quota of chunks (the stream's per-subject limit), so the
// scan past other uploads' chunks is bounded.
func eachChunk(ctx context.Context, stream js.Stream, partner, sha string, f func(*js.RawStreamMsg) (bool, error)) error {
	subject := wire.UploadStoredSubject(partner)
	for seq := uint64(1); ; {
		raw, err := stream.GetMsg(ctx, seq, js.WithGetMsgSubject(subject))
		if errors.Is(err, js.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("upload %s: read %s from %d: %w", sha, subject, seq, err)
		}
		seq = raw.Sequence + 1
		if raw.Header.Get(wire.HdrUploadSHA256) != sha {
			continue
		}
		if more, err := f(raw); err != nil || !more {
			return err
		}
	}
}

// drop deletes an upload's chunks once it is taken (those read) or
// refused (all), giving them back to the partner's share (best effort:
// the stream's max age drops what is left, such as a chunk sent again
// after the upload was taken).
func (u *Uploads) drop(ctx context.Context, seqs []uint64) {
	for _, seq := range seqs {
		_ = u.stream.DeleteMsg(ctx, seq)
	}
}
