package lanes

import (
	"slices"
	"testing"
	"time"
)

// What a drain that starts with its park consumer's messages out from
// before decides: the hold stays up until those are back (by count, or
// the server has no more out than the hold keeps), or its time is up.
func TestDrainHoldLiftsWhenWhatWasOutIsBack(t *testing.T) {
	now := time.Now()
	if NewDrainHold(10, 0, now) != nil {
		t.Fatal("a hold with nothing out before")
	}
	for _, c := range []struct {
		name    string
		want    int
		got     []uint64 // fetched while up, in the order the server hands them
		pending int      // the consumer's NumAckPending then
		known   bool
		inLane  int  // the partner's lane holds that many of the park's
		late    bool // asked after till
		lifted  bool
	}{
		{name: "none back yet", want: 2, got: nil, pending: 2, known: true},
		{name: "a later one first", want: 2, got: []uint64{11}, pending: 3, known: true},
		{name: "one of two back", want: 2, got: []uint64{11, 9}, pending: 3, known: true},
		{name: "both back, the later first", want: 2, got: []uint64{11, 10, 9}, lifted: true},
		{name: "a redelivery of one kept counts once", want: 2, got: []uint64{9, 9}, pending: 2},
		{name: "acked by the one that had them", want: 2, got: []uint64{11}, pending: 1, known: true, lifted: true},
		{name: "the rest in the lane (a reconnect's hold)", want: 3, got: []uint64{11}, pending: 3, known: true, inLane: 2, lifted: true},
		{name: "one lost with the connection", want: 3, got: nil, pending: 3, known: true, inLane: 2},
		{name: "server unreadable", want: 2, got: []uint64{11}, pending: 0, known: false},
		{name: "time up", want: 2, got: nil, late: true, lifted: true},
	} {
		h := NewDrainHold(10, c.want, now.Add(time.Minute))
		for _, seq := range c.got {
			h.Keep(nil, seq, 1, seq <= 10, now)
		}
		at := now
		if c.late {
			at = now.Add(2 * time.Minute)
		}
		if got := h.Lifted(at, c.pending, c.known, c.inLane); got != c.lifted {
			t.Errorf("%s: lifted %v, want %v", c.name, got, c.lifted)
		}
		want := slices.Clone(c.got)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := h.Seqs(); !slices.Equal(got, want) {
			t.Errorf("%s: into the lane in the order %v, want %v", c.name, got, want)
		}
	}
}

// Kept messages get progress once every period, not on every look.
func TestDrainHoldBeatsTheQuietOnes(t *testing.T) {
	now := time.Now()
	h := NewDrainHold(5, 1, now.Add(time.Minute))
	h.Keep(nil, 5, 1, true, now)
	if n := len(h.Quiet(now.Add(time.Second), 2*time.Second)); n != 0 {
		t.Fatalf("%d beaten before the period", n)
	}
	if n := len(h.Quiet(now.Add(3*time.Second), 2*time.Second)); n != 1 {
		t.Fatalf("%d beaten after the period, want 1", n)
	}
	if n := len(h.Quiet(now.Add(4*time.Second), 2*time.Second)); n != 0 {
		t.Fatalf("%d beaten again right after", n)
	}
}
