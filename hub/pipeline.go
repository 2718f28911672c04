package hub

import (
	"slices"
	"time"
)

// Pipelining within a partner (hub.partner_pipeline). A message taken
// while an earlier one of its partner is not settled runs its stages
// ahead, then waits for its turn: the one before settled. Only then does
// it settle (outputs stored, ledger committed, acked or moved), so outputs
// reach PARSED in stream order and every ack follows the one before. What
// depends on the one before is decided at its turn: the ledger is asked
// again (Message.RecheckAtSettle), so a duplicate of the message just
// before is answered as a duplicate; and when the one before stays in the
// consumer (nak'd: a strict retry, a wait, a failed store), everything
// that ran ahead of it is discarded, nothing of it stored, and put back in
// its lane to run again after it. A message the server handed out before
// (a redelivery, a suspect) is never taken with others of its partner, and
// a suspect found by the decision waits for its turn before it runs alone.
// Each message that runs holds a worker and its row of the in-flight
// table until it settles or is put back, so the table lists every message
// whose stages started.

// giveTurn lets m settle (or, when aborted, be put back); l.mu is held.
func (m *heldMsg) giveTurn() {
	if m.turn != nil && !m.turned {
		m.turned = true
		close(m.turn)
	}
}

// untake removes m from the lane's taken messages; l.mu is held.
func (ln *lane) untake(m *heldMsg) {
	if i := slices.Index(ln.taken, m); i >= 0 {
		ln.taken = slices.Delete(ln.taken, i, i+1)
	}
}

// waitTurn waits until every message of m's partner taken before it has
// settled, calling beat every heartbeat meanwhile (the server must not
// redeliver it behind the hub's back). It reports false when m's run is
// discarded: one before it stayed in the consumer. A message taken with
// nothing ahead returns at once.
func (l *lanes) waitTurn(m *heldMsg, every time.Duration, beat func()) bool {
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
func (l *lanes) runsAhead(m *heldMsg) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return m.ahead
}

// alone says m runs alone (a suspect): nothing more of its partner is
// taken until it settles.
func (l *lanes) alone(m *heldMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m.alone = true
}

// putBack returns a message whose run was discarded to its lane, in
// stream order, to run again after the one that stayed; a delivery that
// came while it ran replaces its handle.
func (l *lanes) putBack(m *heldMsg, now time.Time) {
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

// pipeTurn is a message's place in its partner's pipeline, for process.
// A nil one is a message with nothing ahead (a retry source, the sweep).
type pipeTurn struct {
	l     *lanes
	m     *heldMsg
	every time.Duration // progress while it waits
}

func (t *pipeTurn) ahead() bool { return t != nil && t.l.runsAhead(t.m) }

// wait waits for the turn, sending progress for msg; false: discarded.
func (t *pipeTurn) wait(msg interface{ InProgress() error }) bool {
	if t == nil {
		return true
	}
	return t.l.waitTurn(t.m, t.every, func() { _ = msg.InProgress() })
}

func (t *pipeTurn) alone() {
	if t != nil {
		t.l.alone(t.m)
	}
}

// recheck asks again what the stages decided on the messages of the
// partner before this one, now that they are settled: an error is the
// stage's failure, and nothing of the attempt is stored.
func (h *Hub) recheck(m *Message, o outcome) outcome {
	if !o.ok {
		return o
	}
	for _, r := range m.rechecks {
		if err := r.check(); err != nil {
			m.DropOutputs()
			m.commits = nil
			h.met.PipelineRechecked.Inc()
			return h.exec.errorOutcome(r.stage, err)
		}
	}
	return o
}

// pipelineDepth is how many of one partner's messages a partition with
// workers takes at once under hub.partner_pipeline: at most half its
// workers. A run ahead that has run its stages keeps its worker until its
// turn, so a partner whose head is slow (a stage waiting for a service, a
// large interchange) would otherwise hold every worker, and its
// neighbours' messages none (TestFloodingPartnerSpillsAndItsNeighbourRuns
// at two workers).
func pipelineDepth(pipeline, workers int) int {
	return max(1, min(pipeline, workers/2))
}
