package client

import (
	"context"
	"fmt"
	"strconv"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Tracker follows INGEST messages to their outcome by reading the streams
// the hub stores outcomes in (PARSED, POISON, DLQ), never by its core-NATS
// events: those are lost while a connection is down (the hub restarting
// in an exit drill), a stored message is not. Each stream is read from a
// cursor taken before the messages were published, and each Poll reads
// only what was stored since the last one, so a Poll that fails half-way
// (the hub away) loses nothing: the next one goes on from the last message
// read. Each Poll is bounded (ReadTimeout): a request whose answer died
// with the hub's process would otherwise hold the caller until its own
// deadline (an exit drill's ten minutes) with nothing read meanwhile.
type Tracker struct {
	// ReadTimeout bounds one Poll (DefaultReadTimeout when zero).
	ReadTimeout time.Duration

	j       js.JetStream
	streams wire.StreamNames
	cursor  map[string]uint64 // stream → the last sequence read
	// placed: INGEST seq → its quarantine or dead-letter copy; parsed: the
	// INGEST seqs of PARSED's outputs, in the order PARSED stored them.
	placed map[uint64]Placement
	parsed []uint64
}

// Placement is where the hub put a message it did not parse.
type Placement struct {
	Poison  bool   // quarantined (POISON), else dead-lettered (DLQ)
	Stream  string // the stream's name
	Subject string
	Cause   string // x-poison-cause or x-error-cause
	// Attempts and Deaths are the copy's x-attempts and x-process-deaths.
	Attempts, Deaths string
}

// String is the placement as the drill tells it.
func (p Placement) String() string {
	cause := wire.HdrErrorCause
	if p.Poison {
		cause = wire.HdrPoisonCause
	}
	return fmt.Sprintf("%s (stream %s, %s=%s, %s=%s)", p.Subject, p.Stream, cause, p.Cause, wire.HdrAttempts, p.Attempts)
}

// NewTracker notes where PARSED, POISON and DLQ end now: call it before
// publishing what it is to follow.
func NewTracker(ctx context.Context, j js.JetStream, streams wire.StreamNames) (*Tracker, error) {
	t := &Tracker{j: j, streams: streams, cursor: map[string]uint64{}, placed: map[uint64]Placement{}}
	ctx, cancel := context.WithTimeout(ctx, DefaultReadTimeout)
	defer cancel()
	for _, name := range []string{streams.Parsed, streams.Poison, streams.DLQ} {
		s, err := j.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		t.cursor[name] = s.CachedInfo().State.LastSeq
	}
	return t, nil
}

// DefaultReadTimeout bounds a Poll: ample for reading what a few seconds
// stored, short beside a drill's wait.
const DefaultReadTimeout = 10 * time.Second

// Poll reads what the three streams stored since the last Poll, within
// ReadTimeout. An error leaves what was read before it counted; call Poll
// again.
func (t *Tracker) Poll(ctx context.Context) error {
	wait := t.ReadTimeout
	if wait <= 0 {
		wait = DefaultReadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, name := range []string{t.streams.Poison, t.streams.DLQ, t.streams.Parsed} {
		err := ejs.Scan(ctx, t.j, name, &ejs.ScanOptions{FromSeq: t.cursor[name] + 1, HeadersOnly: true}, func(m js.Msg, md *js.MsgMetadata) error {
			t.cursor[name] = md.Sequence.Stream
			t.note(name, m)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// note records one stored message of stream.
func (t *Tracker) note(stream string, m js.Msg) {
	h := m.Headers()
	// Copies name their original's stream; outputs only its sequence
	// (every output comes from INGEST).
	if o := h.Get(wire.HdrOriginalStream); o != t.streams.Ingest && (stream != t.streams.Parsed || o != "") {
		return
	}
	seq, err := strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 64)
	if err != nil {
		return
	}
	switch stream {
	case t.streams.Parsed:
		t.parsed = append(t.parsed, seq)
	case t.streams.Poison:
		t.placed[seq] = Placement{Poison: true, Stream: stream, Subject: m.Subject(), Cause: h.Get(wire.HdrPoisonCause),
			Attempts: h.Get(wire.HdrAttempts), Deaths: h.Get(wire.HdrProcessDeaths)}
	case t.streams.DLQ:
		if p, ok := t.placed[seq]; !ok || !p.Poison { // a quarantine is the stronger verdict
			t.placed[seq] = Placement{Stream: stream, Subject: m.Subject(), Cause: h.Get(wire.HdrErrorCause), Attempts: h.Get(wire.HdrAttempts)}
		}
	}
}

// Placed is where INGEST seq's copy is, if the hub quarantined or
// dead-lettered it.
func (t *Tracker) Placed(seq uint64) (Placement, bool) {
	p, ok := t.placed[seq]
	return p, ok
}

// Parsed reports whether an output of INGEST seq is in PARSED.
func (t *Tracker) Parsed(seq uint64) bool {
	for _, s := range t.parsed {
		if s == seq {
			return true
		}
	}
	return false
}

// ParsedInOrder counts how many of seqs have outputs in PARSED, in seqs'
// order (InOrder).
func (t *Tracker) ParsedInOrder(seqs []uint64) int { return InOrder(t.parsed, seqs) }
