package hub

import (
	"testing"
	"time"
)

// turnGiven says whether m may settle (or be put back) now.
func turnGiven(m *heldMsg) bool {
	select {
	case <-m.turn:
		return true
	default:
		return m.turn == nil
	}
}

func TestPipelineTakesUpToDepthOfOnePartnerAndSettlesInOrder(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.depth = 3
	for seq := uint64(1); seq <= 5; seq++ {
		l.add(nil, seq, "A", 1, now)
	}
	l.add(nil, 6, "B", 1, now)
	var got []*heldMsg
	for m := l.take(); m != nil; m = l.take() {
		got = append(got, m)
	}
	// A's 1 2 3 (depth 3) and B's 6; A's 4 waits for room. A's lane goes
	// back on the ready list after each take, behind B's: fair
	if s := seqsOf(got...); len(s) != 4 || s[0] != 1 || s[1] != 6 || s[2] != 2 || s[3] != 3 {
		t.Fatalf("taken %v, want 1 6 2 3", s)
	}
	a1, a2, a3 := got[0], got[2], got[3]
	if a1.ahead || !a2.ahead || !a3.ahead || !turnGiven(a1) || turnGiven(a2) || turnGiven(a3) {
		t.Fatal("only A's first may settle at once")
	}
	l.done(a1, false, 0, now)
	if !turnGiven(a2) || turnGiven(a3) {
		t.Fatal("A's 1 settled: its 2's turn, not its 3's")
	}
	if m := l.take(); m == nil || m.seq != 4 {
		t.Fatalf("after A's 1 settled: %v, want A's 4 taken behind 2 and 3", seqsOf(m))
	}
	l.done(a2, false, 0, now)
	if !turnGiven(a3) {
		t.Fatal("A's 2 settled: its 3's turn")
	}
}

func TestPipelineStayDiscardsWhatRanAheadAndPutsItBack(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.depth = 3
	for seq := uint64(1); seq <= 4; seq++ {
		l.add(nil, seq, "A", 1, now)
	}
	a1, a2, a3 := l.take(), l.take(), l.take()
	l.done(a1, true, time.Minute, now) // A's 1 nak'd: stays in the consumer
	if !turnGiven(a2) || !a2.aborted || !turnGiven(a3) || !a3.aborted {
		t.Fatal("what ran ahead of a nak'd head was not discarded")
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d taken while its partner's head stays", m.seq)
	}
	l.putBack(a3, now)
	l.putBack(a2, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d taken before the nak'd head came back", m.seq)
	}
	l.add(nil, 1, "A", 1, now) // the server hands 1 back
	var got []uint64
	for m := l.take(); m != nil; m = l.take() {
		got = append(got, m.seq)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("after the redelivery: %v, want 1 2 3 again in order", got)
	}
	if held, running, _ := l.held(); held != 4 || running != 3 {
		t.Fatalf("held %d running %d, want 4 and 3", held, running)
	}
}

// Nothing is taken behind an aborted message whose worker has not put it
// back yet: a later one would settle before it.
func TestPipelineWaitsForDiscardedOnesBeforeTakingMore(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.depth = 2
	for seq := uint64(1); seq <= 3; seq++ {
		l.add(nil, seq, "A", 1, now)
	}
	a1, a2 := l.take(), l.take()
	l.add(nil, 1, "A", 1, now) // redelivered while it ran (a short nak)
	l.done(a1, true, time.Hour, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d taken while A's 2 is not back", m.seq)
	}
	l.putBack(a2, now)
	if m1, m2 := l.take(), l.take(); m1 == nil || m1.seq != 1 || m2 == nil || m2.seq != 2 {
		t.Fatalf("after put back: %v, want 1 then 2", seqsOf(m1, m2))
	}
}

