package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
)

// AuditRecord is one stored audit event with its stream sequence.
type AuditRecord struct {
	Seq    uint64     `json:"seq"`
	Stored time.Time  `json:"stored"`
	Event  AuditEvent `json:"event"`
	// Error is set when the stored bytes are not an event.
	Error string `json:"error,omitempty"`
}

// ReadAudit returns the events of stream stored at or after since (zero:
// all), oldest first, at most limit of the newest (0: all).
func ReadAudit(ctx context.Context, j js.JetStream, stream string, since time.Time, limit int) ([]AuditRecord, error) {
	var out []AuditRecord
	err := scan(ctx, j, stream, since, false, func(m js.Msg, md *js.MsgMetadata) error {
		r := AuditRecord{Seq: md.Sequence.Stream, Stored: md.Timestamp.UTC()}
		if err := json.Unmarshal(m.Data(), &r.Event); err != nil {
			r.Error = "not an audit event: " + EscapeLine(err.Error())
		}
		out = append(out, r)
		if limit > 0 && len(out) > 2*limit {
			out = append(out[:0], out[len(out)-limit:]...)
		}
		return nil
	})
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, err
}

// Kinds of audit chain problems.
const (
	AuditAltered    = "altered"     // the event's hash does not match its content
	AuditBrokenLink = "broken-link" // prev is not the hash of the event before
	AuditMissing    = "missing"     // a sequence is gone (deleted or purged)
	AuditUnreadable = "unreadable"  // the stored bytes are not an event
	AuditNoAnchor   = "anchor-not-found"
)

// AuditProblem is the first place where the chain does not hold.
type AuditProblem struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// AuditVerification is the result of VerifyAudit.
type AuditVerification struct {
	OK       bool          `json:"ok"`
	Events   int           `json:"events"`
	LastSeq  uint64        `json:"last_seq"`
	LastHash string        `json:"last_hash,omitempty"`
	Problem  *AuditProblem `json:"problem,omitempty"`
}

// VerifyAudit walks the stream from sequence 1 and reports the first event
// whose hash does not match its content, whose prev does not chain onto
// the event before, or the first sequence that is missing. With anchor (a
// last_hash noted earlier, e.g. in a ticket or another system), it also
// checks that the event with that hash is still there, which catches the
// one change the chain alone cannot see: events cut off at the end.
func VerifyAudit(ctx context.Context, j js.JetStream, stream, anchor string) (AuditVerification, error) {
	var v AuditVerification
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return v, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return v, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	next, prev := uint64(1), ""
	anchorFound := anchor == ""
	stop := fmt.Errorf("stop")
	problem := func(seq uint64, kind, format string, a ...any) error {
		v.Problem = &AuditProblem{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, a...)}
		return stop
	}
	err = scan(ctx, j, stream, time.Time{}, false, func(m js.Msg, md *js.MsgMetadata) error {
		seq := md.Sequence.Stream
		if seq != next {
			return problem(next, AuditMissing, "events %d..%d are missing (deleted or purged); the next stored event is %d", next, seq-1, seq)
		}
		next++
		var ev AuditEvent
		if err := json.Unmarshal(m.Data(), &ev); err != nil {
			return problem(seq, AuditUnreadable, "event %d is not an audit event: %s", seq, EscapeLine(err.Error()))
		}
		if h := ev.computeHash(); h != ev.Hash {
			return problem(seq, AuditAltered, "event %d (%s by %s) was altered: its hash is %s, its content hashes to %s",
				seq, EscapeLine(ev.Action), EscapeLine(ev.Actor), EscapeLine(ev.Hash), h)
		}
		if ev.Prev != prev {
			return problem(seq, AuditBrokenLink, "event %d does not chain onto event %d: prev is %s, want %s (an event before it was altered, replaced or removed)",
				seq, seq-1, EscapeLine(ev.Prev), nonEmpty(prev, `""`))
		}
		prev = ev.Hash
		v.Events++
		v.LastSeq, v.LastHash = seq, ev.Hash
		if ev.Hash == anchor {
			anchorFound = true
		}
		return nil
	})
	if err != nil && err != stop {
		return v, err
	}
	if v.Problem == nil && next <= info.State.LastSeq {
		problem(next, AuditMissing, "events %d..%d are missing (deleted at the end of the stream)", next, info.State.LastSeq)
	}
	if v.Problem == nil && !anchorFound {
		problem(v.LastSeq, AuditNoAnchor, "no event has the anchor hash %s: events were cut off or the stream was replaced", EscapeLine(anchor))
	}
	v.OK = v.Problem == nil
	return v, nil
}

// AuditList is ReadAudit on the hub's AUDIT stream.
func (o *Ops) AuditList(ctx context.Context, since time.Duration, limit int) ([]AuditRecord, error) {
	var t time.Time
	if since > 0 {
		t = o.o.Now().Add(-since)
	}
	return ReadAudit(ctx, o.o.JS, o.o.Streams.Audit, t, limit)
}

// AuditVerify is VerifyAudit on the hub's AUDIT stream.
func (o *Ops) AuditVerify(ctx context.Context, anchor string) (AuditVerification, error) {
	return VerifyAudit(ctx, o.o.JS, o.o.Streams.Audit, anchor)
}
