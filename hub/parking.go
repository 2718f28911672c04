package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/lanes"
	"github.com/edihub/edihub/wire"
)

// parks is one partition's parked partners: paused ones (the bulkhead)
// and spilled ones (over hub.partner_max_in_flight, spill.go). A paused
// partner's messages must not stay out of the partition consumer: every
// message it has out counts against partition_max_in_flight until it is
// acked (a nak, with or without a delay, keeps it out), so a paused
// partner that keeps sending would fill the window and its neighbours
// would wait again; a flooding one would fill it all the same.
// So such a partner is parked: a durable consumer of its subject alone
// (park-p<partition>-<hash>) is created at its earliest unsettled message,
// and only then are its messages acked off the partition consumer, which
// from then on acks every one of them it is handed (they stay in INGEST,
// which keeps what is acked). The park consumer is the parked state: it
// outlives the process and is found again at the next pull. On resume (a
// spilled partner: at once) its messages are fetched into the partner's
// lane, up to partner_max_in_flight at a time (the consumer's
// MaxAckPending), and run as any other, in order; a drain that starts
// while the park consumer has messages out from before holds them until
// those are back (lanes.DrainHold). Once it has nothing more, the partition
// consumer takes the partner back and the park consumer is deleted. A
// parked message is delivered afresh by its park consumer: no attempt is
// charged for the wait, and it is no suspect.
type parks struct {
	s      *source
	ln     *lanes.Lanes
	b      *bulkhead
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// spillAt is the partition's per-partner bound (0: none spills), batch
	// how many of a partner's messages a drain has out at once.
	spillAt, batch int

	// parking are the partners whose park is being taken: their lanes
	// are not taken meanwhile (a head taken between lowest and drop
	// would run here and again from the park).
	parkingMu sync.Mutex
	parking   map[string]bool

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
	spill    bool // spilled (over the bound), not paused: counted apart
	// group is the park consumer's priority group when it is pinned
	// (hub.cluster.pinned: one instance drains it at a time, parkpin),
	// pinID the server's pin of this instance on it (the drain's).
	group, pinID string
}

// parkKind is the park consumers' metadata key that says why a partner
// was parked (parkSpill or parkPause): a restart counts it where it was.
const (
	parkKind  = "edihub-park"
	parkSpill = "spill"
	parkPause = "pause"
)

// parkPrefix names the park consumers of partition p.
func parkPrefix(p int) string { return "park-p" + strconv.Itoa(p) + "-" }

func parkName(p int, partner string) string {
	sum := sha256.Sum256([]byte(partner))
	return parkPrefix(p) + hex.EncodeToString(sum[:8])
}

