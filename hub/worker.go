package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// that selects it selects all of INGEST; the NATS permissions keep
// partners to their own edi.ingest.<id>.)
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
		opts = s.h.pullOptions()
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
