package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Tracker follows INGEST messages to their outcome by reading the streams
// the hub stores outcomes in (PARSED, POISON, DLQ and, for verdicts,
// AUDIT's duplicate events), never by its core-NATS events: those are lost
// while a connection is down (the hub restarting in an exit drill), a
// stored message is not. It is the one reader of outcomes: the drill polls
// it, StreamVerdicts and WaitVerdicts (replay --outcome, send) are built
// on it.
//
// Each stream is read from a start taken before the messages were
// published (NewTracker: where the streams end now; TrackSince: a time),
// and each Poll reads only what was stored since the last one, once per
// stream for all the messages followed, so a Poll that fails half-way (the
// hub away) loses nothing: the next one goes on from the last message
// read. Each Poll is bounded (ReadTimeout): a request whose answer died
// with the hub's process would otherwise hold the caller until its own
// deadline (an exit drill's ten minutes) with nothing read meanwhile.
type Tracker struct {
	// ReadTimeout bounds one Poll (DefaultReadTimeout when zero).
	ReadTimeout time.Duration

	j       js.JetStream
	streams wire.StreamNames
	reads   []string          // the streams a Poll reads, in this order
	since   time.Time         // where a stream with no cursor yet starts
	cursor  map[string]uint64 // stream → the last sequence read
	read    int               // messages read so far (progress, for WaitVerdicts)
	// follow: the INGEST seqs followed (nil: all); seen: what the streams
	// said of each; parsed: the INGEST seqs of PARSED's outputs, in the
	// order PARSED stored them.
	follow map[uint64]bool
	seen   map[uint64]*sighting
	parsed []uint64
}

// sighting is what the streams hold of one INGEST message: the facts,
// whatever the order they were read in; its Verdict is derived from them.
type sighting struct {
	subjects  []string // parsed outputs' subjects (at most maxSubjects)
	parsed    bool
	poison    *Placement // the last quarantine copy
	dlq       *Placement // the last dead-letter copy
	duplicate *string    // the first duplicate-skipped event's detail
}

// Placement is where the hub put a message it did not parse.
type Placement struct {
	Poison  bool   // quarantined (POISON), else dead-lettered (DLQ)
	Stream  string // the stream's name
	ID      string // the copy's STREAM:SEQ
	Subject string
	Cause   string // x-poison-cause or x-error-cause
	Error   string // x-error-msg
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
	streams.SetDefaults()
	t := newTracker(j, streams, streams.Poison, streams.DLQ, streams.Parsed)
	ctx, cancel := context.WithTimeout(ctx, DefaultReadTimeout)
	defer cancel()
	for _, name := range t.reads {
		s, err := j.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		t.cursor[name] = s.CachedInfo().State.LastSeq
	}
	return t, nil
}

// TrackSince follows the INGEST messages seqs, published after since,
// through PARSED, DLQ, POISON and AUDIT (duplicates): each stream's first
// read starts at since (less a little, for a clock that differs from the
// server's), the later ones go on from the last message read.
func TrackSince(j js.JetStream, streams wire.StreamNames, since time.Time, seqs []uint64) *Tracker {
	streams.SetDefaults()
	t := newTracker(j, streams, streams.Parsed, streams.DLQ, streams.Poison, streams.Audit)
	t.since = since.Add(-2 * time.Second)
	t.Follow(seqs...)
	return t
}

func newTracker(j js.JetStream, streams wire.StreamNames, reads ...string) *Tracker {
	return &Tracker{j: j, streams: streams, reads: reads, cursor: map[string]uint64{}, seen: map[uint64]*sighting{}}
}

// Follow limits what the tracker keeps to the INGEST messages seqs (and
// those of earlier Follow calls); without it, it keeps every one. Call it
// before the first Poll: what was read before is not dropped.
func (t *Tracker) Follow(seqs ...uint64) {
	if t.follow == nil {
		t.follow = make(map[uint64]bool, len(seqs))
	}
	for _, s := range seqs {
		t.follow[s] = true
	}
}

// DefaultReadTimeout bounds a Poll: ample for reading what a few seconds
// stored, short beside a drill's wait.
const DefaultReadTimeout = 10 * time.Second