// openParks finds the partition's park consumers (a partner parked before
// this pull) and drains those whose partner is not paused. b is nil when
// the bulkhead is off: parks left from before drain, only spills are
// taken.
func (s *source) openParks(ctx context.Context, ln *lanes.Lanes, b *bulkhead) (*parks, error) {
	pctx, cancel := context.WithCancel(ctx)
	pk := &parks{s: s, ln: ln, b: b, ctx: pctx, cancel: cancel,
		spillAt: spillBound(s.h.cfg.PartnerMaxInFlight, s.window), batch: max(1, s.h.cfg.PartnerMaxInFlight),
		by: map[string]*park{}, done: map[string][2]uint64{}, retryAt: map[string]time.Time{}, parking: map[string]bool{}}
	found, err := pk.find(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if b != nil {
		b.attachParks(pk)
	}
	for _, partner := range found {
		pk.wake(partner)
	}
	return pk, nil
}

// find takes the partition's park consumers it does not know yet: those
// of partners parked before this pull, and (refind) those the instance
// the partition came from made after this pull began. It returns their
// partners, to wake.
func (pk *parks) find(ctx context.Context) ([]string, error) {
	s := pk.s
	lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
	defer lcancel()
	st, err := s.h.js.Stream(lctx, s.h.cfg.Streams.Ingest)
	if err != nil {
		return nil, fmt.Errorf("parked partners of %s: %w", s.name, err)
	}
	known := func(partner string, from uint64) bool {
		pk.mu.Lock()
		defer pk.mu.Unlock()
		d, drained := pk.done[partner]
		// one just drained here may still be listed while it is deleted
		return pk.by[partner] != nil || pk.stopped || drained && d[0] == from
	}
	var found []string
	// the names, then each park's own info: on a cluster the server holds
	// a list of every consumer's info up to 4 s while one of them does not
	// answer (a consumer just made, without a leader yet), and leaves such
	// a one out (bench --replicas 3: partitions started 4 s apart)
	names := st.ConsumerNames(lctx)
	for name := range names.Name() {
		if !strings.HasPrefix(name, parkPrefix(s.partition)) || pk.holds(name) {
			continue // a park held here needs no info (a new pin lists them again)
		}
		c, err := st.Consumer(lctx, name)
		if errors.Is(err, js.ErrConsumerNotFound) {
			continue // drained and deleted meanwhile
		}
		if err != nil {
			return found, fmt.Errorf("park consumer %s: %w", name, err)
		}
		info := c.CachedInfo()
		p, partner, ok := wire.ParseIngestSubject(info.Config.FilterSubject)
		if !ok || p != s.partition || known(partner, info.Config.OptStartSeq) {
			continue
		}
		pp := &park{partner: partner, from: info.Config.OptStartSeq, name: name, cons: c, spill: info.Config.Metadata[parkKind] == parkSpill,
			group: parkGroup(info.Config)}
		pk.mu.Lock()
		if pk.by[partner] == nil && !pk.stopped {
			pk.by[partner] = pp
			pk.count(pp, 1)
			found = append(found, partner)
		}
		pk.mu.Unlock()
	}
	if err := names.Err(); err != nil {
		return found, fmt.Errorf("parked partners of %s: %w", s.name, err)
	}
	return found, nil
}

// refind takes the park consumers made since this pull began by the
// instance the partition came from (called when the server pins the
// partition to this one: that instance has stopped pulling, and parks
// only while it pulls). Not taken, such a park's partner would run here
// from the partition consumer past the messages its park holds.
func (pk *parks) refind(ctx context.Context) {
	if pk == nil {
		return
	}
	found, err := pk.find(ctx)
	if err != nil {
		pk.s.h.log.Warn().Err(err).Str("consumer", pk.s.name).Msg("park consumers not listed after the partition moved here; a park made meanwhile is found at the next pull")
	}
	for _, partner := range found {
		pk.s.h.log.Info().Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).Msg("park consumer made by the partition's previous owner taken over")
		pk.wake(partner)
	}
}

// holds says whether a park consumer of this name is held here.
func (pk *parks) holds(name string) bool {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	for _, p := range pk.by {
		if p.name == name {
			return true
		}
	}
	return false
}

// skip acks a message the partition consumer handed over that its
// partner's park consumer has (or had, and ran): it reports whether msg
// was one.
func (pk *parks) skip(partner string, seq uint64, msg js.Msg) bool {
	if pk == nil {
		return false
	}
	pk.mu.Lock()
	skip := pk.hasLocked(partner, seq)
	pk.mu.Unlock()
	if skip {
		_ = msg.Ack() // a lost ack: handed over again, and acked again
	}
	return skip
}

// hasLocked says whether partner's message seq is a park consumer's (its
// park's, or one it drained: the partition's copy is late); pk.mu is held.
func (pk *parks) hasLocked(partner string, seq uint64) bool {
	p := pk.by[partner]
	var from uint64
	if p != nil {
		from = p.from
	}
	return parkHas(from, p != nil, pk.done[partner], seq)
}

// parkHas is the one rule of what a park consumer has of a partner: from
// from on while it is parked, and the range done it drained.
func parkHas(from uint64, parked bool, done [2]uint64, seq uint64) bool {
	return parked && seq >= from || seq >= done[0] && seq <= done[1]
}

