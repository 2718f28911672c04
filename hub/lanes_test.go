package hub

import (
	"testing"
	"time"
)

// take is next without blocking: the head that would run now, or nil.
func (l *lanes) take() *heldMsg {
	l.mu.Lock()
	// next passes over what is no longer takeable; here without waiting
	for !l.barrier && len(l.ready) > 0 && (l.isPaused(l.ready[0].key) || !l.ready[0].mayTake(l.depth)) {
		l.ready[0].inReady = false
		l.ready = l.ready[1:]
	}
	ok := !l.barrier && len(l.ready) > 0
	l.mu.Unlock()
	if !ok {
		return nil
	}
	return l.next()
}

func seqsOf(ms ...*heldMsg) []uint64 {
	out := make([]uint64, len(ms))
	for i, m := range ms {
		if m != nil {
			out[i] = m.seq
		}
	}
	return out
}

func TestLanesRunPartnersSideBySideEachInOrder(t *testing.T) {
	now := time.Now()
	l := newLanes()
	for _, in := range []struct {
		seq     uint64
		partner string
	}{{1, "FLOOD"}, {2, "FLOOD"}, {3, "QUIET"}, {4, "FLOOD"}, {5, "QUIET"}} {
		l.add(nil, in.seq, in.partner, 10, now)
	}
	a, b := l.take(), l.take()
	if got := seqsOf(a, b); got[0] != 1 || got[1] != 3 {
		t.Fatalf("first heads %v, want FLOOD's 1 and QUIET's 3", got)
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d ran while its partner's head ran", m.seq)
	}
	l.done(b, false, 0, now) // QUIET's 3 settled: its 5 may run, FLOOD still waits for 1
	if m := l.take(); m == nil || m.seq != 5 {
		t.Fatalf("after QUIET's 3: %v, want 5", seqsOf(m))
	} else {
		l.done(m, false, 0, now)
	}
	l.done(a, false, 0, now)
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("after FLOOD's 1: %v, want 2", seqsOf(m))
	}
	if held, running, _ := l.held(); held != 2 || running != 1 {
		t.Fatalf("held %d running %d, want 2 and 1", held, running)
	}
}

func TestLanesNakdHeadHoldsOnlyItsPartner(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	l.add(nil, 3, "B", 1, now)
	a1 := l.take()
	l.done(a1, true, time.Minute, now) // retried in place: still the consumer's
	b := l.take()
	if b == nil || b.seq != 3 {
		t.Fatalf("B waited for A's retry: %v", seqsOf(b))
	}
	if m := l.take(); m != nil {
		t.Fatalf("A's 2 ran before its 1 came back: %d", m.seq)
	}
	if !l.add(nil, 1, "A", 1, now) { // the server hands 1 back
		t.Fatal("a message settled from the lanes counted as in hand")
	}
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatalf("after the redelivery: %v, want 1 before 2", seqsOf(m))
	}
}

func TestLanesRedeliveryOfOneInHandReplacesIt(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	if l.add(nil, 2, "A", 1, now) {
		t.Fatal("a second delivery of 2 was queued twice")
	}
	m := l.take()
	l.done(m, false, 0, now)
	m = l.take()
	l.done(m, false, 0, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d ran twice", m.seq)
	}
	if held, _, _ := l.held(); held != 0 {
		t.Fatalf("%d left in hand", held)
	}
}

func TestLanesOverdueNakReleasesTheLane(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	l.done(l.take(), true, time.Second, now)
	if _, overdue, _ := l.due(now.Add(500*time.Millisecond), time.Hour); overdue != 0 {
		t.Fatal("released before due")
	}
	if _, overdue, _ := l.due(now.Add(2*time.Second), time.Hour); overdue != 1 {
		t.Fatal("not released when due")
	}
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("after release: %v", seqsOf(m))
	}
}

func TestLanesProgressForThoseWaiting(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	l.take() // 1 runs: its watchdog sends its progress
	beat, _, _ := l.due(now.Add(time.Second), time.Second)
	if got := seqsOf(beat...); len(got) != 1 || got[0] != 2 {
		t.Fatalf("progress for %v, want [2]", got)
	}
	if beat, _, _ := l.due(now.Add(1500*time.Millisecond), time.Second); len(beat) != 0 {
		t.Fatalf("progress again before quiet passed: %v", seqsOf(beat...))
	}
}

