package hub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edihub/edihub/hub/lanes"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// source is one consumer the hub works: a partition of INGEST, or the due
// retries of one stage.
type source struct {
	h         *Hub
	name      string
	cons      js.Consumer
	partition int    // -1 for retry sources
	stage     string // retry sources: the stage they retry
	slot      int    // its first row in the in-flight table (one per worker)
	stray     bool   // INGEST messages no partition reads (see straySource)
	// workers run messages of different partners side by side; window is
	// the consumer's MaxAckPending (how many it has out at once); lanes
	// are what is in hand (see pull).
	workers, window int
	lanes           *lanes.Lanes
	parked          *parks           // a partition's paused and spilled partners out of its window (parking.go); nil: not a partition
	heldG, runningG prometheus.Gauge // edihub_partition_in_flight_messages (partitions only)
	gaugeMu         sync.Mutex
	// pinID is the server's pin of this instance on the partition, and
	// partners those seen since (see notePin).
	pinID    string
	partners map[string]struct{}
	// pinNow is pinID for the goroutine that re-fetches late heads
	// (refetch.go): pinID belongs to the pulling one.
	pinNow atomic.Value
	// pulledOn is the connection's reconnect count the pull last saw, and
	// pullDied says its heartbeats stopped since: a delivery sent before
	// may be lost (see take). Both belong to the pulling goroutine.
	pulledOn uint64
	pullDied bool
}

// currentPin is the pin id this instance last got on the partition.
func (s *source) currentPin() string {
	p, _ := s.pinNow.Load().(string)
	return p
}

func (h *Hub) partitionSource(ctx context.Context, p int) (*source, error) {
	cfg := h.partitionConsumer(p)
	c, err := h.js.CreateOrUpdateConsumer(ctx, h.cfg.Streams.Ingest, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	held, running := h.met.InFlightOf(strconv.Itoa(p))
	return &source{h: h, name: cfg.Durable, cons: c, partition: p, slot: p * h.cfg.PartitionConcurrency,
		workers: h.cfg.PartitionConcurrency, window: cfg.MaxAckPending, partners: map[string]struct{}{},
		heldG: held, runningG: running}, nil
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
	return &source{h: h, name: cfg.Durable, cons: c, partition: -1, stage: h.stages[0].Name, stray: true, workers: 1, window: 1}, nil
}

func (h *Hub) retrySource(ctx context.Context, stage string, slot int) (*source, error) {
	cfg := h.retryConsumer(stage)
	c, err := h.js.CreateOrUpdateConsumer(ctx, h.cfg.Streams.Retry, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Durable, err)
	}
	return &source{h: h, name: cfg.Durable, cons: c, partition: -1, stage: stage, slot: slot, workers: 1, window: 1}, nil
}

// pullBatch is the least pull request size of every source, maxPullBatch
// the most (a larger window is filled by the client pulling again as it
// goes); pullExpiry is how long a pull request waits at the server.
// pullHeartbeat is how often the server says a waiting request is still
// there: after two missed the client pulls again. A request lost with a
// consumer leader (moved by an election) is so noticed within 2 s instead
// of nats.go's default of expiry/2 twice over (5 s); a beat per waiting
// request a second is little for the server.
const (
	pullBatch     = 16
	maxPullBatch  = 1024
	pullExpiry    = 5 * time.Second
	pullHeartbeat = time.Second
)

// run works the source until ctx is done: a partition shared with other
// instances only while this one is its preferred owner (runOwned).
func (s *source) run(ctx context.Context) error {
	if s.partition >= 0 && s.h.owners != nil && s.h.cfg.Cluster.IsPinned() {
		return s.runOwned(ctx)
	}
	return s.pull(ctx, nil)
}