// A redelivered message runs with nothing of its partner beside it, and so
// does a suspect: no pipeline.
func TestPipelineNotForRedeliveriesAndSuspects(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name        string
		redelivered [3]bool
		alone       bool // the head turns out a suspect
		want        int  // of A's taken at once
	}{
		{"fresh", [3]bool{}, false, 3},
		{"head redelivered", [3]bool{true, false, false}, false, 1},
		{"second redelivered", [3]bool{false, true, false}, false, 1},
		{"third redelivered", [3]bool{false, false, true}, false, 2},
		{"head a suspect", [3]bool{}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLanes()
			l.depth = 3
			for i, r := range tc.redelivered {
				l.addDelivery(nil, uint64(i+1), "A", 1, r, now)
			}
			head := l.take()
			if tc.alone {
				l.alone(head)
			}
			n := 1
			for l.take() != nil {
				n++
			}
			if tc.alone && n > 1 {
				// taken before it was found a suspect: the run's gate keeps
				// them from running beside it; what is taken after is none
				t.Fatalf("%d taken behind a suspect", n-1)
			}
			if n != tc.want {
				t.Fatalf("%d taken at once, want %d", n, tc.want)
			}
		})
	}
}

func TestPipelineWaitTurnBeatsAndReportsDiscard(t *testing.T) {
	now := time.Now()
	l := newLanes()
	l.depth = 2
	l.add(nil, 1, "A", 1, now)
	l.add(nil, 2, "A", 1, now)
	a1, a2 := l.take(), l.take()
	if !l.waitTurn(a1, time.Hour, func() {}) {
		t.Fatal("the head waited for a turn")
	}
	beats := make(chan struct{}, 100)
	res := make(chan bool, 1)
	go func() { res <- l.waitTurn(a2, time.Millisecond, func() { beats <- struct{}{} }) }()
	<-beats // progress while it waits
	l.done(a1, true, time.Minute, now)
	if <-res {
		t.Fatal("turn reported after the one before stayed")
	}
}

func TestPartnerPipelineSetting(t *testing.T) {
	for _, c := range []struct {
		set, want int
		ok        bool
	}{{0, defaultPartnerPipeline, true}, {1, 1, true}, {4, 4, true}, {64, 64, true}, {65, 65, false}, {-1, -1, false}} {
		cfg := Config{PartnerPipeline: c.set}
		cfg.SetDefaults()
		err := cfg.Validate()
		if cfg.PartnerPipeline != c.want || (err == nil) != c.ok {
			t.Errorf("partner_pipeline %d: %d, %v; want %d, ok %v", c.set, cfg.PartnerPipeline, err, c.want, c.ok)
		}
	}
}

// Left unset, the workers and the pipeline follow a smaller window or
// bound set by hand, rather than make the configuration invalid.
func TestDefaultsFollowASmallerWindow(t *testing.T) {
	for _, c := range []struct {
		window, bound, workers, pipeline int
	}{
		{0, 0, defaultPartitionConcurrency, defaultPartnerPipeline},
		{16, 0, 16, defaultPartnerPipeline},
		{1, 0, 1, defaultPartnerPipeline},
		{0, 4, defaultPartitionConcurrency, 4},
	} {
		cfg := Config{PartitionMaxInFlight: c.window, PartnerMaxInFlight: c.bound}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil || cfg.PartitionConcurrency != c.workers || cfg.PartnerPipeline != c.pipeline {
			t.Errorf("window %d, bound %d: workers %d, pipeline %d, %v; want %d, %d, valid", c.window, c.bound, cfg.PartitionConcurrency, cfg.PartnerPipeline, err, c.workers, c.pipeline)
		}
	}
}

func TestPipelineDepth(t *testing.T) {
	for _, c := range []struct{ pipeline, workers, want int }{
		{16, 32, 16}, // the defaults
		{16, 16, 8},  // half the workers, at most
		{4, 2, 1},    // two workers: one partner takes one
		{8, 1, 1},
		{1, 16, 1},
		{64, 64, 32},
	} {
		if got := pipelineDepth(c.pipeline, c.workers); got != c.want {
			t.Errorf("pipelineDepth(%d, %d) = %d, want %d", c.pipeline, c.workers, got, c.want)
		}
	}
}
