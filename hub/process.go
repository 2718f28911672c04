package hub

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/lanes"
	"github.com/edihub/edihub/wire"
)

// delivery is one message in hand with what the hub knows of it.
type delivery struct {
	src       *source
	msg       js.Msg
	meta      *js.MsgMetadata
	key       counter.Key
	partner   string
	partition int
	// origStream/origSeq identify the interchange across hops (a retry
	// carries its INGEST identity in headers).
	origStream string
	origSeq    uint64
	origTopic  string
	retryCount int
	messageID  string
	solo       bool // this attempt runs alone (a suspect): its explained outcome must say so
	// slot is the in-flight table's row of the worker running it.
	slot int
	// stays is set by nak: the message is still the consumer's, and its
	// partner's next one waits until the server hands it back (after
	// about stayDelay).
	stays     atomic.Bool
	stayDelay atomic.Int64
	// turn is its place in its partner's pipeline (nil: none): a head
	// settles the ready ones behind it with it (group.go).
	turn *lanes.Turn
	// discarded says its run was thrown away before it settled (an earlier
	// message of its partner stayed in the consumer): it goes back to its
	// lane, nothing of it stored (pipeline.go).
	discarded bool
}

// nak hands the message back to its consumer for a redelivery after delay.
func (d *delivery) nak(delay time.Duration) error {
	d.stayDelay.Store(int64(delay))
	d.stays.Store(true)
	return d.msg.NakWithDelay(delay)
}

// staysFor says whether the message is still its consumer's after its
// run, and by when the server should have handed it back: its nak's delay
// and an ack wait, twice over.
func (d *delivery) staysFor(a AttemptConfig) (bool, time.Duration) {
	if d == nil || !d.stays.Load() {
		return false, 0
	}
	return true, 2 * (time.Duration(d.stayDelay.Load()) + a.AckWait)
}

func (h *Hub) newDelivery(s *source, slot int, msg js.Msg, md *js.MsgMetadata) *delivery {
	d := &delivery{
		src: s, msg: msg, meta: md, slot: slot,
		key:        counter.Key{Stream: md.Stream, Consumer: md.Consumer, Seq: md.Sequence.Stream},
		origStream: md.Stream, origSeq: md.Sequence.Stream, partition: s.partition,
	}
	hdr := msg.Headers()
	if p, partner, ok := wire.ParseIngestSubject(msg.Subject()); ok {
		d.partition, d.partner = p, partner
	}
	if s.partition >= 0 || s.stray {
		h.ownKafkaHeaders(d)
	}
	if s.partition < 0 { // a retry: its identity travels in headers; bindRetry checks it
		d.origStream = hdr.Get(wire.HdrOriginalStream)
		d.origSeq, _ = strconv.ParseUint(hdr.Get(wire.HdrOriginalSeq), 10, 64)
		d.retryCount, _ = strconv.Atoi(hdr.Get(wire.HdrRetryCount))
		d.messageID = hdr.Get(wire.HdrMessageID)
	}
	return d
}