// owned is hasLocked as it is now, for the lanes' barrier (lanes.Arm),
// which counts only what the partition consumer handed out; nil: no parks.
func (pk *parks) owned() func(partner string, seq uint64) bool {
	if pk == nil {
		return nil
	}
	pk.mu.Lock()
	defer pk.mu.Unlock()
	from := make(map[string]uint64, len(pk.by))
	for k, p := range pk.by {
		from[k] = p.from
	}
	done := maps.Clone(pk.done)
	return func(partner string, seq uint64) bool {
		f, parked := from[partner]
		return parkHas(f, parked, done[partner], seq)
	}
}

// count adds n to the parked partners' gauge p counts in.
func (pk *parks) count(p *park, n int) {
	switch {
	case p.spill:
		pk.s.h.met.Spilled.Add(float64(n))
	case pk.b != nil:
		pk.b.met.Parked(n)
	}
}

// added parks partner if it is paused or over the per-partner bound, and
// has messages in the lanes; the lanes must hold every message the
// consumer had out before (no barrier), or an earlier one could come back
// after the park was taken.
func (pk *parks) added(partner string) {
	if pk == nil {
		return
	}
	paused := pk.paused(partner)
	if !paused && !spills(pk.ln.Holds(partner), pk.spillAt) {
		return
	}
	if _, _, barrier := pk.ln.InHand(); barrier {
		return // parkHeld takes it once the barrier is down
	}
	pk.park(partner, !paused)
}

// parkHeld parks the paused partners with messages in the lanes, and
// those over the bound (those that came while a barrier was up).
func (pk *parks) parkHeld() {
	if pk == nil {
		return
	}
	if _, _, barrier := pk.ln.InHand(); barrier {
		return
	}
	for _, partner := range pk.ln.QueuedPartners() {
		switch {
		case pk.paused(partner):
			pk.park(partner, false)
		case spills(pk.ln.Holds(partner), pk.spillAt):
			pk.park(partner, true)
		}
	}
}

// parkRetry is how long after a park consumer could not be created the
// next try is.
const parkRetry = time.Second

// park creates partner's park consumer at its earliest unsettled message,
// then acks its messages in the lanes: until the consumer is stored,
// nothing of the partner is acked. spill says it is parked for holding
// too much, not for a pause.
func (pk *parks) park(partner string, spill bool) {
	pk.mu.Lock()
	if pk.by[partner] != nil || pk.stopped || time.Now().Before(pk.retryAt[partner]) {
		pk.mu.Unlock()
		return
	}
	// stop waits for a park being taken: one stored after stop counted
	// the parks would stay in the gauge
	pk.wg.Add(1)
	defer pk.wg.Done()
	pk.mu.Unlock()
	pk.holdLane(partner, true)
	defer pk.holdLane(partner, false)
	from, ok := pk.ln.Lowest(partner)
	if !ok {
		return
	}
	cons, from, spill, err := pk.create(partner, from, spill)
	if err != nil {
		pk.mu.Lock()
		pk.retryAt[partner] = time.Now().Add(parkRetry)
		pk.mu.Unlock()
		pk.s.h.log.Error().Err(err).Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).
			Bool("spill", spill).Msg("partner not parked; its messages wait in hand (counted in the partition's window) and parking is tried again")
		return
	}
	p := &park{partner: partner, from: from, name: parkName(pk.s.partition, partner), cons: cons, spill: spill,
		group: parkGroup(cons.CachedInfo().Config)}
	pk.mu.Lock()
	pk.by[partner] = p
	pk.mu.Unlock()
	pk.count(p, 1)
	if spill {
		pk.s.h.met.Spills.Inc()
	}
	dropped := pk.ln.Drop(partner, from)
	for _, m := range dropped {
		_ = m.Msg().Ack()
	}
	pk.s.gauge(pk.ln)
	if spill {
		pk.s.h.log.Info().Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).Uint64("from", from).Int("in_hand", len(dropped)).
			Int("partner_max_in_flight", pk.spillAt).Msg("partner over its share of the partition's window spilled: its messages run from a consumer of its own, in order")
	} else {
		pk.s.h.log.Info().Str("partner", escape.Line(partner)).Str("consumer", pk.s.name).Uint64("from", from).Int("in_hand", len(dropped)).
			Msg("paused partner parked: its messages wait in INGEST, out of the partition's window, until it is resumed")
	}
	if !pk.paused(partner) {
		pk.wake(partner) // resumed meanwhile: no wake came for a park not yet taken
	}
}

