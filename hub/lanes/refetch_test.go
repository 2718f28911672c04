package lanes

import (
	"slices"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// handle is a message handle the lanes keep, told apart by seq.
type handle struct {
	js.Msg
	seq uint64
}

func seqsOfHandles(ms []js.Msg) []uint64 {
	out := make([]uint64, len(ms))
	for i, m := range ms {
		out[i] = m.(handle).seq
	}
	return out
}

// A pin that comes back to this instance finds its own messages in hand:
// when every message out is one of them the barrier holds nothing; when
// more are out it holds until those come back, counting the ones in hand.
func TestBarrierCountsWhatIsInHand(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(nil, 4, "A", 1, false, now)
	l.Add(nil, 6, "B", 1, false, now)
	if l.Arm(6, 2, now.Add(time.Minute), nil) {
		t.Fatal("armed with both messages out in hand")
	}
	if m := l.take(); m == nil {
		t.Fatal("nothing runs after a pin move with nothing out elsewhere")
	} else {
		l.Done(m, false, 0, now)
	}
	if !l.Arm(9, 3, now.Add(time.Minute), nil) {
		t.Fatal("not armed with a third message out elsewhere")
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d ran before the one out elsewhere was back", m.seq)
	}
	l.Add(nil, 5, "A", 1, false, now) // one of the two out elsewhere: 6 in hand and 5 back, 3 wanted
	if m := l.take(); m != nil {
		t.Fatalf("%d ran with one still out", m.seq)
	}
	l.Add(nil, 8, "C", 1, false, now)
	if m := l.take(); m == nil {
		t.Fatal("the barrier did not lift with everything back")
	}
}

// A nak'd head is late headLate past its delay, or at once when the
// connection was lost; a late head is asked for once per refetchEvery,
// and no more once it is back.
func TestLateHeadsAreAskedForAgain(t *testing.T) {
	now := time.Now()
	l := New(1)
	l.Add(handle{seq: 1}, 1, "A", 1, false, now)
	l.Add(handle{seq: 2}, 2, "A", 1, false, now)
	l.Add(handle{seq: 3}, 3, "B", 1, false, now)
	a := l.take()
	l.Done(a, true, time.Minute, now) // nak'd, due back within a minute
	l.ExpectBack(a, 100*time.Millisecond, now)
	if got := l.LateHeads(now.Add(time.Second)); len(got) != 0 {
		t.Fatalf("late before its delay and headLate: %v", seqsOfHandles(got))
	}
	at := now.Add(100*time.Millisecond + headLate)
	if got := seqsOfHandles(l.LateHeads(at)); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("late heads %v, want [1]", got)
	}
	if got := l.LateHeads(at.Add(refetchEvery / 2)); len(got) != 0 {
		t.Fatalf("asked for again within refetchEvery: %v", seqsOfHandles(got))
	}
	if got := seqsOfHandles(l.LateHeads(at.Add(refetchEvery))); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("late heads a refetchEvery later %v, want [1]", got)
	}

	// a second lane's head, nak'd just now, is late at once when the
	// connection is lost
	b := l.take()
	l.Done(b, true, time.Minute, now)
	l.ExpectBack(b, time.Second, now)
	l.Lost(now)
	if got := seqsOfHandles(l.LateHeads(now)); !slices.Equal(got, []uint64{1, 3}) && !slices.Equal(got, []uint64{3, 1}) {
		t.Fatalf("late heads after a lost connection %v, want 1 and 3", got)
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d ran while its partner's head was out", m.seq)
	}
	l.Add(handle{seq: 1}, 1, "A", 1, false, now) // back: nothing asked for any more, and in order
	if got := seqsOfHandles(l.LateHeads(now.Add(time.Hour))); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("late heads after 1 came back %v, want [3]", got)
	}
	if m := l.take(); m == nil || m.seq != 1 {
		t.Fatalf("after its head came back: %v, want 1", seqsOf(m))
	}
}

// When the pin is another instance's, the lanes with nothing running
// hand back what they hold in stream order and forget their waits; a
// lane whose message runs keeps its own.
func TestHandBackLeavesWhatRuns(t *testing.T) {
	now := time.Now()
	l := New(1)
	for _, in := range []struct {
		seq     uint64
		partner string
	}{{1, "A"}, {2, "B"}, {3, "C"}, {4, "A"}, {5, "B"}, {6, "C"}} {
		l.Add(handle{seq: in.seq}, in.seq, in.partner, 1, false, now)
	}
	a, b := l.take(), l.take()
	if a.seq != 1 || b.seq != 2 {
		t.Fatalf("first heads %d %d", a.seq, b.seq)
	}
	l.Done(a, true, time.Minute, now) // A waits for its nak'd 1
	// B's 2 runs; C's 3 and 6 queued, A's 4 queued behind its nak'd head
	back := seqsOfHandles(l.HandBack())
	if !slices.Equal(back, []uint64{3, 4, 6}) {
		t.Fatalf("handed back %v, want [3 4 6]", back)
	}
	if got := l.LateHeads(now.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a handed-back lane still waits for its head: %v", seqsOfHandles(got))
	}
	if held, running, _ := l.InHand(); held != 2 || running != 1 {
		t.Fatalf("held %d running %d, want B's 2 and 5, one running", held, running)
	}
	l.Done(b, false, 0, now)
	if m := l.take(); m == nil || m.seq != 5 {
		t.Fatalf("after B's 2: %v, want its 5", seqsOf(m))
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d ran after it was handed back", m.seq)
	}
}
