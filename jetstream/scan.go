package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// ScanOptions select what Scan reads; nil means every message with its
// payload.
type ScanOptions struct {
	// Since skips messages stored before it (zero: from the start).
	Since time.Time
	// FromSeq skips messages before this stream sequence (0: from the
	// start); with Since, Since wins.
	FromSeq uint64
	// HeadersOnly leaves the payloads on the server (listings).
	HeadersOnly bool
	// Filter reads only the stream's subjects that match (empty: all).
	Filter string
}

// Scan calls fn for every message of stream, in sequence order, through a
// short-lived pull consumer: one round trip per 256 messages instead of one
// per message. It is the one stream reader of the module (runbook
// listings, audit verification, the poison list). A missing stream is an
// error wrapping js.ErrStreamNotFound.
func Scan(ctx context.Context, j js.JetStream, stream string, o *ScanOptions, fn func(js.Msg, *js.MsgMetadata) error) error {
	var opts ScanOptions
	if o != nil {
		opts = *o
	}
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	cfg := js.ConsumerConfig{
		AckPolicy: js.AckNonePolicy, HeadersOnly: opts.HeadersOnly, MemoryStorage: true,
		InactiveThreshold: time.Minute, Description: "edihub scan", MaxDeliver: 1, FilterSubject: opts.Filter,
	}
	if !opts.Since.IsZero() {
		st := opts.Since.UTC()
		cfg.DeliverPolicy, cfg.OptStartTime = js.DeliverByStartTimePolicy, &st
	} else if opts.FromSeq > 1 {
		if opts.FromSeq > info.State.LastSeq {
			return nil // nothing stored since
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = js.DeliverByStartSequencePolicy, opts.FromSeq
	}
	c, err := s.CreateConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("scan %s: %w", stream, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.DeleteConsumer(dctx, c.CachedInfo().Name)
	}()
	ci, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: %w", stream, err)
	}
	pending := ci.NumPending
	empty := 0
	for pending > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		// No-wait: the server answers at once with what it has, instead of
		// holding the request until 256 messages arrive.
		batch, err := c.FetchNoWait(int(min(pending, 256)))
		if err != nil {
			return fmt.Errorf("scan %s: %w", stream, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("scan %s: %w", stream, err)
			}
			pending = md.NumPending
			if err := fn(m, md); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, js.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("scan %s: %w", stream, err)
		}
		if n == 0 {
			// Nothing came back: either the rest expired or was deleted
			// meanwhile, or a busy server had not delivered it yet (a
			// no-wait fetch answers at once). Ask, and wait once before
			// calling the listing complete: never end a scan short.
			ci, err := c.Info(ctx)
			if err != nil {
				return fmt.Errorf("scan %s: %w", stream, err)
			}
			if pending = ci.NumPending; pending == 0 {
				break
			}
			if empty++; empty > 3 {
				return fmt.Errorf("scan %s: %d messages pending but none delivered", stream, pending)
			}
			if waited, err := scanWait(ctx, c, fn, &pending); err != nil || waited {
				if err != nil {
					return fmt.Errorf("scan %s: %w", stream, err)
				}
				empty = 0
			}
		}
	}
	return nil
}

// scanWait fetches with a wait after a no-wait fetch came back empty
// while messages were pending; it reports whether any arrived.
func scanWait(ctx context.Context, c js.Consumer, fn func(js.Msg, *js.MsgMetadata) error, pending *uint64) (bool, error) {
	batch, err := c.Fetch(int(min(*pending, 256)), js.FetchMaxWait(2*time.Second))
	if err != nil {
		return false, err
	}
	got := false
	for m := range batch.Messages() {
		got = true
		md, err := m.Metadata()
		if err != nil {
			return got, err
		}
		*pending = md.NumPending
		if err := fn(m, md); err != nil {
			return got, err
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, js.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
		return got, err
	}
	return got, ctx.Err()
}

// SubjectCounts is the message count of each subject of stream, as the
// server keeps it (one request; the leak probe's DLQ depth).
func SubjectCounts(ctx context.Context, j js.JetStream, stream string) (map[string]uint64, error) {
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx, js.WithSubjectFilter(">"))
	if err != nil {
		return nil, err
	}
	return info.State.Subjects, nil
}

// LiteralSeqs returns the sequences of up to want messages of st stored
// under the literal subject (a wildcard subject published as such, e.g.
// edi.ingest.>): a headers-only ordered scan, since every filter that
// selects such a subject also selects the subjects it matches.
func LiteralSeqs(ctx context.Context, st js.Stream, subject string, want uint64) ([]uint64, error) {
	name := st.CachedInfo().Config.Name
	c, err := st.OrderedConsumer(ctx, js.OrderedConsumerConfig{FilterSubjects: []string{subject}, HeadersOnly: true})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", name, err)
	}
	var seqs []uint64
	for uint64(len(seqs)) < want && ctx.Err() == nil {
		b, err := c.Fetch(1024, js.FetchMaxWait(time.Second))
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", name, err)
		}
		n := 0
		for m := range b.Messages() {
			n++
			if md, err := m.Metadata(); err == nil && m.Subject() == subject {
				seqs = append(seqs, md.Sequence.Stream)
			}
		}
		if n == 0 {
			break // the end of the stream
		}
	}
	return seqs, ctx.Err()
}
