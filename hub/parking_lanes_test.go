package hub

import (
	"slices"
	"testing"
	"time"
)

// What parking asks of the lanes: a partner's earliest unsettled message
// (a nak'd head it waits for counts), and its queued messages taken out
// from there on, the lanes going on with the others.
func TestLanesDropTakesAParkedPartnerOut(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 10, now)
	head := l.take()
	for _, seq := range []uint64{2, 3} {
		l.add(nil, seq, "A", 10, now)
	}
	l.add(nil, 4, "B", 10, now)
	if seq, ok := l.lowest("A"); !ok || seq != 2 {
		t.Fatalf("lowest while 1 runs: %d %v, want 2", seq, ok)
	}
	l.done(head, true, time.Minute, now) // nak'd: A waits for 1 to come back
	if seq, ok := l.lowest("A"); !ok || seq != 1 {
		t.Fatalf("lowest with 1 nak'd: %d %v, want 1", seq, ok)
	}
	got := l.queuedPartners()
	slices.Sort(got)
	if !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("queued partners %v", got)
	}
	if got := seqsOf(l.drop("A", 2)...); !slices.Equal(got, []uint64{2, 3}) {
		t.Fatalf("dropped %v, want 2 3", got)
	}
	if seq, ok := l.lowest("A"); !ok || seq != 1 {
		t.Fatalf("a nak'd head before the park is still waited for: %d %v", seq, ok)
	}
	if m := l.take(); m == nil || m.seq != 4 {
		t.Fatalf("next %v, want B's 4", seqsOf(m))
	}
	if held, _, _ := l.held(); held != 1 {
		t.Fatalf("held %d, want B's 4 alone", held)
	}
	if got := seqsOf(l.drop("A", 1)...); len(got) != 0 {
		t.Fatalf("dropped %v from an empty lane", got)
	}
	if _, ok := l.lowest("A"); ok {
		t.Fatal("A's nak'd head is still waited for after a park from it")
	}
}

// A lane offered before its partner was parked leaves the ready list with
// its messages: a later wake must not hand out an empty lane.
func TestLanesDropLeavesTheReadyList(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.add(nil, 1, "A", 10, now)
	l.add(nil, 2, "B", 10, now)
	if got := seqsOf(l.drop("A", 0)...); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("dropped %v, want 1", got)
	}
	l.wake("A")
	if m := l.take(); m == nil || m.seq != 2 {
		t.Fatalf("next %v, want B's 2", seqsOf(m))
	}
	if m := l.take(); m != nil {
		t.Fatalf("next %v, want none", seqsOf(m))
	}
}
