package lanes

import (
	"cmp"
	"slices"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// A nak'd head that is late. A lane that waits for its nak'd head (Done
// with stays) holds its partner until the server hands the head back,
// normally right after the nak's delay. When the connection that carried
// the nak (or the redelivery) is lost, or the pin moved, the head does not
// come back on that timetable: the hub asks for it again (LateHeads, the
// hub's refetch.go), or, when the partition's pin is another instance's,
// hands back what the lanes hold (HandBack). The lane still gives up only
// at its waitTill (the head was deleted).

// headLate is how long past its nak's delay a head may take to come back
// before it is asked for again, and refetchEvery how often a head that
// stays late is asked for again (each try a consumer info on a pinned
// partition, and a nak).
const (
	headLate     = time.Second
	refetchEvery = time.Second
)

// stopWaiting forgets the lane's nak'd head; l.mu is held.
func (ln *lane) stopWaiting() {
	ln.waitSeq, ln.waitMsg, ln.waitTill, ln.waitLate = 0, nil, time.Time{}, time.Time{}
}

// ExpectBack says when the head the lane waits for is late: delay (its
// nak's) and headLate after now. A head back already is not waited for.
func (l *Lanes) ExpectBack(m *Held, delay time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := m.lane
	if ln.waitSeq == m.seq {
		ln.waitLate = now.Add(delay + headLate)
	}
}

// Lost says the connection was replaced or the pull died: every head a
// lane waits for is late now.
func (l *Lanes) Lost(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range l.byKey {
		if ln.waitSeq != 0 {
			ln.waitLate = now
		}
	}
}

// LateHeads returns the handles of the heads that are late at now, and
// makes each late again refetchEvery later.
func (l *Lanes) LateHeads(now time.Time) []js.Msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []js.Msg
	for _, ln := range l.byKey {
		if ln.waitSeq != 0 && ln.waitMsg != nil && !now.Before(ln.waitLate) {
			out = append(out, ln.waitMsg)
			ln.waitLate = now.Add(refetchEvery)
		}
	}
	return out
}

// HandBack takes the queued messages out of every lane with nothing
// running, in stream order, and forgets the nak'd head such a lane waits
// for: another instance holds the partition's pin and gets them from the
// server. A lane with a message that runs (or runs ahead, or is being put
// back) keeps what it holds: its partner goes on here after it, as before.
func (l *Lanes) HandBack() []js.Msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	var held []*Held
	for _, ln := range l.byKey {
		if len(ln.taken) > 0 || ln.returning > 0 {
			continue
		}
		held = append(held, ln.queue...)
		ln.queue = nil
		ln.stopWaiting()
		if ln.inReady {
			l.ready = slices.DeleteFunc(l.ready, func(r *lane) bool { return r == ln })
			ln.inReady = false
		}
		l.settleLane(ln)
	}
	out := make([]js.Msg, 0, len(held))
	sortBySeq(held)
	for _, m := range held {
		delete(l.bySeq, m.seq)
		out = append(out, m.msg)
	}
	return out
}

func sortBySeq(ms []*Held) {
	slices.SortFunc(ms, func(a, b *Held) int { return cmp.Compare(a.seq, b.seq) })
}