// pull pulls messages into the source's lanes and runs them on its workers
// until ctx is done or yield says to stop; what is in hand is finished
// first. Each worker runs on its own goroutine so that a handler that
// overruns its deadline can be left behind: the timeout path starts a
// new worker in its place (same slot of the in-flight table).
func (s *source) pull(ctx context.Context, yield func() bool) error {
	// A pull for more than is out at a time keeps a request waiting at the
	// server, which hands over the next message as soon as an ack frees
	// room, without a new pull round trip (a pull of 1 also stalled now
	// and then until the request expired).
	batch := min(max(s.window, pullBatch), maxPullBatch)
	opts := []js.PullMessagesOpt{js.PullMaxMessages(batch), js.PullExpiry(pullExpiry), js.PullHeartbeat(pullHeartbeat)}
	if s.partition >= 0 {
		opts = s.h.cfg.Cluster.PullOptions(wire.PartitionGroup, opts...)
	}
	depth := 1
	if s.partition >= 0 {
		depth = pipelineDepth(s.h.cfg.PartnerPipeline, s.workers)
	}
	ln := lanes.New(depth)
	s.lanes, s.parked = ln, nil
	if b := s.h.bulk; b != nil && s.partition >= 0 {
		b.attach(ln)
		defer b.detach(ln)
	}
	s.armBarrier(ctx)
	if s.partition >= 0 {
		pk, err := s.openParks(ctx, ln, s.h.bulk)
		if err != nil {
			return err
		}
		s.parked = pk
		defer pk.stop()
		ln.SetPaused(pk.holdsLane) // set before anything is pulled or run
	}
	s.pulledOn, s.pullDied = s.reconnects(), false
	it, err := s.cons.Messages(opts...)
	if err != nil {
		return fmt.Errorf("pull from %s: %w", s.name, err)
	}
	// Drain, not Stop: a message already handed to this client is processed
	// rather than left to time out, which would count as a crash.
	stop := context.AfterFunc(ctx, it.Drain)
	defer stop()
	finished := make(chan struct{})
	defer close(finished)
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
	go s.keepHeld(ln, s.parked, finished)
	var workers sync.WaitGroup
	for i := 0; i < s.workers; i++ {
		workers.Add(1)
		go s.work(ln, s.slot+i, &workers)
	}
	for {
		msg, err := it.Next()
		if err != nil {
			if errors.Is(err, js.ErrMsgIteratorClosed) || errors.Is(err, nats.ErrConnectionClosed) || ctx.Err() != nil {
				break
			}
			s.h.log.Warn().Err(err).Str("consumer", s.name).Msg("pull failed; retrying")
			if errors.Is(err, js.ErrNoHeartbeat) {
				ln.Lost(time.Now()) // what was sent since may be lost with the pull
				s.pullDied = true
			}
			time.Sleep(100 * time.Millisecond) // no hot loop while the server is away
			continue
		}
		s.take(ctx, ln, msg)
	}
	s.parked.stop()
	ln.Close()
	workers.Wait()
	s.gauge(ln)
	return nil
}

// take puts a pulled message in its partner's lane.
func (s *source) take(ctx context.Context, ln *lanes.Lanes, msg js.Msg) {
	md, err := msg.Metadata()
	if err != nil { // not a JetStream message: cannot happen on a pull consumer
		s.h.log.Error().Err(err).Str("consumer", s.name).Msg("message without metadata")
		return
	}
	partner := ""
	if s.partition >= 0 {
		if r := s.reconnects(); r != s.pulledOn || s.pullDied {
			// deliveries sent on the old connection (or to the pull that
			// died) may be lost: the server hands those back only when
			// their ack wait runs out, and a partner's later message,
			// delivered now, would run before its earlier one. Hold the
			// lanes until what the consumer has out is back in hand
			// (nothing is held when nothing was lost).
			s.pulledOn, s.pullDied = r, false
			if s.armBarrier(ctx) {
				s.h.log.Warn().Str("consumer", s.name).Dur("at_most_ms", s.barrierFor()).
					Msg("the connection to NATS was replaced and some messages out were not received: the partition waits until the server hands them back (their ack wait), so that no partner's later message runs first")
			}
		}
		_, partner, _ = wire.ParseIngestSubject(msg.Subject())
		if s.notePin(wire.PinID(msg.Headers()), partner) {
			// another instance may have had this partition's messages out:
			// hold the lanes until they are back in hand, and take the
			// parks it made since this pull began
			s.armBarrier(ctx)
			s.parked.refind(ctx)
		}
	}
	if s.parked.skip(partner, md.Sequence.Stream, msg) {
		return // its park consumer has it
	}
	ln.Add(msg, md.Sequence.Stream, partner, len(msg.Data()), md.NumDelivered > 1, time.Now())
	s.parked.added(partner)
}

// work runs the heads of the lanes, one at a time, in one slot of the
// in-flight table. When a handler overruns its deadline, the timeout path
// settles its message and starts a new worker in this one's place (which
// takes over its share of wg); this one returns when the handler does.
func (s *source) work(ln *lanes.Lanes, slot int, wg *sync.WaitGroup) {
	w := s.h.exec.newWatchdog()
	for {
		m := ln.Next()
		if m == nil {
			w.close()
			wg.Done()
			return
		}
		var once sync.Once
		finish := func(d *delivery) {
			once.Do(func() {
				if d != nil && d.discarded {
					s.h.met.PipelineDiscarded.Inc()
					ln.PutBack(m, time.Now())
					s.gauge(ln)
					return
				}
				stays, dueIn := d.staysFor(s.h.cfg.Attempts)
				now := time.Now()
				if again := ln.Done(m, stays, dueIn, now); again != nil {
					_ = again.Ack() // redelivered while it ran, and settled by the run
				}
				if stays {
					ln.ExpectBack(m, time.Duration(d.stayDelay.Load()), now)
				}
				s.gauge(ln)
			})
		}
		s.gauge(ln)
		var turn *lanes.Turn // nil without a pipeline: nothing runs ahead
		if ln.Depth() > 1 {
			turn = ln.Turn(m, s.h.exec.heartbeat)
		}
		d, ok := s.h.process(s, slot, w, m.Msg(), turn, func(d *delivery) {
			finish(d)
			go s.work(ln, slot, wg)
		})
		if !ok {
			return // a replacement worker has taken over
		}
		finish(d)
	}
}

