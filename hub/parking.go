package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// parks is one partition's parked partners. A paused partner's messages
// must not stay out of the partition consumer: every message it has out
// counts against partition_max_in_flight until it is acked (a nak, with
// or without a delay, keeps it out), so a paused partner that keeps
// sending would fill the window and its neighbours would wait again.
// So a paused partner is parked: a durable consumer of its subject alone
// (park-p<partition>-<hash>) is created at its earliest unsettled message,
// and only then are its messages acked off the partition consumer, which
// from then on acks every one of them it is handed (they stay in INGEST,
// which keeps what is acked). The park consumer is the parked state: it
// outlives the process and is found again at the next pull. On resume its
// messages are pulled one at a time (MaxAckPending 1: the server keeps
// their order, whoever pulls) into the partner's lane and run as any
// other; once it has nothing more, the partition consumer takes the
// partner back and the park consumer is deleted. A parked message is
// delivered afresh by its park consumer: no attempt is charged for the
// wait, and it is no suspect.
type parks struct {
	s      *source
	ln     *lanes
	b      *bulkhead
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	by      map[string]*park
	done    map[string][2]uint64 // the last drained range: the partition consumer's late copies are acked
	retryAt map[string]time.Time
	stopped bool
}

// park is one parked partner.
type park struct {
	partner  string
	from     uint64 // its first parked stream sequence
	name     string
	cons     js.Consumer
	draining bool
}

// parkPrefix names the park consumers of partition p.
func parkPrefix(p int) string { return "park-p" + strconv.Itoa(p) + "-" }

func parkName(p int, partner string) string {
	sum := sha256.Sum256([]byte(partner))
	return parkPrefix(p) + hex.EncodeToString(sum[:8])
}

// openParks finds the partition's park consumers (a partner parked before
// this pull) and drains those whose partner is not paused. b is nil when
// the bulkhead is off: parks left from before drain, none is taken.
func (s *source) openParks(ctx context.Context, ln *lanes, b *bulkhead) (*parks, error) {
	pctx, cancel := context.WithCancel(ctx)
	pk := &parks{s: s, ln: ln, b: b, ctx: pctx, cancel: cancel,
		by: map[string]*park{}, done: map[string][2]uint64{}, retryAt: map[string]time.Time{}}
	lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
	defer lcancel()
	st, err := s.h.js.Stream(lctx, s.h.cfg.Streams.Ingest)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("parked partners of %s: %w", s.name, err)
	}
	list := st.ListConsumers(lctx)
	for info := range list.Info() {
		if !strings.HasPrefix(info.Name, parkPrefix(s.partition)) {
			continue
		}
		p, partner, ok := wire.ParseIngestSubject(info.Config.FilterSubject)
		if !ok || p != s.partition {
			continue
		}
		c, err := st.Consumer(lctx, info.Name)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("park consumer %s: %w", info.Name, err)
		}
		pk.by[partner] = &park{partner: partner, from: info.Config.OptStartSeq, name: info.Name, cons: c}
	}
	if err := list.Err(); err != nil {
		cancel()
		return nil, fmt.Errorf("parked partners of %s: %w", s.name, err)
	}
	if b != nil {
		b.attachParks(pk)
		b.met.Parked(len(pk.by))
	}
	for partner := range pk.by {
		pk.wake(partner)
	}
	return pk, nil
}

// skip acks a message the partition consumer handed over that its
// partner's park consumer has (or had, and ran): it reports whether msg
// was one.
func (pk *parks) skip(partner string, seq uint64, msg js.Msg) bool {
	if pk == nil {
		return false
	}
	pk.mu.Lock()
	p := pk.by[partner]
	d := pk.done[partner]
	skip := p != nil && seq >= p.from || seq >= d[0] && seq <= d[1]
	pk.mu.Unlock()
	if skip {
		_ = msg.Ack() // a lost ack: handed over again, and acked again
	}
	return skip
}

// added parks partner if it is paused and has messages in the lanes; the
// lanes must hold every message the consumer had out before (no barrier),
// or an earlier one could come back after the park was taken.
func (pk *parks) added(partner string) {
	if pk == nil || !pk.paused(partner) {
		return
	}
	if _, _, barrier := pk.ln.held(); barrier {
		return // parkHeld takes it once the barrier is down
	}
	pk.park(partner)
}

