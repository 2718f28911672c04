package lanes

import (
	"testing"
	"time"
)

// take is next without blocking: the head that would run now, or nil.
func (l *Lanes) take() *Held {
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
	return l.Next()
}

func seqsOf(ms ...*Held) []uint64 {
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
	l := New(1)
	for _, in := range []struct {
		seq     uint64
		partner string
	}{{1, "FLOOD"}, {2, "FLOOD"}, {3, "QUIET"}, {4, "FLOOD"}, {5, "QUIET"}} {
		l.Add(nil, in.seq, in.partner, 10, false, now)
	}
	a, b := l.take(), l.take()
	if got := seqsOf(a, b); got[0] != 1 || got[1] != 3 {
		t.Fatalf("first heads %v, want FLOOD's 1 and QUIET's 3", got)
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d ran while its partner's head ran", m.seq)
	}
	l.Done(b, false, 0, now) // QUIET's 3 settled: its 5 may run, FLOOD still waits for 1
	if m := l.take(); m == nil || m.seq != 5 {
		t.Fatalf("after QUIET's 3: %v, want 5", seqsOf(m))
	} else {
		l.Done(m, false, 0, now)
	}
	l.Done(a, false, 0, now)
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("after FLOOD's 1: %v, want 2", seqsOf(m))
	}
	if held, running, _ := l.InHand(); held != 2 || running != 1 {
		t.Fatalf("held %d running %d, want 2 and 1", held, running)
	}
}

func TestLanesNakdHeadHoldsOnlyItsPartner(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	l.Add(nil, 3, "B", 1, false, now)
	a1 := l.take()
	l.Done(a1, true, time.Minute, now) // retried in place: still the consumer's
	b := l.take()
	if b == nil || b.seq != 3 {
		t.Fatalf("B waited for A's retry: %v", seqsOf(b))
	}
	if m := l.take(); m != nil {
		t.Fatalf("A's 2 ran before its 1 came back: %d", m.seq)
	}
	if !l.Add(nil, 1, "A", 1, false, now) { // the server hands 1 back
		t.Fatal("a message settled from the lanes counted as in hand")
	}
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatalf("after the redelivery: %v, want 1 before 2", seqsOf(m))
	}
}

func TestLanesRedeliveryOfOneInHandReplacesIt(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	if l.Add(nil, 2, "A", 1, false, now) {
		t.Fatal("a second delivery of 2 was queued twice")
	}
	m := l.take()
	l.Done(m, false, 0, now)
	m = l.take()
	l.Done(m, false, 0, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d ran twice", m.seq)
	}
	if held, _, _ := l.InHand(); held != 0 {
		t.Fatalf("%d left in hand", held)
	}
}

func TestLanesOverdueNakReleasesTheLane(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	l.Done(l.take(), true, time.Second, now)
	if _, overdue, _ := l.Due(now.Add(500*time.Millisecond), time.Hour); overdue != 0 {
		t.Fatal("released before due")
	}
	if _, overdue, _ := l.Due(now.Add(2*time.Second), time.Hour); overdue != 1 {
		t.Fatal("not released when due")
	}
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("after release: %v", seqsOf(m))
	}
}

func TestLanesProgressForThoseWaiting(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	l.take() // 1 runs: its watchdog sends its progress
	beat, _, _ := l.Due(now.Add(time.Second), time.Second)
	if got := seqsOf(beat...); len(got) != 1 || got[0] != 2 {
		t.Fatalf("progress for %v, want [2]", got)
	}
	if beat, _, _ := l.Due(now.Add(1500*time.Millisecond), time.Second); len(beat) != 0 {
		t.Fatalf("progress again before quiet passed: %v", seqsOf(beat...))
	}
}

// After a restart the server hands back what it had out sorted per batch
// of expiries, not all at once: a partner's later message may come back
// before its earlier one. The barrier holds every lane until all are back.
func TestLanesBarrierWaitsForWhatWasOut(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Arm(10, 2, now.Add(time.Minute), nil)
	l.Add(nil, 9, "A", 1, false, now) // A's later one first
	l.Add(nil, 11, "B", 1, false, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d ran before what was out came back", m.seq)
	}
	l.Add(nil, 7, "A", 1, false, now)
	a, b := l.take(), l.take()
	if got := seqsOf(a, b); got[0] != 7 || got[1] != 11 {
		t.Fatalf("after the barrier: %v, want A's 7 and B's 11", got)
	}

	l2 := New(1)
	l2.Arm(10, 3, now.Add(time.Minute), nil)
	l2.Add(nil, 5, "A", 1, false, now)
	if l2.LiftIfAllInHand(2) {
		t.Fatal("lifted with one out and not in hand")
	}
	if !l2.LiftIfAllInHand(1) || l2.take() == nil {
		t.Fatal("not lifted with everything out in hand")
	}

	l3 := New(1)
	l3.Arm(10, 3, now.Add(time.Second), nil)
	l3.Add(nil, 5, "A", 1, false, now)
	if _, _, lifted := l3.Due(now.Add(2*time.Second), time.Hour); !lifted || l3.take() == nil {
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
	l := New(1)
	l.Add(nil, 3, "A", 1, false, now)
	head := l.take()
	l.Done(head, true, time.Minute, now) // A waits for its nak'd 3
	l.Add(nil, 4, "B", 1, false, now)    // the partition's
	l.Add(nil, 5, "F", 1, false, now)    // F's park's
	l.Add(nil, 6, "F", 1, false, now)
	parkOwned := func(partner string, seq uint64) bool { return partner == "F" && seq >= 5 }
	// out: 3, 4 and a lost 7 (the park's 5 and 6 are not the partition's)
	if !l.Arm(7, 3, now.Add(time.Minute), parkOwned) {
		t.Fatal("not armed with 7 lost: the park's messages were counted")
	}
	if l.LiftIfAllInHand(3) {
		t.Fatal("lifted with 3 out and 2 of them in hand")
	}
	l.Add(nil, 8, "F", 1, false, now) // the park's again: not counted
	if _, _, barrier := l.InHand(); !barrier {
		t.Fatal("lifted by a park's delivery")
	}
	l.Add(nil, 3, "A", 1, false, now) // the nak'd head back: counted once already
	if _, _, barrier := l.InHand(); !barrier {
		t.Fatal("lifted by a head counted twice")
	}
	l.Add(nil, 7, "C", 1, false, now)
	if _, _, barrier := l.InHand(); barrier {
		t.Fatal("not lifted with everything out back in hand")
	}
	if l.Arm(7, 3, now.Add(time.Minute), parkOwned) {
		t.Fatal("armed again with all three in hand")
	}
}

func TestLanesCloseEndsWorkersWhenNothingCanRun(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	m := l.Next()
	l.Close()
	got := make(chan *Held)
	go func() { got <- l.Next() }()
	l.Done(m, false, 0, now)
	m2 := <-got
	if m2 == nil || m2.seq != 2 {
		t.Fatalf("after close the held 2 did not run: %v", seqsOf(m2))
	}
	l.Done(m2, false, 0, now)
	if m := l.Next(); m != nil {
		t.Fatalf("next after close and nothing left: %d", m.seq)
	}
}

// A nak with a short delay can be answered while its run is still
// finishing: the redelivery is queued when the run ends, not waited for.
func TestLanesRedeliveryDuringTheRunIsNotWaitedFor(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	m := l.take()
	l.Add(nil, 1, "A", 1, false, now) // back before done
	l.Done(m, true, time.Hour, now)
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatalf("after the early redelivery: %v, want 1 again before 2", seqsOf(m))
	}
}