// gauge exposes what a partition has in hand.
func (s *source) gauge(ln *lanes.Lanes) {
	if s.partition < 0 {
		return
	}
	// read and set as one: workers and park drains update it at once, and
	// an older reading set last would stay
	s.gaugeMu.Lock()
	defer s.gaugeMu.Unlock()
	held, running, _ := ln.InHand()
	s.heldG.Set(float64(held))
	s.runningG.Set(float64(running))
}

// keepHeld sends progress for the messages waiting in the lanes (a
// running one's comes from its watchdog), asks again for nak'd heads that
// are late (refetch.go), releases lanes whose nak'd head did not come
// back, lifts the barrier once what the consumer had out is back in hand,
// and parks the paused partners still in hand.
func (s *source) keepHeld(ln *lanes.Lanes, pk *parks, finished <-chan struct{}) {
	every := s.h.exec.heartbeat / 2
	t := time.NewTicker(min(every, barrierPoll))
	defer t.Stop()
	reconnects := s.reconnects()
	for {
		select {
		case <-finished:
			return
		case now := <-t.C:
			if r := s.reconnects(); r != reconnects {
				reconnects = r
				ln.Lost(now) // a nak or redelivery sent on the old connection may be lost
			}
			s.refetch(ln, now)
			beat, overdue, lifted := ln.Due(now, s.h.exec.heartbeat)
			for _, m := range beat {
				_ = m.Msg().InProgress()
			}
			if overdue > 0 {
				s.h.log.Warn().Str("consumer", s.name).Int("lanes", overdue).
					Msg("a message retried in place did not come back (deleted from the stream?); its partner's next messages run")
			}
			if lifted {
				s.h.log.Warn().Str("consumer", s.name).
					Msg("not every message out before the start came back in time; the partition runs on (a late one runs when it comes)")
			}
			if _, _, barrier := ln.InHand(); barrier {
				s.liftIfAllInHand(ln)
			}
			pk.parkHeld()
		}
	}
}

// barrierPoll is how often a held barrier asks the server what is out.
// infoTry is how long one such question may wait: a consumer whose leader
// is being elected answers nothing, and the pull (armBarrier) and the
// progress of the messages in hand (keepHeld) must not wait with it; the
// barrier stays up and the next poll asks again. A new leader answers
// within a try (5 s, as before, held the pull and every message's progress
// through an election).
const (
	barrierPoll = 200 * time.Millisecond
	infoTry     = time.Second
)

// armBarrier holds the lanes of a partition consumer with several
// messages out until those the consumer had out before this process (or
// this pin) started are back in hand (lanes.Arm).
// It reports whether the lanes are held (something out is not in hand).
func (s *source) armBarrier(ctx context.Context) (armed bool) {
	if s.partition < 0 || s.window <= 1 {
		return false // one message out at a time: the server keeps the order
	}
	ictx, cancel := context.WithTimeout(ctx, infoTry)
	defer cancel()
	info, err := s.cons.Info(ictx)
	if err != nil {
		s.h.log.Warn().Err(err).Str("consumer", s.name).Msg("consumer info unreadable; holding the partition until the server says what is out is in hand (asked again every 200 ms), at most one redelivery period")
		return s.lanes.Arm(^uint64(0), 1<<30, time.Now().Add(s.barrierFor()), s.parked.owned())
	}
	return s.lanes.Arm(info.Delivered.Stream, info.NumAckPending, time.Now().Add(s.barrierFor()), s.parked.owned())
}

// barrierFor is the longest a message out before can take to come back:
// a nak's longest delay, then its ack wait.
func (s *source) barrierFor() time.Duration {
	a := s.h.cfg.Attempts
	return max(a.BackoffMax, 5*time.Second) + 2*a.AckWait
}

func (s *source) liftIfAllInHand(ln *lanes.Lanes) {
	ctx, cancel := context.WithTimeout(s.h.runCtx, infoTry)
	defer cancel()
	info, err := s.cons.Info(ctx)
	if err == nil && ln.LiftIfAllInHand(info.NumAckPending) {
		s.h.log.Debug().Str("consumer", s.name).Msg("what was out before is back in hand; the partition runs")
	}
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
	s := &source{h: h, name: "ingest-sweep", cons: c, partition: -1, stage: h.stages[0].Name, stray: true, workers: 1, window: 1}
	h.process(s, 0, w, m, nil, func(*delivery) {})
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