// bindRetry ties a due retry to the INGEST message it claims to be: the
// partner and partition come from that message's stored subject, never
// from the retry's headers, and the payload must be the same bytes.
// Anything could be published on a retry subject by whoever may; what does
// not match its original is dead-lettered, not processed.
func (h *Hub) bindRetry(d *delivery) error {
	if d.origStream != h.cfg.Streams.Ingest || d.origSeq == 0 {
		return fmt.Errorf("retry names %s:%d, not a message of %s", escape.Header(d.origStream), d.origSeq, h.cfg.Streams.Ingest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.js.Stream(ctx, d.origStream)
	if err != nil {
		return fmt.Errorf("read the original of a retry: %w", err)
	}
	raw, err := s.GetMsg(ctx, d.origSeq)
	if err != nil {
		return fmt.Errorf("the original %s:%d of a retry cannot be read (%w)", d.origStream, d.origSeq, err)
	}
	p, partner, ok := wire.ParseIngestSubject(raw.Subject)
	if !ok || !bytes.Equal(raw.Data, d.msg.Data()) {
		return fmt.Errorf("retry does not match its original %s:%d", d.origStream, d.origSeq)
	}
	d.partition, d.partner, d.origTopic = p, partner, wire.IngestSubject(partner)
	return nil
}

// process takes one delivery to exactly one place: acked after its outputs
// are stored, retried, dead-lettered or quarantined; slot is the in-flight
// table's row of the worker running it. It returns the delivery (nil for
// a message without metadata) and false when its handler overran the
// deadline: the timeout path then handled the message and called replace,
// which starts a replacement worker, and the calling worker, which the
// handler held up, must end. turn is the message's place in its partner's
// pipeline (nil: none, it settles when it is done).
func (h *Hub) process(s *source, slot int, w *watchdog, msg js.Msg, turn *lanes.Turn, replace func(*delivery)) (*delivery, bool) {
	md, err := msg.Metadata()
	if err != nil { // not a JetStream message: cannot happen on a pull consumer
		h.log.Error().Err(err).Str("consumer", s.name).Msg("message without metadata")
		return nil, true
	}
	d := h.newDelivery(s, slot, msg, md)
	d.turn = turn
	if md.NumDelivered > 1 && s.partition >= 0 {
		h.met.Redeliveries.WithLabelValues(strconv.Itoa(s.partition)).Inc()
	}
	f := facts{delivered: md.NumDelivered, stray: s.stray, retryCount: d.retryCount}
	if s.stray {
		err := fmt.Errorf("published to the literal subject %q: it names no partner, so no partition reads it", escape.Header(msg.Subject()))
		f.o = failedOutcome(s.stage, PermanentError(wire.CauseUnknown, err))
	} else if s.partition < 0 {
		if err := h.bindRetry(d); err != nil {
			h.log.Warn().Err(err).Str("stage", s.stage).Msg("a due retry does not match its original; dead-lettered")
			f.o, f.unbound = failedOutcome(s.stage, PermanentError(wire.CauseUnknown, err)), true
		}
	}
	if !f.stray && !f.unbound {
		// The happy path reads the store (cheap, no write) because a record
		// may exist from before a consumer was re-created.
		rec, err := h.store.Get(d.key)
		if err != nil {
			h.met.CounterErrors.Inc()
			h.log.Error().Err(err).Str("key", d.key.String()).Msg("attempt store unreadable; counting server deliveries only")
		}
		f.rec, f.listed = h.withUnstored(slot, d.key, rec, err == nil), h.wasRunning(s, md.Sequence.Stream)
		f.tableKnows = h.tableKnows
	}
	ahead := turn.Ahead()
	if ahead {
		// run ahead only as an ordinary healthy run; anything else (a
		// suspect, a quarantine, a dead letter) waits for its turn first
		if pre := decide(f, h.policy()); pre.do != actRun || pre.v.solo {
			if pre.v.solo {
				turn.Alone() // nothing more of its partner is taken behind it
			}
			if !turn.Wait(msg) {
				d.discarded = true
				return d, true
			}
			ahead = false
		}
	}
	dec := h.settle(d, f, nil)
	if f.stray {
		h.dropLiteral(s, msg, md)
	}
	if dec.do != actRun {
		return d, true
	}

	// A suspect (an earlier attempt ended with no outcome) runs alone, and
	// says so durably first, so that a death now is attributed to it.
	v := dec.v
	solo := v.solo
	d.solo = solo
	if solo {
		turn.Alone()
	}
	inProgress := func() { _ = msg.InProgress() }
	leave := h.gate.enter(solo, h.exec.heartbeat, inProgress)
	// Leave only when the outcome is recorded: a neighbour that kills the
	// process between this success and its bookkeeping would otherwise be
	// charged to this message.
	defer leave()
	if solo {
		// Marked only once the gate is ours: a suspect still waiting when
		// another one kills the process did not run, and must not be
		// charged with that death.
		if marked, err := h.store.MarkSolo(d.key); err != nil {
			h.met.CounterErrors.Inc()
			h.log.Error().Err(err).Str("key", d.key.String()).Msg("could not mark a solo run; a death now will not be attributed")
		} else {
			f.rec = marked
			h.met.CounterWrites.Inc()
		}
		h.log.Info().Str("partner", d.partner).Int("partition", d.partition).Uint64("seq", d.origSeq).
			Uint64("delivery", md.NumDelivered).Int("deaths", f.rec.Deaths()-1).Int("explained", f.rec.Count).
			Msg("suspect runs alone: an earlier attempt may have ended with the process dying")
	}
	h.inflight.Start(slot, md.Sequence.Stream)
	defer h.inflight.Done(slot, md.Sequence.Stream)

	m := &Message{
		Subject: msg.Subject(), Partner: d.partner, Partition: d.partition,
		Stream: d.origStream, Seq: d.origSeq, Delivered: md.NumDelivered,
		Header: msg.Headers(), Data: msg.Data(), ahead: ahead, grouped: turn != nil && !h.groups.off.Load(),
	}
	f.ran, f.before = true, v
	start := time.Now()
	o, abandoned := h.exec.run(w, m, inProgress, func(to outcome) {
		leave() // the abandoned handler must not hold the others back
		h.met.Abandoned.Set(float64(h.abandoned.Load()))
		if ahead && !turn.Wait(msg) {
			d.discarded = true
			replace(d)
			return
		}
		g := f
		g.o = to
		h.settle(d, g, nil)
		replace(d)
	})
	if abandoned {
		h.met.Abandoned.Set(float64(h.abandoned.Load()))
		return d, false
	}
	if o.ok {
		h.met.OKDuration.Observe(time.Since(start).Seconds())
	} else {
		h.met.Duration.WithLabelValues(o.stage).Observe(time.Since(start).Seconds())
	}
	if m.MessageID != "" {
		d.messageID = m.MessageID
	}
	if o.ok && !solo {
		// A healthy message whose handler is done has nothing in the
		// store that a neighbour's death could be charged to (no solo
		// mark), and publishing its outputs is the hub's code, which
		// kills no process: a suspect need not wait for it. It would
		// wait for a publish whose ack died with a stream leader for
		// the whole publish timeout. A suspect keeps the gate until its
		// outcome is recorded (see the deferred leave).
		leave()
	}
	if ahead {
		// its turn: every earlier message of its partner settled
		leave() // a healthy run (never solo ahead): a suspect must not wait for this one's turn
		var g *groupMember
		if o.ok && md.NumDelivered == 1 && !h.groups.off.Load() {
			pre := f
			pre.o = o
			if dec := decide(pre, h.policy()); dec.do == actAck {
				g = &groupMember{d: d, m: m, rec: f.rec, attempts: dec.attempts}
				turn.Ready(g) // the head before it may settle it with itself
				if h.hooks.groupReady != nil {
					h.hooks.groupReady(d.origSeq)
				}
			}
		}
		if !turn.Wait(msg) {
			d.discarded = true
			return d, true
		}
		if g != nil && g.settled {
			return d, true // settled in its head's group
		}
		o = h.recheck(m, o)
	}
	f.o = o
	h.settle(d, f, m)
	return d, true
}

// ownKafkaHeaders makes a producer's x-kafka-* headers on an INGEST
// message x-producer-x-kafka-* (in place, before anything reads them),
// unless the bridge signed them for the partner of the stored subject
// (wire.HdrKafkaMAC, with the audit key): then they stay, and the parsed
// outputs and copies carry them to the bridge's outbound routes.
func (h *Hub) ownKafkaHeaders(d *delivery) {
	hdr := d.msg.Headers()
	if len(hdr) == 0 {
		return
	}
	var keys wire.MACKeys
	if h.keys != nil {
		keys = h.keys
	}
	wire.OwnKafkaHeaders(keys, d.partner, hdr)
}
