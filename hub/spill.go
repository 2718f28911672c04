package hub

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/lanes"
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
// below is every park's, paused or spilled; what a drain holds back when
// its park consumer has messages out from before is lanes.DrainHold.

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
	hold := pk.holdOut(p)
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
				hold, asked = pk.holdOut(p), time.Time{}
			}
		}
		if hold != nil {
			for _, m := range hold.Quiet(now, pk.s.h.exec.heartbeat/2) {
				_ = m.InProgress()
			}
		}
		_, _, barrier := pk.ln.InHand()
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
			inLane := 0
			if known { // only then is what is out compared with what is in hand
				inLane = len(pk.ln.SeqsFrom(p.partner, p.from))
			}
			if hold.Lifted(now, pending, known, inLane) {
				for _, seq := range hold.Seqs() {
					m := hold.Kept(seq)
					pk.ln.Add(m.Msg, seq, p.partner, m.Size, m.Redelivered, now)
				}
				pk.s.gauge(pk.ln)
				log.Info().Int("in_hand", hold.Len()).Msg("what the park consumer had out before is back; the partner's drain runs")
				hold = nil
			}
		}
		room, least := pk.batch-pk.ln.Holds(p.partner), max(1, pk.batch/4)
		if pk.ln.Waits(p.partner) {
			// its nak'd head comes back only into a waiting request: with
			// the lane full it would not, until the lane gave up on it
			room, least = max(room, 1), 1
		}
		if hold != nil {
			// every free place: those out before come back only into a
			// waiting request
			room, least = pk.batch-hold.Len(), 1
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
				hold = pk.holdOut(p)
				asked = time.Time{}
			}
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			now := time.Now()
			if hold != nil {
				hold.Keep(msg, md.Sequence.Stream, len(msg.Data()), md.NumDelivered > 1, now)
				continue
			}
			pk.ln.Add(msg, md.Sequence.Stream, p.partner, len(msg.Data()), md.NumDelivered > 1, now)
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

// holdOut is the drain's hold when its park consumer has messages out
// that are not in the partner's lane (lanes.DrainHold), nil when it has none:
// at the drain's start, those of a process or owner before; after a
// reconnect, those lost with the connection. Unreadable, the drain holds
// for the longest one could take to come back.
func (pk *parks) holdOut(p *park) *lanes.DrainHold {
	ctx, cancel := context.WithTimeout(pk.ctx, 5*time.Second)
	defer cancel()
	till := time.Now().Add(pk.s.barrierFor())
	info, err := p.cons.Info(ctx)
	if err != nil {
		return lanes.NewDrainHold(^uint64(0), 1<<30, till)
	}
	// read after what is out: one settled between the two is counted out
	// and not in hand, which holds longer, never shorter
	inLane := pk.ln.SeqsFrom(p.partner, p.from)
	h := lanes.NewDrainHold(info.Delivered.Stream, info.NumAckPending, till)
	for _, seq := range inLane {
		if h != nil && h.Saw(seq) {
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