// parkHeld parks the paused partners with messages in the lanes (those
// that came while a barrier was up).
func (pk *parks) parkHeld() {
	if pk == nil {
		return
	}
	if _, _, barrier := pk.ln.held(); barrier {
		return
	}
	for _, partner := range pk.ln.queuedPartners() {
		if pk.paused(partner) {
			pk.park(partner)
		}
	}
}

// parkRetry is how long after a park consumer could not be created the
// next try is.
const parkRetry = time.Second

// park creates partner's park consumer at its earliest unsettled message,
// then acks its messages in the lanes: until the consumer is stored,
// nothing of the partner is acked.
func (pk *parks) park(partner string) {
	pk.mu.Lock()
	if pk.by[partner] != nil || pk.stopped || time.Now().Before(pk.retryAt[partner]) {
		pk.mu.Unlock()
		return
	}
	pk.mu.Unlock()
	from, ok := pk.ln.lowest(partner)
	if !ok {
		return
	}
	cons, from, err := pk.create(partner, from)
	if err != nil {
		pk.mu.Lock()
		pk.retryAt[partner] = time.Now().Add(parkRetry)
		pk.mu.Unlock()
		pk.s.h.log.Error().Err(err).Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).
			Msg("paused partner not parked; its messages wait in hand (counted in the partition's window) and parking is tried again")
		return
	}
	pk.mu.Lock()
	pk.by[partner] = &park{partner: partner, from: from, name: parkName(pk.s.partition, partner), cons: cons}
	pk.mu.Unlock()
	pk.b.met.Parked(1) // park runs only with a bulkhead: a partner is paused
	dropped := pk.ln.drop(partner, from)
	for _, m := range dropped {
		_ = m.msg.Ack()
	}
	pk.s.gauge(pk.ln)
	pk.s.h.log.Info().Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).Uint64("from", from).Int("in_hand", len(dropped)).
		Msg("paused partner parked: its messages wait in INGEST, out of the partition's window, until it is resumed")
	if !pk.paused(partner) {
		pk.wake(partner) // resumed meanwhile: no wake came for a park not yet taken
	}
}