// After a restart the server hands back what it had out sorted per batch
// of expiries, not all at once: a partner's later message may come back
// before its earlier one. The barrier holds every lane until all are back.
func TestLanesBarrierWaitsForWhatWasOut(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.arm(10, 2, now.Add(time.Minute), nil)
	l.add(nil, 9, "A", 1, now) // A's later one first
	l.add(nil, 11, "B", 1, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d ran before what was out came back", m.seq)
	}
	l.add(nil, 7, "A", 1, now)
	a, b := l.take(), l.take()
	if got := seqsOf(a, b); got[0] != 7 || got[1] != 11 {
		t.Fatalf("after the barrier: %v, want A's 7 and B's 11", got)
	}

	l2 := newLanes()
	l2.arm(10, 3, now.Add(time.Minute), nil)
	l2.add(nil, 5, "A", 1, now)
	if l2.liftIfAllInHand(2) {
		t.Fatal("lifted with one out and not in hand")
	}
	if !l2.liftIfAllInHand(1) || l2.take() == nil {
		t.Fatal("not lifted with everything out in hand")
	}

	l3 := newLanes()
	l3.arm(10, 3, now.Add(time.Second), nil)
	l3.add(nil, 5, "A", 1, now)
	if _, _, lifted := l3.due(now.Add(2*time.Second), time.Hour); !lifted || l3.take() == nil {
		t.Fatal("barrier not lifted when its time was up")
	}
}

// A barrier armed while messages are in hand (a reconnect, a pin move)
// counts what the partition consumer has out: its own messages in hand
// and a lane's nak'd head, each once, but not what a park consumer handed
// out (a spilled partner's drain), which would lift it before a lost
// delivery is back.
func TestLanesBarrierCountsOnlyThePartitionsOwn(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 3, "A", 1, now)
	head := l.take()
	l.done(head, true, time.Minute, now) // A waits for its nak'd 3
	l.add(nil, 4, "B", 1, now)           // the partition's
	l.add(nil, 5, "F", 1, now)           // F's park's
	l.add(nil, 6, "F", 1, now)
	parkOwned := func(partner string, seq uint64) bool { return partner == "F" && seq >= 5 }
	// out: 3, 4 and a lost 7 (the park's 5 and 6 are not the partition's)
	if !l.arm(7, 3, now.Add(time.Minute), parkOwned) {
		t.Fatal("not armed with 7 lost: the park's messages were counted")
	}
	if l.liftIfAllInHand(3) {
		t.Fatal("lifted with 3 out and 2 of them in hand")
	}
	l.add(nil, 8, "F", 1, now) // the park's again: not counted
	if _, _, barrier := l.held(); !barrier {
		t.Fatal("lifted by a park's delivery")
	}
	l.add(nil, 3, "A", 1, now) // the nak'd head back: counted once already
	if _, _, barrier := l.held(); !barrier {
		t.Fatal("lifted by a head counted twice")
	}
	l.add(nil, 7, "C", 1, now)
	if _, _, barrier := l.held(); barrier {
		t.Fatal("not lifted with everything out back in hand")
	}
	if l.arm(7, 3, now.Add(time.Minute), parkOwned) {
		t.Fatal("armed again with all three in hand")
	}
}

func TestLanesCloseEndsWorkersWhenNothingCanRun(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	m := l.next()
	l.close()
	got := make(chan *heldMsg)
	go func() { got <- l.next() }()
	l.done(m, false, 0, now)
	m2 := <-got
	if m2 == nil || m2.seq != 2 {
		t.Fatalf("after close the held 2 did not run: %v", seqsOf(m2))
	}
	l.done(m2, false, 0, now)
	if m := l.next(); m != nil {
		t.Fatalf("next after close and nothing left: %d", m.seq)
	}
}

// A nak with a short delay can be answered while its run is still
// finishing: the redelivery is queued when the run ends, not waited for.
func TestLanesRedeliveryDuringTheRunIsNotWaitedFor(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	m := l.take()
	l.add(nil, 1, "A", 1, now) // back before done
	l.done(m, true, time.Hour, now)
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatalf("after the early redelivery: %v, want 1 again before 2", seqsOf(m))
	}
}