// holdLane holds partner's lane (on) while its park is taken, and offers
// it again (off).
func (pk *parks) holdLane(partner string, on bool) {
	pk.parkingMu.Lock()
	if on {
		pk.parking[partner] = true
	} else {
		delete(pk.parking, partner)
	}
	pk.parkingMu.Unlock()
	if !on {
		pk.ln.Wake(partner)
	}
}

// holdsLane is the lanes' question (lanes.SetPaused): may partner's lane not
// be taken now? Paused by the bulkhead, or its park being taken.
func (pk *parks) holdsLane(partner string) bool {
	if pk.paused(partner) {
		return true
	}
	pk.parkingMu.Lock()
	defer pk.parkingMu.Unlock()
	return pk.parking[partner]
}

func (pk *parks) create(partner string, from uint64, spill bool) (js.Consumer, uint64, bool, error) {
	h := pk.s.h
	ctx, cancel := context.WithTimeout(pk.ctx, 10*time.Second)
	defer cancel()
	desc, kind := fmt.Sprintf("edihub: partner %s paused; its messages wait here until resumed", escape.Line(partner)), parkPause
	if spill {
		desc, kind = fmt.Sprintf("edihub: partner %s over hub.partner_max_in_flight; its messages run from here, in order", escape.Line(partner)), parkSpill
	}
	cfg := js.ConsumerConfig{
		Durable:       parkName(pk.s.partition, partner),
		Description:   desc,
		FilterSubject: wire.IngestStoredSubject(pk.s.partition, partner),
		DeliverPolicy: js.DeliverByStartSequencePolicy, OptStartSeq: from,
		AckPolicy: js.AckExplicitPolicy, AckWait: h.cfg.Attempts.AckWait, MaxAckPending: pk.batch, MaxDeliver: -1,
		Metadata: map[string]string{parkKind: kind},
	}
	h.cfg.Cluster.Pin(&cfg, wire.PartitionGroup)
	c, err := h.js.CreateConsumer(ctx, h.cfg.Streams.Ingest, cfg)
	if errors.Is(err, js.ErrConsumerExists) {
		// Another instance parked the partner while it held the partition
		// (views that disagreed), or a drain's delete failed: that park is
		// kept, from where it starts — never a park from later, which
		// would leave what that one has acked unread. (One left by a drain
		// hands over what ran already again: the ledger drops those.)
		if c, err = h.js.Consumer(ctx, h.cfg.Streams.Ingest, cfg.Durable); err == nil {
			from, spill = c.CachedInfo().Config.OptStartSeq, c.CachedInfo().Config.Metadata[parkKind] == parkSpill
		}
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("park consumer %s: %w", cfg.Durable, err)
	}
	return c, from, spill, nil
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
	pk.count(p, -1)
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
	if was {
		return
	}
	pk.unpinParks()
	if pk.b != nil {
		pk.b.detachParks(pk)
	}
	pk.mu.Lock()
	defer pk.mu.Unlock()
	for _, p := range pk.by {
		pk.count(p, -1)
	}
}

// paused is the bulkhead's answer (none without a bulkhead: a park left
// from when it was on drains).
func (pk *parks) paused(partner string) bool { return pk.b != nil && pk.b.isPaused(partner) }
