package lanes

import (
	"testing"
	"time"
)

// turnGiven says whether m may settle (or be put back) now.
func turnGiven(m *Held) bool {
	select {
	case <-m.turn:
		return true
	default:
		return m.turn == nil
	}
}

func TestPipelineTakesUpToDepthOfOnePartnerAndSettlesInOrder(t *testing.T) {
	now := time.Now()
	l := New(3)
	for seq := uint64(1); seq <= 5; seq++ {
		l.Add(nil, seq, "A", 1, false, now)
	}
	l.Add(nil, 6, "B", 1, false, now)
	var got []*Held
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
	l.Done(a1, false, 0, now)
	if !turnGiven(a2) || turnGiven(a3) {
		t.Fatal("A's 1 settled: its 2's turn, not its 3's")
	}
	if m := l.take(); m == nil || m.seq != 4 {
		t.Fatalf("after A's 1 settled: %v, want A's 4 taken behind 2 and 3", seqsOf(m))
	}
	l.Done(a2, false, 0, now)
	if !turnGiven(a3) {
		t.Fatal("A's 2 settled: its 3's turn")
	}
}

func TestPipelineStayDiscardsWhatRanAheadAndPutsItBack(t *testing.T) {
	now := time.Now()
	l := New(3)
	for seq := uint64(1); seq <= 4; seq++ {
		l.Add(nil, seq, "A", 1, false, now)
	}
	a1, a2, a3 := l.take(), l.take(), l.take()
	l.Done(a1, true, time.Minute, now) // A's 1 nak'd: stays in the consumer
	if !turnGiven(a2) || !a2.aborted || !turnGiven(a3) || !a3.aborted {
		t.Fatal("what ran ahead of a nak'd head was not discarded")
	}
	if m := l.take(); m != nil {
		t.Fatalf("%d taken while its partner's head stays", m.seq)
	}
	l.PutBack(a3, now)
	l.PutBack(a2, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d taken before the nak'd head came back", m.seq)
	}
	l.Add(nil, 1, "A", 1, false, now) // the server hands 1 back
	var got []uint64
	for m := l.take(); m != nil; m = l.take() {
		got = append(got, m.seq)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("after the redelivery: %v, want 1 2 3 again in order", got)
	}
	if held, running, _ := l.InHand(); held != 4 || running != 3 {
		t.Fatalf("held %d running %d, want 4 and 3", held, running)
	}
}

// Nothing is taken behind an aborted message whose worker has not put it
// back yet: a later one would settle before it.
func TestPipelineWaitsForDiscardedOnesBeforeTakingMore(t *testing.T) {
	now := time.Now()
	l := New(2)
	for seq := uint64(1); seq <= 3; seq++ {
		l.Add(nil, seq, "A", 1, false, now)
	}
	a1, a2 := l.take(), l.take()
	l.Add(nil, 1, "A", 1, false, now) // redelivered while it ran (a short nak)
	l.Done(a1, true, time.Hour, now)
	if m := l.take(); m != nil {
		t.Fatalf("%d taken while A's 2 is not back", m.seq)
	}
	l.PutBack(a2, now)
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
			l := New(3)
			for i, r := range tc.redelivered {
				l.Add(nil, uint64(i+1), "A", 1, r, now)
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
	l := New(2)
	l.Add(nil, 1, "A", 1, false, now)
	l.Add(nil, 2, "A", 1, false, now)
	a1, a2 := l.take(), l.take()
	if !l.waitTurn(a1, time.Hour, func() {}) {
		t.Fatal("the head waited for a turn")
	}
	beats := make(chan struct{}, 100)
	res := make(chan bool, 1)
	go func() { res <- l.waitTurn(a2, time.Millisecond, func() { beats <- struct{}{} }) }()
	<-beats // progress while it waits
	l.Done(a1, true, time.Minute, now)
	if <-res {
		t.Fatal("turn reported after the one before stayed")
	}
}

// What a head settling in a group reads: the runs ahead right behind it
// that offered themselves, in stream order, up to the first that did not
// and at most max; nothing for a message that is not its lane's first.
func TestTurnReadyBehindTheHead(t *testing.T) {
	now := time.Now()
	l := New(4)
	for seq := uint64(1); seq <= 4; seq++ {
		l.Add(nil, seq, "A", 1, false, now)
	}
	a1, a2, a3, a4 := l.take(), l.take(), l.take(), l.take()
	head, t2, t3, t4 := l.Turn(a1, time.Hour), l.Turn(a2, time.Hour), l.Turn(a3, time.Hour), l.Turn(a4, time.Hour)
	if head.Ahead() || !t2.Ahead() || !t4.Ahead() {
		t.Fatal("only the head runs with nothing ahead")
	}
	if got := head.ReadyBehind(10); len(got) != 0 {
		t.Fatalf("ready behind the head before any offered: %v", got)
	}
	t2.Ready("2")
	t4.Ready("4") // 3 is not ready: 4 settles at its own turn
	if got := head.ReadyBehind(10); len(got) != 1 || got[0] != "2" {
		t.Fatalf("ready behind the head %v, want [2]", got)
	}
	t3.Ready("3")
	for _, c := range []struct {
		max  int
		want []any
	}{{10, []any{"2", "3", "4"}}, {2, []any{"2", "3"}}, {0, nil}} {
		got := head.ReadyBehind(c.max)
		if len(got) != len(c.want) {
			t.Fatalf("max %d: %v, want %v", c.max, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("max %d: %v, want %v", c.max, got, c.want)
			}
		}
	}
	if got := t2.ReadyBehind(10); got != nil {
		t.Fatalf("read behind one that is not its lane's first: %v", got)
	}
	l.Done(a1, false, 0, now)
	if got := t2.ReadyBehind(10); len(got) != 2 || got[0] != "3" || got[1] != "4" {
		t.Fatalf("behind the next head %v, want [3 4]", got)
	}
}

// A nil turn is a message with nothing ahead: it never waits.
func TestNilTurnRunsAtOnce(t *testing.T) {
	var turn *Turn
	if turn.Ahead() || !turn.Wait(nil) {
		t.Fatal("a nil turn waits")
	}
	turn.Alone()
}
