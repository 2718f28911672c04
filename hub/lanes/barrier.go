package lanes

import (
	"maps"
	"slices"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// Arm holds every lane until the want messages the consumer had out (up to
// stream sequence upTo) when this process started pulling are back in
// hand, or until till. The server redelivers them as their ack waits and
// nak delays run out, each batch sorted but not all at once: a partner's
// later message could come back before its earlier one, and would run
// first. A pulled message at or below upTo is one of them; so is one
// already in hand (a pin that comes back to this instance finds its own
// messages there). When every one of them is in hand nothing is held: a
// pin move with nothing out elsewhere costs no wait.
//
// parkOwned (nil: none) says which messages in hand a park consumer
// handed out: they are not the partition consumer's, and not counted.
func (l *Lanes) Arm(upTo uint64, want int, till time.Time, parkOwned func(partner string, seq uint64) bool) (armed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parkOwned = parkOwned
	b := awaitBack{upTo: upTo, want: want, till: till}
	for seq, m := range l.bySeq {
		if !l.parks(m.partner, seq) {
			b.saw(seq)
		}
	}
	for _, ln := range l.byKey {
		if ln.waitSeq != 0 && !l.parks(ln.key, ln.waitSeq) {
			b.saw(ln.waitSeq) // a nak'd head is out, and known: its lane holds its partner until it is back
		}
	}
	if b.allBack() {
		return false
	}
	l.barrier, l.back = true, b
	return true
}

// parks says whether a park consumer handed out partner's seq; l.mu is held.
func (l *Lanes) parks(partner string, seq uint64) bool {
	return l.parkOwned != nil && l.parkOwned(partner, seq)
}

// awaitBack counts the messages a consumer had out (want of them, up to
// stream sequence upTo) as they come back into hand, until till: what the
// lanes' barrier and a park drain's hold (DrainHold) wait for.
type awaitBack struct {
	upTo    uint64
	want    int
	till    time.Time
	counted map[uint64]struct{} // at most want: a redelivery of one counted is not counted again
}

// saw counts seq if it is one of those, once; it reports whether every
// one is back.
func (a *awaitBack) saw(seq uint64) bool {
	if seq <= a.upTo && !a.allBack() {
		if a.counted == nil {
			a.counted = map[uint64]struct{}{}
		}
		a.counted[seq] = struct{}{}
	}
	return a.allBack()
}

func (a *awaitBack) allBack() bool { return len(a.counted) >= a.want }

func (a *awaitBack) timeUp(now time.Time) bool { return now.After(a.till) }

// LiftIfAllInHand lifts the barrier when the consumer has no more
// messages out than are in hand: nothing older is still to come.
func (l *Lanes) LiftIfAllInHand(pending int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.barrier {
		return false
	}
	in := 0
	for seq, m := range l.bySeq {
		if !l.parks(m.partner, seq) {
			in++
		}
	}
	if pending > in {
		return false
	}
	l.lift()
	return true
}

func (l *Lanes) lift() {
	l.barrier = false
	l.cond.Broadcast()
}

// DrainHold holds a park drain's messages out of the lane when it starts
// while the park consumer still has messages out from before (a drain of
// a process that died or stopped, of an owner that moved): the server
// hands those back only as their ack waits run out, and a later message,
// never delivered, would come first and run first. Like the lanes'
// barrier (Arm) for a partition, it is up until those are back in
// hand, or the consumer has no more out than is in hand, or till.
type DrainHold struct {
	awaitBack // the park consumer's messages out at the start
	byseq     map[uint64]HeldBack
}

// HeldBack is one message a hold keeps.
type HeldBack struct {
	Msg         js.Msg
	Size        int
	Redelivered bool
	beat        time.Time
}

// NewDrainHold is the hold of a drain that starts with want messages of
// its park consumer out (up to stream sequence upTo); nil when none is.
func NewDrainHold(upTo uint64, want int, till time.Time) *DrainHold {
	if want <= 0 {
		return nil
	}
	return &DrainHold{awaitBack: awaitBack{upTo: upTo, want: want, till: till}, byseq: map[uint64]HeldBack{}}
}

// Keep takes a message fetched while the hold is up; a delivery of one
// already kept replaces its handle.
func (h *DrainHold) Keep(msg js.Msg, seq uint64, size int, redelivered bool, now time.Time) {
	if _, again := h.byseq[seq]; !again {
		h.saw(seq)
	}
	h.byseq[seq] = HeldBack{Msg: msg, Size: size, Redelivered: redelivered, beat: now}
}

// Lifted decides whether the hold is down: every message out before is
// back, or the consumer has no more out than the hold keeps and the lane
// holds of it (pending, when known: those out before were acked meanwhile
// by the one that had them), or its time is up.
func (h *DrainHold) Lifted(now time.Time, pending int, known bool, inLane int) bool {
	return h.allBack() || known && pending <= len(h.byseq)+inLane || h.timeUp(now)
}

// Seqs are the kept messages' sequences in stream order: the order they
// go into the lane.
func (h *DrainHold) Seqs() []uint64 { return slices.Sorted(maps.Keys(h.byseq)) }

// Quiet are the kept messages the server has not heard of since before
// every: the drain sends them progress, so that they are not redelivered
// while the hold is up.
func (h *DrainHold) Quiet(now time.Time, every time.Duration) []js.Msg {
	var out []js.Msg
	for seq, m := range h.byseq {
		if now.Sub(m.beat) >= every {
			m.beat = now
			h.byseq[seq] = m
			out = append(out, m.Msg)
		}
	}
	return out
}

// Saw counts seq if it is one of the messages out at the start, once; it
// reports whether every one is back.
func (h *DrainHold) Saw(seq uint64) bool { return h.saw(seq) }

// Kept is the kept message at seq.
func (h *DrainHold) Kept(seq uint64) HeldBack { return h.byseq[seq] }

// Len is how many messages the hold keeps.
func (h *DrainHold) Len() int { return len(h.byseq) }
