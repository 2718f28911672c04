package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// source is one consumer the hub works: a partition of INGEST, or the due
// retries of one stage.
type source struct {
	h         *Hub
	name      string
	cons      js.Consumer
	partition int    // -1 for retry sources
	stage     string // retry sources: the stage they retry
	slot      int    // its row in the in-flight table
	stray     bool   // INGEST messages no partition reads (see straySource)
	// pinID is the server's pin of this instance on the partition, and
	// partners those seen since (see notePin).
	pinID    string
	partners map[string]struct{}
}

func (h *Hub) partitionSource(ctx context.Context, p int) (*source, error) {
	cfg := h.partitionConsumer(p)
	c, err := h.js.CreateOrUpdateConsumer(ctx, h.cfg.Streams.Ingest, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	return &source{h: h, name: cfg.Durable, cons: c, partition: p, slot: p, partners: map[string]struct{}{}}, nil
}

// straySource reads what INGEST stored without its partition transform:
// a raw client can publish to the literal subject edi.ingest.*, which the
// stream accepts but no partition worker reads. Well-formed messages are
// stored with four tokens; these keep three, so this filter sees only
// them, and each is dead-lettered with a cause instead of lying stranded
// with lag 0. (A literal edi.ingest.> is stored as well, but every filter
// that selects it selects all of INGEST: sweepLiteralIngestAll finds it.)
func (h *Hub) straySource(ctx context.Context) (*source, error) {
	cfg := js.ConsumerConfig{
		Durable: "ingest-stray", Description: "edihub: INGEST messages without a partition (literal wildcard subjects)",
		FilterSubject: wire.IngestWildcard, AckPolicy: js.AckExplicitPolicy, AckWait: h.cfg.Attempts.AckWait,
		MaxAckPending: 1, MaxDeliver: -1, DeliverPolicy: js.DeliverAllPolicy,
	}
	c, err := h.js.CreateOrUpdateConsumer(ctx, h.cfg.Streams.Ingest, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	return &source{h: h, name: cfg.Durable, cons: c, partition: -1, stage: h.stages[0].Name, stray: true}, nil
}

func (h *Hub) retrySource(ctx context.Context, stage string, slot int) (*source, error) {
	cfg := h.retryConsumer(stage)
	c, err := h.js.CreateOrUpdateConsumer(ctx, h.cfg.Streams.Retry, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	return &source{h: h, name: cfg.Durable, cons: c, partition: -1, stage: stage, slot: slot}, nil
}

// pullBatch is the pull request size of every worker (see run); pullExpiry
// bounds how long a pull request that went unanswered holds a partition up
// before the client notices the missing heartbeats and pulls again.
const (
	pullBatch  = 16
	pullExpiry = 5 * time.Second
)

// run works the source until ctx is done: a partition shared with other
// instances only while this one is its preferred owner (runOwned).
func (s *source) run(ctx context.Context) error {
	if s.partition >= 0 && s.h.owners != nil && s.h.cfg.Cluster.IsPinned() {
		return s.runOwned(ctx)
	}
	return s.pull(ctx, nil)
}

// pull pulls and processes one message at a time until ctx is done or
// yield says to stop; the message in hand is finished first. The loop runs
// on its own goroutine so that a handler that overruns its deadline can be
// left behind: the timeout path starts a new loop on the same iterator.
func (s *source) pull(ctx context.Context, yield func() bool) error {
	// MaxAckPending=1 already keeps one message out at a time; a pull for
	// more keeps a request waiting at the server, which hands over the next
	// message as soon as the ack arrives, without a new pull round trip (a
	// pull of 1 also stalled now and then until the request expired).
	opts := []js.PullMessagesOpt{js.PullMaxMessages(pullBatch), js.PullExpiry(pullExpiry)}
	if s.partition >= 0 {
		opts = s.h.cfg.Cluster.PullOptions(wire.PartitionGroup, js.PullMaxMessages(pullBatch), js.PullExpiry(pullExpiry))
	}
	it, err := s.cons.Messages(opts...)
	if err != nil {
		return fmt.Errorf("pull from %s: %w", s.name, err)
	}
	// Drain, not Stop: a message already handed to this client is processed
	// rather than left to time out, which would count as a crash.
	stop := context.AfterFunc(ctx, it.Drain)
	defer stop()
	finished := make(chan struct{})
	if yield != nil {
		go func() {
			t := time.NewTicker(ownerCheckEvery)
			defer t.Stop()
			for {
				select {
				case <-finished:
					return
				case <-t.C:
					if yield() {
						it.Drain()
						return
					}
				}
			}
		}()
	}
	var loop func()
	loop = func() {
		w := s.h.exec.newWatchdog()
		for {
			msg, err := it.Next()
			if err != nil {
				if errors.Is(err, js.ErrMsgIteratorClosed) || errors.Is(err, nats.ErrConnectionClosed) || ctx.Err() != nil {
					w.close()
					close(finished)
					return
				}
				s.h.log.Warn().Err(err).Str("consumer", s.name).Msg("pull failed; retrying")
				time.Sleep(100 * time.Millisecond) // no hot loop while the server is away
				continue
			}
			if !s.h.process(s, w, msg, func() { go loop() }) {
				return // a replacement loop has taken over
			}
		}
	}
	go loop()
	<-finished
	return nil
}

// literalIngestAll is the one subject INGEST stores that no consumer reads:
// a client allowed edi.ingest.> may publish to it literally; the stream's
// subject edi.ingest.* takes it, the partition transform cannot map a
// wildcard, and every consumer filter that selects it selects all of INGEST.
const literalIngestAll = "edi.ingest.>"

// sweepLiteralIngestAll dead-letters what INGEST holds under the literal
// subject edi.ingest.>, found by the stream's subject counts (the filter
// edi.ingest.* lists only the three-token subjects, never the partners').
// A headers-only scan finds the sequences, then each message is fetched by
// its sequence and handled as the stray source handles a literal
// edi.ingest.*: to the first stage's DLQ with cause unknown. The original
// is deleted afterwards (see dropLiteral), so nothing stays and the next
// sweep finds nothing.
func (h *Hub) sweepLiteralIngestAll(ctx context.Context) error {
	st, err := h.js.Stream(ctx, h.cfg.Streams.Ingest)
	if err != nil {
		return fmt.Errorf("stream %s: %w", h.cfg.Streams.Ingest, err)
	}
	info, err := st.Info(ctx, js.WithSubjectFilter(wire.IngestWildcard))
	if err != nil {
		return fmt.Errorf("subjects of %s: %w", h.cfg.Streams.Ingest, err)
	}
	want := info.State.Subjects[literalIngestAll]
	if want == 0 {
		return nil
	}
	seqs, err := ejs.LiteralSeqs(ctx, st, literalIngestAll, want)
	if err != nil {
		return err
	}
	w := h.exec.newWatchdog()
	defer w.close()
	for _, seq := range seqs {
		if err := h.sweepOne(ctx, st, seq, w); err != nil {
			return err
		}
	}
	return nil
}

// sweepOne hands the message at seq to process as a stray, through a
// consumer of its own that starts there.
func (h *Hub) sweepOne(ctx context.Context, st js.Stream, seq uint64, w *watchdog) error {
	c, err := st.CreateConsumer(ctx, js.ConsumerConfig{
		Description:   "edihub: dead-letter a message stored under the literal edi.ingest.>",
		FilterSubject: literalIngestAll, DeliverPolicy: js.DeliverByStartSequencePolicy, OptStartSeq: seq,
		AckPolicy: js.AckExplicitPolicy, AckWait: h.cfg.Attempts.AckWait, MaxAckPending: 1, InactiveThreshold: time.Minute,
	})
	if err != nil {
		return fmt.Errorf("consumer for %s:%d: %w", h.cfg.Streams.Ingest, seq, err)
	}
	defer func() { _ = st.DeleteConsumer(context.WithoutCancel(ctx), c.CachedInfo().Name) }()
	m, err := c.Next(js.FetchMaxWait(5 * time.Second))
	if err != nil {
		return fmt.Errorf("fetch %s:%d: %w", h.cfg.Streams.Ingest, seq, err)
	}
	if md, err := m.Metadata(); err != nil || md.Sequence.Stream != seq || m.Subject() != literalIngestAll {
		return nil // deleted meanwhile (dead-lettered by the stray source)
	}
	s := &source{h: h, name: "ingest-sweep", cons: c, partition: -1, stage: h.stages[0].Name, stray: true}
	h.process(s, w, m, func() {})
	return nil
}

// dropLiteral deletes a message stored under literalIngestAll once it is
// dead-lettered (the stray source may also get one, when it was stored
// while the source was reading live): left in INGEST, the sweep would find
// it again. When the hub stops first, the copy may not be stored, and the
// original stays for the next sweep (whose copy the DLQ deduplicates).
func (h *Hub) dropLiteral(s *source, msg js.Msg, md *js.MsgMetadata) {
	if !s.stray || msg.Subject() != literalIngestAll || h.runCtx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(h.runCtx, 10*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, md.Stream)
	if err == nil {
		err = st.DeleteMsg(ctx, md.Sequence.Stream)
	}
	if err != nil {
		h.log.Warn().Err(err).Uint64("seq", md.Sequence.Stream).Msg("could not delete a dead-lettered edi.ingest.> message; the next sweep copies it again (deduplicated)")
	}
}
