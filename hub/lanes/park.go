package lanes

// What parking and a park's drain ask of the lanes (the hub's parking.go
// and spill.go): a paused or spilled partner is parked on a consumer of
// its own from its earliest unsettled message, its queued messages taken
// out of its lane; its drain hands them in again, a batch at a time, and
// the partner's lane is offered again when its pause is lifted.

// Wake offers partner's lane again: its pause was lifted.
func (l *Lanes) Wake(partner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln := l.byKey[partner]; ln != nil {
		l.offer(ln)
	}
}

// Lowest is the earliest stream sequence of partner's lane that is not
// settled and not running: its first queued message, or the nak'd head it
// waits for.
func (l *Lanes) Lowest(partner string) (seq uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return 0, false
	}
	if len(ln.queue) > 0 {
		seq, ok = ln.queue[0].seq, true
	}
	if ln.waitSeq != 0 && (!ok || ln.waitSeq < seq) {
		seq, ok = ln.waitSeq, true
	}
	return seq, ok
}

// Drop takes partner's queued messages from stream sequence from on out
// of its lane, and forgets a nak'd head there it waits for: the partner
// was parked (the hub's parking.go), another consumer hands them over
// again. A message that runs stays.
func (l *Lanes) Drop(partner string, from uint64) []*Held {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return nil
	}
	i := 0
	for i < len(ln.queue) && ln.queue[i].seq < from {
		i++
	}
	out := ln.queue[i:]
	ln.queue = ln.queue[:i:i]
	if ln.waitSeq >= from {
		ln.stopWaiting()
	}
	for _, m := range out {
		delete(l.bySeq, m.seq)
	}
	if ln.inReady {
		for i, r := range l.ready {
			if r == ln {
				l.ready = append(l.ready[:i], l.ready[i+1:]...)
				break
			}
		}
		ln.inReady = false
	}
	l.settleLane(ln)
	return out
}

// QueuedPartners lists the partners with messages waiting in a lane.
func (l *Lanes) QueuedPartners() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, ln := range l.byKey {
		if len(ln.queue) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// Holds is how many of partner's messages are in its lane: queued, or
// taken (running, waiting for their turn).
func (l *Lanes) Holds(partner string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return 0
	}
	return len(ln.queue) + len(ln.taken) + ln.returning
}

// Waits says whether partner's lane waits for its nak'd head to come back.
func (l *Lanes) Waits(partner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	return ln != nil && ln.waitSeq != 0
}

// SeqsFrom are the stream sequences from from on of partner's messages in
// its lane (queued, taken, and the nak'd head it waits for): those a park
// consumer that parked it from from has out and in hand.
func (l *Lanes) SeqsFrom(partner string, from uint64) []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byKey[partner]
	if ln == nil {
		return nil
	}
	var out []uint64
	for _, ms := range [][]*Held{ln.queue, ln.taken} {
		for _, m := range ms {
			if m.seq >= from {
				out = append(out, m.seq)
			}
		}
	}
	if ln.waitSeq >= from && ln.waitSeq != 0 {
		out = append(out, ln.waitSeq)
	}
	return out
}
