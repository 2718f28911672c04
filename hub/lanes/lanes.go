package lanes

import (
	"sync"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// Lanes is one partition's messages in hand, in one lane per partner: the
// partition consumer has up to hub.partition_max_in_flight messages out at
// once, its workers run the heads of different partners side by side, and
// each partner's messages settle strictly in stream order. With depth 1 a
// partner's next message runs only when the one before is settled: acked,
// or moved to another stream. With a deeper pipeline (hub.partner_pipeline)
// up to depth of a partner's messages are taken at once: the ones behind
// the first run their stages ahead and wait for their turn (Turn)
// before they settle, each only after the one before. A head that stays in
// the consumer (a nak: retried in place, waiting for a service) holds its
// lane until the server hands it back, and holds nothing else; what ran
// ahead of it is discarded and put back in its lane.
//
// It has no NATS in it beyond the message handles it keeps: the decisions
// (which head runs next, what is due back) are table-tested.
type Lanes struct {
	mu    sync.Mutex
	cond  *sync.Cond
	byKey map[string]*lane
	ready []*lane // lanes whose head may run, oldest first (fair across partners)
	// bySeq finds a held message by its stream sequence: a redelivery of a
	// message in hand replaces its handle instead of queueing it twice.
	bySeq   map[uint64]*Held
	running int
	closed  bool
	// barrier holds every lane after a (re)start until the messages the
	// consumer had out before are back in hand (see Arm).
	barrier bool
	back    awaitBack // what the barrier waits for
	// parkOwned says which held messages a park consumer handed out, not
	// the partition's: the barrier does not count them (nil: none is).
	parkOwned func(partner string, seq uint64) bool
	// paused says a partner's lane is not to be taken (the bulkhead): its
	// messages stay in hand, with progress, until Wake. nil: never (SetPaused).
	paused func(partner string) bool
	// depth is how many of one partner's messages may be taken at once
	// (hub.partner_pipeline; 1 or less: one).
	depth int
}

// Held is one delivered message that is not settled yet.
type Held struct {
	msg     js.Msg
	seq     uint64
	partner string
	size    int
	beat    time.Time // when the server last heard of it (delivery or progress)
	lane    *lane
	running bool
	// again is a delivery of it that came while it ran (hasAgain): a nak
	// with a short delay can be answered before the run is done.
	again    js.Msg
	hasAgain bool
	// redelivered says the server had handed it out before: it runs
	// with nothing of its partner ahead of or behind it.
	redelivered bool
	// ahead says it was taken while an earlier message of its partner was
	// not settled; turn is closed when that one is (or when aborted says
	// it stayed in the consumer: this one's run is discarded).
	ahead   bool
	turn    chan struct{}
	turned  bool // turn is closed
	aborted bool
	alone   bool // a suspect: nothing of its partner is taken behind it
	// ready says its stages succeeded and it may settle in its head's
	// group (the hub's group settle, Turn.Ready): opaque here
	ready any
}

// lane is one partner's messages in hand.
type lane struct {
	key   string
	queue []*Held // sorted by stream sequence
	// taken are its messages that run or wait for their turn, in stream
	// order: taken[0] settles first. returning counts those discarded
	// (their first stayed) whose workers have not put them back yet:
	// nothing is taken until they are.
	taken     []*Held
	returning int
	// waitSeq is a head that stayed in the consumer (nak'd): the lane waits
	// until the server hands it back, or until waitTill (deleted meanwhile).
	// waitMsg is the handle it was nak'd through, and waitLate when the
	// head is late: a nak or a redelivery lost with a connection is asked
	// for again from then on (LateHeads).
	waitSeq  uint64
	waitTill time.Time
	waitMsg  js.Msg
	waitLate time.Time
	inReady  bool
}

// New returns empty lanes that take up to depth of one partner's messages
// at once (hub.partner_pipeline; 1 or less: one).
func New(depth int) *Lanes {
	l := &Lanes{byKey: map[string]*lane{}, bySeq: map[uint64]*Held{}, depth: depth}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// SetPaused sets what says a partner's lane is not to be taken now (the
// bulkhead's pause, a park being taken): its messages stay in hand, with
// progress, until Wake. Set it before anything is added or taken.
func (l *Lanes) SetPaused(paused func(partner string) bool) { l.paused = paused }

// Depth is how many of one partner's messages may be taken at once.
func (l *Lanes) Depth() int { return l.depth }

// Msg is the handle m was delivered through (a redelivery taken in hand
// replaces it): its ack answers that delivery.
func (m *Held) Msg() js.Msg { return m.msg }

// Add takes a delivered message into its partner's lane, in stream order.
// A redelivery of a message already in hand replaces its handle (its ack
// then answers the latest delivery). It reports whether seq was new here.
// A message the server may have handed out before (redelivered) is never
// pipelined.
func (l *Lanes) Add(msg js.Msg, seq uint64, partner string, size int, redelivered bool, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.bySeq[seq]; ok {
		if m.running {
			m.again, m.hasAgain = msg, true
		} else {
			m.msg, m.beat, m.redelivered = msg, now, m.redelivered || redelivered
		}
		return false
	}
	if l.barrier && !l.parks(partner, seq) && l.back.saw(seq) {
		l.lift()
	}
	ln := l.byKey[partner]
	if ln == nil {
		ln = &lane{key: partner}
		l.byKey[partner] = ln
	}
	m := &Held{msg: msg, seq: seq, partner: partner, size: size, beat: now, lane: ln, redelivered: redelivered}
	l.bySeq[seq] = m
	ln.insert(m)
	if ln.waitSeq == seq {
		ln.stopWaiting()
	}
	l.offer(ln)
	return true
}

// insert puts m in the queue, in stream order.
func (ln *lane) insert(m *Held) {
	i := len(ln.queue)
	for i > 0 && ln.queue[i-1].seq > m.seq {
		i--
	}
	ln.queue = append(ln.queue, nil)
	copy(ln.queue[i+1:], ln.queue[i:])
	ln.queue[i] = m
}

// mayTake says whether the lane's first queued message may be taken now,
// with depth of its partner's messages at once: none is taken while one
// stays in the consumer or a discarded one is not back; one behind
// others only when none of them runs alone and it was never handed out
// before.
func (ln *lane) mayTake(depth int) bool {
	if ln.waitSeq != 0 || ln.returning > 0 || len(ln.queue) == 0 {
		return false
	}
	if len(ln.taken) == 0 {
		return true
	}
	if len(ln.taken) >= depth || ln.queue[0].redelivered {
		return false
	}
	for _, t := range ln.taken {
		if t.redelivered || t.alone {
			return false
		}
	}
	return true
}

// offer puts a lane whose head may run on the ready list.
func (l *Lanes) offer(ln *lane) {
	if ln.inReady || !ln.mayTake(l.depth) || l.isPaused(ln.key) {
		return
	}
	ln.inReady = true
	l.ready = append(l.ready, ln)
	l.cond.Signal()
}

func (l *Lanes) isPaused(partner string) bool { return l.paused != nil && l.paused(partner) }

// Next waits for a head that may run and takes it (its lane is busy until
// Done). It returns nil once the lanes are closed and nothing that runs
// could make another head runnable.
func (l *Lanes) Next() *Held {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if !l.barrier && len(l.ready) > 0 {
			ln := l.ready[0]
			l.ready[0] = nil
			l.ready = l.ready[1:]
			ln.inReady = false
			if l.isPaused(ln.key) || !ln.mayTake(l.depth) {
				continue // paused since it was offered (Wake offers it again), or no longer takeable
			}
			m := ln.queue[0]
			ln.queue = ln.queue[1:]
			m.running, m.ahead, m.aborted, m.alone = true, len(ln.taken) > 0, false, false
			if m.ahead {
				m.turn = make(chan struct{})
			}
			ln.taken = append(ln.taken, m)
			l.running++
			l.offer(ln) // the next one may run ahead
			return m
		}
		if l.closed && l.running == 0 && (l.barrier || len(l.ready) == 0) {
			l.cond.Broadcast() // the other workers see it too
			return nil
		}
		l.cond.Wait()
	}
}

// Done ends the run of m. stays says the message is still the consumer's
// (nak'd): the lane then waits for it to come back, until dueIn has passed
// (a delivery that came back during the run is queued at once). A
// delivery that came during a run that settled the message is returned:
// the caller acks it, it has nothing left to do.
func (l *Lanes) Done(m *Held, stays bool, dueIn time.Duration, now time.Time) (settledAgain js.Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := m.lane
	m.running = false
	l.running--
	ln.untake(m)
	again, hasAgain := m.again, m.hasAgain
	m.again, m.hasAgain = nil, false
	if stays {
		// what ran ahead is discarded: it is run again after m
		for _, t := range ln.taken {
			t.aborted = true
			t.giveTurn()
			ln.returning++
		}
		ln.taken = nil
	} else if len(ln.taken) > 0 {
		ln.taken[0].giveTurn() // the next one may settle
	}
	switch {
	case stays && hasAgain:
		m.msg, m.beat = again, now
		ln.queue = append([]*Held{m}, ln.queue...)
	case stays:
		delete(l.bySeq, m.seq)
		ln.waitSeq, ln.waitTill, ln.waitMsg, ln.waitLate = m.seq, now.Add(dueIn), m.msg, now.Add(dueIn)
	default:
		delete(l.bySeq, m.seq)
		settledAgain = again
	}
	l.settleLane(ln)
	l.cond.Broadcast()
	return settledAgain
}

// settleLane offers the lane again, or forgets it when it holds nothing.
func (l *Lanes) settleLane(ln *lane) {
	if len(ln.queue) == 0 && ln.waitSeq == 0 && len(ln.taken) == 0 && ln.returning == 0 {
		if l.byKey[ln.key] == ln {
			delete(l.byKey, ln.key)
		}
		return
	}
	l.offer(ln)
}

// Due releases the lanes whose nak'd head did not come back in time (it
// was deleted from the stream meanwhile, or the server gave up on it), and
// returns the held messages the server has not heard of since before
// quiet: the caller sends progress for them, so that a message waiting
// behind its partner's head is not redelivered behind the hub's back. It
// also lifts a barrier whose time is up. overdue counts released lanes.
func (l *Lanes) Due(now time.Time, quiet time.Duration) (beat []*Held, overdue int, lifted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range l.byKey {
		if ln.waitSeq != 0 && now.After(ln.waitTill) {
			ln.stopWaiting()
			overdue++
			l.settleLane(ln)
		}
		for _, m := range ln.queue {
			if now.Sub(m.beat) >= quiet {
				m.beat = now
				beat = append(beat, m)
			}
		}
	}
	if l.barrier && l.back.timeUp(now) {
		l.lift()
		lifted = true
	}
	return beat, overdue, lifted
}

// InHand is how many messages are in hand, how many of them run, and
// whether the barrier is up.
func (l *Lanes) InHand() (held, running int, barrier bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.bySeq), l.running, l.barrier
}

// Close says nothing more will be added: the workers run what can still
// run, then Next returns nil. Lanes waiting for a nak'd head keep what
// they hold; the server hands it to the next process.
func (l *Lanes) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	// a barrier still up when the pulling stops: nothing runs, the next
	// process gets these back
	l.cond.Broadcast()
}
