package hub

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
// whose stages started. The lanes' side (the turn, lanes.Turn; discard
// and put back) is in hub/lanes.

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
