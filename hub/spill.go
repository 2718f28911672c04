package hub

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
)

// A partner that floods its partition would hold the partition's window
// (hub.partition_max_in_flight) with its backlog, and a quiet partner
// hashed beside it would wait for the window to slide. So no partner may
// hold more than hub.partner_max_in_flight in its lane: one that does
// spills, parked on a consumer of its own exactly as a paused partner is
// (parking.go), except that its park drains at once. The partition
// consumer then acks (skips) what it is handed of the partner and keeps
// its window for the others; the park consumer hands the partner's
// messages into its lane partner_max_in_flight at a time, in order, until
// it has none left, and the partition takes the partner back. The drain
// below is every park's, paused or spilled.

// holds is how many of partner's messages are in its lane: queued, or
// taken (running, waiting for their turn).
func (l *lanes) holds(partner string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return 0
	}
	return len(ln.queue) + len(ln.taken) + ln.returning
}

// waits says whether partner's lane waits for its nak'd head to come back.
func (l *lanes) waits(partner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	return ln != nil && ln.waitSeq != 0
}

// seqsFrom are the stream sequences from from on of partner's messages in
// its lane (queued, taken, and the nak'd head it waits for): those a park
// consumer that parked it from from has out and in hand.
func (l *lanes) seqsFrom(partner string, from uint64) []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return nil
	}
	var out []uint64
	for _, ms := range [][]*heldMsg{ln.queue, ln.taken} {
		for _, m := range ms {
			if m.seq >= from {
				out = append(out, m.seq)
			}
		}
	}
	if ln.waitSeq >= from && ln.waitSeq != 0 {
		out = append(out, ln.waitSeq)
	}
	return out
}

// spills says whether a partner holding n messages in its lane goes over
// the bound (0: no partner spills).
func spills(n, bound int) bool { return bound > 0 && n > bound }

// spillBound is a partition's per-partner bound: none when the partition's
// window is no larger (a partner can never hold more than the window).
func spillBound(partnerMax, window int) int {
	if partnerMax >= window {
		return 0
	}
	return partnerMax
}

// drainHold holds a park drain's messages out of the lane when it starts
// while the park consumer still has messages out from before (a drain of
// a process that died or stopped, of an owner that moved): the server
// hands those back only as their ack waits run out, and a later message,
// never delivered, would come first and run first. Like the lanes'
// barrier (lanes.arm) for a partition, it is up until those are back in
// hand, or the consumer has no more out than is in hand, or till.
type drainHold struct {
	awaitBack // the park consumer's messages out at the start
	byseq     map[uint64]heldBack
}

// heldBack is one message a hold keeps.
type heldBack struct {
	msg         js.Msg
	size        int
	redelivered bool
	beat        time.Time
}

// newDrainHold is the hold of a drain that starts with want messages of
// its park consumer out (up to stream sequence upTo); nil when none is.
func newDrainHold(upTo uint64, want int, till time.Time) *drainHold {
	if want <= 0 {
		return nil
	}
	return &drainHold{awaitBack: awaitBack{upTo: upTo, want: want, till: till}, byseq: map[uint64]heldBack{}}
}

// keep takes a message fetched while the hold is up; a delivery of one
// already kept replaces its handle.
func (h *drainHold) keep(msg js.Msg, seq uint64, size int, redelivered bool, now time.Time) {
	if _, again := h.byseq[seq]; !again {
		h.saw(seq)
	}
	h.byseq[seq] = heldBack{msg: msg, size: size, redelivered: redelivered, beat: now}
}

// lifted decides whether the hold is down: every message out before is
// back, or the consumer has no more out than the hold keeps and the lane
// holds of it (pending, when known: those out before were acked meanwhile
// by the one that had them), or its time is up.
func (h *drainHold) lifted(now time.Time, pending int, known bool, inLane int) bool {
	return h.allBack() || known && pending <= len(h.byseq)+inLane || h.timeUp(now)
}

// seqs are the kept messages' sequences in stream order: the order they
// go into the lane.
func (h *drainHold) seqs() []uint64 { return slices.Sorted(maps.Keys(h.byseq)) }

// quiet are the kept messages the server has not heard of since before
// every: the drain sends them progress, so that they are not redelivered
// while the hold is up.
func (h *drainHold) quiet(now time.Time, every time.Duration) []js.Msg {
	var out []js.Msg
	for seq, m := range h.byseq {
		if now.Sub(m.beat) >= every {
			m.beat = now
			h.byseq[seq] = m
			out = append(out, m.msg)
		}
	}
	return out
}

// drainPoll is how long a drain waits for its next message before asking
// whether the park consumer is empty, and how often a drain whose partner
// is paused again (or whose lanes are behind a barrier) looks again.
const drainPoll = time.Second

// drainStep is how soon a drain whose partner's lane is full looks again
// (a refill is due when a quarter of the batch is free), doubled while it
// stays full up to drainStepMax: the three quarters left in the lane
// cover that at several thousand messages a second.
const (
	drainStep    = 2 * time.Millisecond
	drainStepMax = 10 * time.Millisecond
)

