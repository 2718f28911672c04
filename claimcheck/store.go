package claimcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Config is the bucket's settings; zero values take the defaults.
type Config struct {
	// Bucket names the object store (wire.DefaultPayloadBucket).
	Bucket string
	// Replicas as the streams' (1).
	Replicas int
	// TTL is the retention of the stream the referencing messages are in
	// (PARSED's max_age): an object expires with the message that names
	// it (stored just before it, it goes just before it). 0 keeps
	// objects, as the stream does. A stream's max_bytes is not followed:
	// a reference PARSED drops leaves its object until the TTL.
	TTL time.Duration
}

// Store is an open payload bucket.
type Store struct {
	obj    js.ObjectStore
	nc     *nats.Conn
	bucket string
}

// Open creates the bucket, or binds to it and brings its settings to cfg.
func Open(ctx context.Context, j js.JetStream, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = wire.DefaultPayloadBucket
	}
	obj, err := ejs.EnsureObjectStore(ctx, j, js.ObjectStoreConfig{
		Bucket: cfg.Bucket, Description: "edihub payloads too large for the server, referenced by x-payload-ref",
		Storage: js.FileStorage, Replicas: max(cfg.Replicas, 1), TTL: cfg.TTL,
	})
	if err != nil {
		return nil, fmt.Errorf("claim check: %w", err)
	}
	return &Store{obj: obj, nc: j.Conn(), bucket: cfg.Bucket}, nil
}

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// Aside stores m's payload as the object name and returns the message to
// publish in m's place: m's subject and headers, the reference headers,
// the stub body. name must be the message's dedupe id (or derived from
// it): a redelivery stores the same object again, replacing it (the old
// chunks purged), never a second copy.
func (s *Store) Aside(ctx context.Context, m *nats.Msg, name string) (*nats.Msg, error) {
	sum := sha256.Sum256(m.Data)
	sha := hex.EncodeToString(sum[:])
	meta := js.ObjectMeta{Name: name, Metadata: map[string]string{"subject": m.Subject, "sha256": sha},
		Opts: &js.ObjectMetaOptions{ChunkSize: s.chunkSize()}}
	if _, err := s.obj.Put(ctx, meta, bytes.NewReader(m.Data)); err != nil {
		return nil, fmt.Errorf("claim check: store %d bytes as %s/%s: %w", len(m.Data), s.bucket, name, err)
	}
	ref := wire.PayloadRef{Bucket: s.bucket, Object: name}
	h := make(nats.Header, len(m.Header)+3)
	for k, v := range m.Header {
		h[k] = v
	}
	h.Set(wire.HdrPayloadRef, ref.String())
	h.Set(wire.HdrPayloadSize, strconv.Itoa(len(m.Data)))
	h.Set(wire.HdrPayloadSHA256, sha)
	return &nats.Msg{Subject: m.Subject, Header: h, Data: wire.NewClaimStub(ref, int64(len(m.Data)), sha)}, nil
}

// chunkSize is nats.go's 128 KiB, or less on a server whose max payload
// would not take a chunk of that size with its headers.
func (s *Store) chunkSize() uint32 {
	const def, room = 128 << 10, 4 << 10
	if mp := s.nc.MaxPayload(); mp > 0 && mp-room < def {
		return uint32(max(mp-room, 1<<10))
	}
	return def
}
