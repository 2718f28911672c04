package hub

import (
	"slices"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
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
// it has none left, and the partition takes the partner back.

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
	upTo       uint64 // the park consumer's last delivered stream sequence at the start
	want, seen int    // how many were out then; of those, how many are back
	till       time.Time
	byseq      map[uint64]heldBack
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
	return &drainHold{upTo: upTo, want: want, till: till, byseq: map[uint64]heldBack{}}
}

// keep takes a message fetched while the hold is up; a delivery of one
// already kept replaces its handle.
func (h *drainHold) keep(msg js.Msg, seq uint64, size int, redelivered bool, now time.Time) {
	if _, again := h.byseq[seq]; !again && seq <= h.upTo {
		h.seen++
	}
	h.byseq[seq] = heldBack{msg: msg, size: size, redelivered: redelivered, beat: now}
}

// lifted decides whether the hold is down: every message out before is
// back, or the consumer has no more out than the hold keeps (pending,
// when known: those out before were acked meanwhile by the one that had
// them), or its time is up.
func (h *drainHold) lifted(now time.Time, pending int, known bool) bool {
	return h.seen >= h.want || known && pending <= len(h.byseq) || now.After(h.till)
}

// seqs are the kept messages' sequences in stream order: the order they
// go into the lane.
func (h *drainHold) seqs() []uint64 {
	out := make([]uint64, 0, len(h.byseq))
	for seq := range h.byseq {
		out = append(out, seq)
	}
	slices.Sort(out)
	return out
}

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