// drain hands the park consumer's messages to the partner's lane, up to
// batch at a time, until it has none left.
func (pk *parks) drain(p *park) {
	defer pk.wg.Done()
	log := pk.s.h.log.With().Str("partner", escape.Line(p.partner)).Str("consumer", p.name).Logger()
	log.Info().Uint64("from", p.from).Bool("spill", p.spill).Msg("parked partner drains: its parked messages run, in order")
	hold := pk.holdAtStart(p)
	var asked time.Time // when a hold last asked the server what is out
	step := drainStep
	conn := pk.s.reconnects()
	for pk.ctx.Err() == nil {
		now := time.Now()
		if r := pk.s.reconnects(); r != conn {
			// a fetch's deliveries may be lost with the old connection
			// (as a partition's, see take): the next fetch must not run
			// the partner's later messages before them
			conn = r
			if hold == nil {
				hold, asked = pk.holdAtStart(p), time.Time{}
			}
		}
		if hold != nil {
			for _, m := range hold.quiet(now, pk.s.h.exec.heartbeat/2) {
				_ = m.InProgress()
			}
		}
		_, _, barrier := pk.ln.held()
		if barrier || pk.paused(p.partner) { // paused again: those in hand wait, with progress
			pk.wait(drainPoll / 5)
			continue
		}
		if hold != nil {
			pending, known := 0, false
			if now.Sub(asked) >= barrierPoll {
				asked = now
				pending, known = pk.pending(p)
			}
			if hold.lifted(now, pending, known, len(pk.ln.seqsFrom(p.partner, p.from))) {
				for _, seq := range hold.seqs() {
					m := hold.byseq[seq]
					pk.ln.addDelivery(m.msg, seq, p.partner, m.size, m.redelivered, now)
				}
				pk.s.gauge(pk.ln)
				log.Info().Int("in_hand", len(hold.byseq)).Msg("what the park consumer had out before is back; the partner's drain runs")
				hold = nil
			}
		}
		room, least := pk.batch-pk.ln.holds(p.partner), max(1, pk.batch/4)
		if pk.ln.waits(p.partner) {
			// its nak'd head comes back only into a waiting request: with
			// the lane full it would not, until the lane gave up on it
			room, least = max(room, 1), 1
		}
		if hold != nil {
			// every free place: those out before come back only into a
			// waiting request
			room, least = pk.batch-len(hold.byseq), 1
		}
		if room < least {
			pk.wait(step)
			step = min(2*step, drainStepMax)
			continue
		}
		step = drainStep
		wait := drainPoll
		if hold != nil {
			wait = barrierPoll
		}
		batch, err := p.cons.Fetch(room, p.fetchOpts(wait)...)
		if err != nil {
			if pk.ctx.Err() == nil {
				log.Warn().Err(err).Msg("pull from a park consumer failed; retrying")
				pk.wait(drainPoll)
			}
			continue
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			if p.notePin(msg) && hold == nil {
				// what the consumer has out now, this one too
				hold = pk.holdAtStart(p)
				asked = time.Time{}
			}
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			now := time.Now()
			if hold != nil {
				hold.keep(msg, md.Sequence.Stream, len(msg.Data()), md.NumDelivered > 1, now)
				continue
			}
			pk.ln.addDelivery(msg, md.Sequence.Stream, p.partner, len(msg.Data()), md.NumDelivered > 1, now)
			pk.s.gauge(pk.ln)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && pk.ctx.Err() == nil {
			log.Warn().Err(err).Msg("pull from a park consumer failed; retrying")
			pk.wait(drainPoll)
			continue
		}
		if got == 0 && hold == nil && pk.handover(p) {
			log.Info().Msg("parked messages all ran; the partition takes the partner back")
			return
		}
	}
}

// holdAtStart is the drain's hold when its park consumer has messages out
// that are not in the partner's lane (drainHold), nil when it has none:
// at the drain's start, those of a process or owner before; after a
// reconnect, those lost with the connection. Unreadable, the drain holds
// for the longest one could take to come back.
func (pk *parks) holdAtStart(p *park) *drainHold {
	ctx, cancel := context.WithTimeout(pk.ctx, 5*time.Second)
	defer cancel()
	till := time.Now().Add(pk.s.barrierFor())
	info, err := p.cons.Info(ctx)
	if err != nil {
		return newDrainHold(^uint64(0), 1<<30, till)
	}
	// read after what is out: one settled between the two is counted out
	// and not in hand, which holds longer, never shorter
	inLane := pk.ln.seqsFrom(p.partner, p.from)
	h := newDrainHold(info.Delivered.Stream, info.NumAckPending, till)
	for _, seq := range inLane {
		if h != nil && h.saw(seq) {
			return nil // all of it is in hand
		}
	}
	return h
}

// pending is how many messages the park consumer has out.
func (pk *parks) pending(p *park) (int, bool) {
	ctx, cancel := context.WithTimeout(pk.ctx, 5*time.Second)
	defer cancel()
	info, err := p.cons.Info(ctx)
	if err != nil {
		return 0, false
	}
	return info.NumAckPending, true
}
