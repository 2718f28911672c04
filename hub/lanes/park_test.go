package lanes

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// What parking asks of the lanes: a partner's earliest unsettled message
// (a nak'd head it waits for counts), and its queued messages taken out
// from there on, the lanes going on with the others.
func TestLanesDropTakesAParkedPartnerOut(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 10, false, now)
	head := l.take()
	for _, seq := range []uint64{2, 3} {
		l.Add(nil, seq, "A", 10, false, now)
	}
	l.Add(nil, 4, "B", 10, false, now)
	if seq, ok := l.Lowest("A"); !ok || seq != 2 {
		t.Fatalf("lowest while 1 runs: %d %v, want 2", seq, ok)
	}
	l.Done(head, true, time.Minute, now) // nak'd: A waits for 1 to come back
	if seq, ok := l.Lowest("A"); !ok || seq != 1 {
		t.Fatalf("lowest with 1 nak'd: %d %v, want 1", seq, ok)
	}
	got := l.QueuedPartners()
	slices.Sort(got)
	if !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("queued partners %v", got)
	}
	if got := seqsOf(l.Drop("A", 2)...); !slices.Equal(got, []uint64{2, 3}) {
		t.Fatalf("dropped %v, want 2 3", got)
	}
	if seq, ok := l.Lowest("A"); !ok || seq != 1 {
		t.Fatalf("a nak'd head before the park is still waited for: %d %v", seq, ok)
	}
	if m := l.take(); m == nil || m.seq != 4 {
		t.Fatalf("next %v, want B's 4", seqsOf(m))
	}
	if held, _, _ := l.InHand(); held != 1 {
		t.Fatalf("held %d, want B's 4 alone", held)
	}
	if got := seqsOf(l.Drop("A", 1)...); len(got) != 0 {
		t.Fatalf("dropped %v from an empty lane", got)
	}
	if _, ok := l.Lowest("A"); ok {
		t.Fatal("A's nak'd head is still waited for after a park from it")
	}
}

// A lane offered before its partner was parked leaves the ready list with
// its messages: a later wake must not hand out an empty lane.
func TestLanesDropLeavesTheReadyList(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 1, "A", 10, false, now)
	l.Add(nil, 2, "B", 10, false, now)
	if got := seqsOf(l.Drop("A", 0)...); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("dropped %v, want 1", got)
	}
	l.Wake("A")
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("next %v, want B's 2", seqsOf(m))
	}
	if m := l.take(); m != nil {
		t.Fatalf("next %v, want none", seqsOf(m))
	}
}

// A paused partner's messages wait in its lane, with progress, while the
// others run; Wake offers the lane again.
func TestLanesPausedPartnerWaitsOthersRun(t *testing.T) {
	now := time.Now()
	l := New(1)
	paused := map[string]bool{"A": true}
	l.SetPaused(func(p string) bool { return paused[p] })
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "B", 1, false, now)
	l.Add(nil, 3, "A", 1, false, now)
	if got := seqsOf(l.take(), l.take()); got[0] != 2 || got[1] != 0 {
		t.Fatalf("ran %v, want B's 2 only", got)
	}
	if beat, _, _ := l.Due(now.Add(time.Hour), time.Second); len(beat) != 2 {
		t.Fatalf("progress for %d waiting messages, want A's 2", len(beat))
	}
	delete(paused, "A")
	l.Wake("A")
	m := l.take()
	if m == nil || m.seq != 1 {
		t.Fatalf("after wake ran %v, want A's 1", seqsOf(m))
	}
	l.Done(m, false, 0, now)
	if m := l.take(); m == nil || m.seq != 3 {
		t.Fatalf("then %v, want A's 3", seqsOf(m))
	}
}

func TestLanesPauseTakesEffectOnAReadyLane(t *testing.T) {
	now := time.Now()
	l := New(1)
	var paused atomic.Bool
	l.SetPaused(func(p string) bool { return p == "A" && paused.Load() })
	l.Add(nil, 1, "A", 1, false, now) // offered while not paused
	paused.Store(true)
	got := make(chan *Held, 1)
	go func() { got <- l.Next() }()
	// the worker passes over the paused lane and waits; B's message runs
	l.Add(nil, 2, "B", 1, false, now)
	if m := <-got; m == nil || m.seq != 2 {
		t.Fatalf("ran %v, want B's 2 (A is paused)", seqsOf(m))
	}
	paused.Store(false)
	l.Wake("A")
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatal("A's lane did not run after wake")
	}
}