func (pk *parks) create(partner string, from uint64) (js.Consumer, uint64, error) {
	h := pk.s.h
	ctx, cancel := context.WithTimeout(pk.ctx, 10*time.Second)
	defer cancel()
	cfg := js.ConsumerConfig{
		Durable:       parkName(pk.s.partition, partner),
		Description:   fmt.Sprintf("edihub: partner %s paused; its messages wait here until resumed", escape.Line(partner)),
		FilterSubject: wire.IngestStoredSubject(pk.s.partition, partner),
		DeliverPolicy: js.DeliverByStartSequencePolicy, OptStartSeq: from,
		AckPolicy: js.AckExplicitPolicy, AckWait: h.cfg.Attempts.AckWait, MaxAckPending: 1, MaxDeliver: -1,
	}
	c, err := h.js.CreateConsumer(ctx, h.cfg.Streams.Ingest, cfg)
	if errors.Is(err, js.ErrConsumerExists) {
		// Another instance parked the partner while it held the partition
		// (views that disagreed), or a drain's delete failed: that park is
		// kept, from where it starts — never a park from later, which
		// would leave what that one has acked unread. (One left by a drain
		// hands over what ran already again: the ledger drops those.)
		if c, err = h.js.Consumer(ctx, h.cfg.Streams.Ingest, cfg.Durable); err == nil {
			from = c.CachedInfo().Config.OptStartSeq
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("park consumer %s: %w", cfg.Durable, err)
	}
	return c, from, nil
}

// wake starts draining partner's park consumer (its pause was lifted).
func (pk *parks) wake(partner string) {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	p := pk.by[partner]
	if p == nil || p.draining || pk.stopped {
		return
	}
	p.draining = true
	pk.wg.Add(1)
	go pk.drain(p)
}

// drainPoll is how long a drain waits for its next message before asking
// whether the park consumer is empty, and how often a drain whose partner
// is paused again (or whose lanes are behind a barrier) looks again.
const drainPoll = time.Second

// drain hands the park consumer's messages to the partner's lane, one at
// a time, until it has none left.
func (pk *parks) drain(p *park) {
	defer pk.wg.Done()
	log := pk.s.h.log.With().Str("partner", escape.Line(p.partner)).Str("consumer", p.name).Logger()
	log.Info().Uint64("from", p.from).Msg("resumed partner: its parked messages run, in order")
	for pk.ctx.Err() == nil {
		_, _, barrier := pk.ln.held()
		if barrier || pk.paused(p.partner) { // paused again: the one in hand waits, with progress
			pk.wait(drainPoll / 5)
			continue
		}
		msg, err := p.cons.Next(js.FetchMaxWait(drainPoll))
		if err == nil {
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			pk.ln.addDelivery(msg, md.Sequence.Stream, p.partner, len(msg.Data()), md.NumDelivered > 1, time.Now())
			pk.s.gauge(pk.ln)
			continue
		}
		if !errors.Is(err, nats.ErrTimeout) {
			if pk.ctx.Err() == nil {
				log.Warn().Err(err).Msg("pull from a park consumer failed; retrying")
				pk.wait(drainPoll)
			}
			continue
		}
		if pk.handover(p) {
			log.Info().Msg("parked messages all ran; the partition takes the partner back")
			return
		}
	}
}

// handover ends a park whose consumer has nothing more, none out: the
// partition consumer runs the partner's messages again. It holds mu while
// it asks, so that no message of the partner is skipped on the partition
// consumer between the answer and the end of the park: a skipped message
// is in the stream, so the park consumer still counts it.
func (pk *parks) handover(p *park) bool {
	ctx, cancel := context.WithTimeout(pk.ctx, 10*time.Second)
	defer cancel()
	empty := func() (*js.ConsumerInfo, bool) {
		info, err := p.cons.Info(ctx)
		return info, err == nil && info.NumPending == 0 && info.NumAckPending == 0
	}
	if _, ok := empty(); !ok { // asked first without the lock: the pull goes on meanwhile
		return false
	}
	pk.mu.Lock()
	defer pk.mu.Unlock()
	info, ok := empty()
	if !ok {
		return false
	}
	pk.done[p.partner] = [2]uint64{p.from, info.Delivered.Stream}
	delete(pk.by, p.partner)
	p.draining = false
	if pk.b != nil {
		pk.b.met.Parked(-1)
	}
	if err := pk.s.h.js.DeleteConsumer(ctx, pk.s.h.cfg.Streams.Ingest, p.name); err != nil && !errors.Is(err, js.ErrConsumerNotFound) {
		// A park consumer left over is found at the next pull and drained:
		// it has nothing, so it ends there.
		pk.s.h.log.Warn().Err(err).Str("consumer", p.name).Msg("drained park consumer not deleted; the next start ends it")
	}
	return true
}

// parked is how many partners of the partition are parked.
func (pk *parks) parked() int {
	if pk == nil {
		return 0
	}
	pk.mu.Lock()
	defer pk.mu.Unlock()
	return len(pk.by)
}

func (pk *parks) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pk.ctx.Done():
	case <-t.C:
	}
}

// stop ends the drains (before the lanes close: a drain adds to them).
func (pk *parks) stop() {
	if pk == nil {
		return
	}
	pk.mu.Lock()
	was := pk.stopped
	pk.stopped = true
	pk.mu.Unlock()
	pk.cancel()
	pk.wg.Wait()
	if !was && pk.b != nil {
		pk.b.detachParks(pk)
		pk.b.met.Parked(-pk.parked())
	}
}

// paused is the bulkhead's answer (none without a bulkhead: a park left
// from when it was on drains).
func (pk *parks) paused(partner string) bool { return pk.b != nil && pk.b.isPaused(partner) }

// leftParks lists the partitions with a park consumer left in INGEST: with
// the bulkhead off they are drained all the same (their messages were
// acked off the partition consumer).
func (h *Hub) leftParks(ctx context.Context) (map[int]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, h.cfg.Streams.Ingest)
	if err != nil {
		return nil, fmt.Errorf("park consumers: %w", err)
	}
	out := map[int]bool{}
	names := st.ConsumerNames(ctx)
	for n := range names.Name() {
		for p := 0; p < h.cfg.Partitions; p++ {
			if strings.HasPrefix(n, parkPrefix(p)) {
				out[p] = true
			}
		}
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("park consumers: %w", err)
	}
	return out, nil
}