// Poll reads what the streams stored since the last Poll, within
// ReadTimeout. An error leaves what was read before it counted; call Poll
// again.
func (t *Tracker) Poll(ctx context.Context) error {
	wait := t.ReadTimeout
	if wait <= 0 {
		wait = DefaultReadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, name := range t.reads {
		o := &ejs.ScanOptions{HeadersOnly: name != t.streams.Audit} // an audit event is its payload
		if last, ok := t.cursor[name]; ok {
			o.FromSeq = last + 1
		} else {
			o.Since = t.since
		}
		err := ejs.Scan(ctx, t.j, name, o, func(m js.Msg, md *js.MsgMetadata) error {
			t.cursor[name] = md.Sequence.Stream
			t.read++
			t.note(name, m, md.Sequence.Stream)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// note records one stored message of stream.
func (t *Tracker) note(stream string, m js.Msg, seq uint64) {
	if stream == t.streams.Audit {
		t.noteDuplicate(m)
		return
	}
	h := m.Headers()
	// Copies name their original's stream; outputs only its sequence
	// (every output comes from INGEST).
	if o := h.Get(wire.HdrOriginalStream); o != t.streams.Ingest && (stream != t.streams.Parsed || o != "") {
		return
	}
	orig, err := strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 64)
	if err != nil {
		return
	}
	s := t.sighting(orig)
	if s == nil {
		return
	}
	id := wire.MsgRef{Stream: stream, Seq: seq}.String()
	switch stream {
	case t.streams.Parsed:
		t.parsed = append(t.parsed, orig)
		s.parsed = true
		if len(s.subjects) < maxSubjects {
			s.subjects = append(s.subjects, m.Subject())
		}
	case t.streams.Poison:
		s.poison = &Placement{Poison: true, Stream: stream, ID: id, Subject: m.Subject(), Cause: h.Get(wire.HdrPoisonCause),
			Error: h.Get(wire.HdrErrorMsg), Attempts: h.Get(wire.HdrAttempts), Deaths: h.Get(wire.HdrProcessDeaths)}
	case t.streams.DLQ:
		s.dlq = &Placement{Stream: stream, ID: id, Subject: m.Subject(), Cause: h.Get(wire.HdrErrorCause),
			Error: h.Get(wire.HdrErrorMsg), Attempts: h.Get(wire.HdrAttempts)}
	}
}

// duplicateAction is the hub's audit action for a skipped duplicate
// (hub/settle.go writes it; every one caused by a replay is recorded).
const duplicateAction = "duplicate-skipped"

// noteDuplicate records an audit event that says the hub skipped an
// INGEST message as a duplicate.
func (t *Tracker) noteDuplicate(m js.Msg) {
	var ev struct {
		Action  string            `json:"action"`
		IDs     []string          `json:"ids"`
		Details map[string]string `json:"details"`
	}
	if json.Unmarshal(m.Data(), &ev) != nil || ev.Action != duplicateAction || len(ev.IDs) == 0 {
		return
	}
	ref, err := wire.ParseMsgRef(ev.IDs[0], t.streams.Ingest)
	if err != nil { // another stream's message, or no ID
		return
	}
	s := t.sighting(ref.Seq)
	if s == nil || s.duplicate != nil {
		return
	}
	detail := ev.Details["interchange"]
	if by := ev.Details["processed_by"]; by != "" {
		detail += " (processed before by " + by + ")"
	}
	s.duplicate = &detail
}

// sighting is seq's record, nil when seq is not followed.
func (t *Tracker) sighting(seq uint64) *sighting {
	if t.follow != nil && !t.follow[seq] {
		return nil
	}
	s := t.seen[seq]
	if s == nil {
		s = &sighting{}
		t.seen[seq] = s
	}
	return s
}

// Placed is where INGEST seq's copy is, if the hub quarantined or
// dead-lettered it (a quarantine is the stronger verdict).
func (t *Tracker) Placed(seq uint64) (Placement, bool) {
	if s := t.seen[seq]; s != nil {
		if p := s.placed(); p != nil {
			return *p, true
		}
	}
	return Placement{}, false
}

func (s *sighting) placed() *Placement {
	if s.poison != nil {
		return s.poison
	}
	return s.dlq
}

// Parsed reports whether an output of INGEST seq is in PARSED.
func (t *Tracker) Parsed(seq uint64) bool {
	s := t.seen[seq]
	return s != nil && s.parsed
}

// ParsedInOrder counts how many of seqs have outputs in PARSED, in seqs'
// order (InOrder).
func (t *Tracker) ParsedInOrder(seqs []uint64) int { return InOrder(t.parsed, seqs) }

// Verdicts is what the streams said so far of each of seqs; a message
// with no verdict yet is missing from the map.
func (t *Tracker) Verdicts(seqs []uint64) map[uint64]Verdict {
	out := make(map[uint64]Verdict, len(seqs))
	for _, seq := range seqs {
		if s := t.seen[seq]; s != nil {
			if v := s.verdict(); v.Outcome != "" {
				out[seq] = v
			}
		}
	}
	return out
}

// verdict: parsed wins (a copy beside outputs is a partial dead letter),
// then a quarantine, then a dead letter, then a duplicate skipped.
func (s *sighting) verdict() Verdict {
	p := s.placed()
	switch {
	case s.parsed:
		v := Verdict{Outcome: OutcomeParsed, Where: s.subjects[0], Subjects: s.subjects}
		if p != nil {
			v.DeadLetter = p.ID
		}
		return v
	case p != nil:
		outcome := OutcomeDeadLettered
		if p.Poison {
			outcome = OutcomeQuarantined
		}
		return Verdict{Outcome: outcome, Where: p.ID, Subjects: []string{p.Subject}, Cause: p.Cause, Detail: p.Error}
	case s.duplicate != nil:
		return Verdict{Outcome: OutcomeDuplicate, Detail: *s.duplicate}
	}
	return Verdict{}
}

// timedOut reports whether err is a Poll's own ReadTimeout, ctx alive.
func timedOut(ctx context.Context, err error) bool {
	return ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)
}
