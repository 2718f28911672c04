package lanes

import (
	"slices"
	"time"
)

// Pipelining within a partner (hub.partner_pipeline, depth > 1). A message
// taken while an earlier one of its partner is not settled runs ahead:
// its stages run, then it waits for its turn (Turn.Wait), the one before
// settled, and only then settles itself, so every ack follows the one
// before. When the one before stays in the consumer (nak'd), everything
// that ran ahead of it is discarded (its turn comes, aborted) and put back
// in its lane (PutBack) to run again after it. A message the server handed
// out before, and a suspect (Turn.Alone), is never taken with others of its
// partner. What the hub decides at the turn (the recheck, the group
// settle) is the hub's (pipeline.go, group.go).

// giveTurn lets m settle (or, when aborted, be put back); l.mu is held.
func (m *Held) giveTurn() {
	if m.turn != nil && !m.turned {
		m.turned = true
		close(m.turn)
	}
}

// untake removes m from the lane's taken messages; l.mu is held.
func (ln *lane) untake(m *Held) {
	if i := slices.Index(ln.taken, m); i >= 0 {
		ln.taken = slices.Delete(ln.taken, i, i+1)
	}
}

// waitTurn waits until every message of m's partner taken before it has
// settled, calling beat every heartbeat meanwhile (the server must not
// redeliver it behind the hub's back). It reports false when m's run is
// discarded: one before it stayed in the consumer. A message taken with
// nothing ahead returns at once.
func (l *Lanes) waitTurn(m *Held, every time.Duration, beat func()) bool {
	l.mu.Lock()
	turn := m.turn
	l.mu.Unlock()
	if turn == nil {
		return true
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-turn:
			l.mu.Lock()
			defer l.mu.Unlock()
			return !m.aborted
		case <-t.C:
			beat()
		}
	}
}

// runsAhead says whether m was taken while an earlier message of its
// partner was not settled.
func (l *Lanes) runsAhead(m *Held) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return m.ahead
}

// alone says m runs alone (a suspect): nothing more of its partner is
// taken until it settles.
func (l *Lanes) alone(m *Held) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m.alone = true
}

// PutBack returns a message whose run was discarded to its lane, in
// stream order, to run again after the one that stayed; a delivery that
// came while it ran replaces its handle.
func (l *Lanes) PutBack(m *Held, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := m.lane
	m.running = false
	l.running--
	ln.untake(m) // when it was not aborted (a decision that put it back)
	if m.aborted {
		ln.returning--
	}
	if m.hasAgain {
		m.msg, m.redelivered = m.again, true
		m.again, m.hasAgain = nil, false
	}
	m.beat, m.turn, m.turned, m.ahead, m.aborted, m.alone, m.ready = now, nil, false, false, false, false, nil
	ln.insert(m)
	l.settleLane(ln)
	l.cond.Broadcast()
}

// Turn is a message's place in its partner's pipeline, for the hub's run
// of it. A nil one is a message with nothing ahead (a retry source, the
// sweep).
type Turn struct {
	l     *Lanes
	m     *Held
	every time.Duration // progress while it waits
}

// Turn is m's place in its partner's pipeline; while it waits for it,
// progress is sent every every.
func (l *Lanes) Turn(m *Held, every time.Duration) *Turn {
	return &Turn{l: l, m: m, every: every}
}

// Ahead says whether the message was taken while an earlier message of its
// partner was not settled (runsAhead).
func (t *Turn) Ahead() bool { return t != nil && t.l.runsAhead(t.m) }

// Wait waits for the turn, sending progress for msg; false: discarded.
func (t *Turn) Wait(msg interface{ InProgress() error }) bool {
	if t == nil {
		return true
	}
	return t.l.waitTurn(t.m, t.every, func() { _ = msg.InProgress() })
}

// Alone says the message runs alone (a suspect).
func (t *Turn) Alone() {
	if t != nil {
		t.l.alone(t.m)
	}
}

// Ready offers ready, what a run ahead whose stages succeeded settles
// with, to the group of the head it waits for; l.mu orders it before the
// head's look (ReadyBehind). It is opaque here: the hub's group member.
func (t *Turn) Ready(ready any) {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	t.m.ready = ready
}

// ReadyBehind returns what was offered (Ready) right behind the message,
// in stream order, while it is its lane's first taken message (every
// earlier one settled): at most max, up to the first that is not ready.
func (t *Turn) ReadyBehind(max int) []any {
	l, m := t.l, t.m
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := m.lane
	if len(ln.taken) < 2 || ln.taken[0] != m {
		return nil
	}
	var out []any
	for _, t := range ln.taken[1:] {
		if t.ready == nil || t.aborted || len(out) >= max {
			break
		}
		out = append(out, t.ready)
	}
	return out
}
