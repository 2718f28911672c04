package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/edihub/edihub/escape"
	js "github.com/nats-io/nats.go/jetstream"
)

// Record is one stored audit event with its stream sequence.
type Record struct {
	Seq    uint64    `json:"seq"`
	Stored time.Time `json:"stored"`
	Event  Event     `json:"event"`
	// Error is set when the stored bytes are not an event.
	Error string `json:"error,omitempty"`
}

// Read returns the events of stream stored at or after since (zero:
// all), oldest first, at most limit of the newest (0: all).
func Read(ctx context.Context, j js.JetStream, stream string, since time.Time, limit int) ([]Record, error) {
	var out []Record
	err := ejs.Scan(ctx, j, stream, &ejs.ScanOptions{Since: since}, func(m js.Msg, md *js.MsgMetadata) error {
		r := Record{Seq: md.Sequence.Stream, Stored: md.Timestamp.UTC()}
		if err := json.Unmarshal(m.Data(), &r.Event); err != nil {
			r.Error = "not an audit event: " + escape.Line(err.Error())
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
	Altered    = "altered"     // the event's hash does not match its content
	BrokenLink = "broken-link" // prev is not the hash of the event before
	Missing    = "missing"     // a sequence is gone (deleted or purged)
	Unreadable = "unreadable"  // the stored bytes are not an event
	NoAnchor   = "anchor-not-found"
)

// Problem is the first place where the chain does not hold.
type Problem struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Verification is the result of Verify.
type Verification struct {
	OK       bool     `json:"ok"`
	Events   int      `json:"events"`
	LastSeq  uint64   `json:"last_seq"`
	LastHash string   `json:"last_hash,omitempty"`
	Problem  *Problem `json:"problem,omitempty"`
}

// Verify walks the stream from sequence 1 and reports the first event
// whose hash does not match its content, whose prev does not chain onto
// the event before, or the first sequence that is missing. With anchor (a
// last_hash noted earlier, e.g. in a ticket or another system), it also
// checks that the event with that hash is still there, which catches the
// one change the chain alone cannot see: events cut off at the end.
func Verify(ctx context.Context, j js.JetStream, stream, anchor string) (Verification, error) {
	var v Verification
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
		v.Problem = &Problem{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, a...)}
		return stop
	}
	err = ejs.Scan(ctx, j, stream, nil, func(m js.Msg, md *js.MsgMetadata) error {
		seq := md.Sequence.Stream
		if seq != next {
			return problem(next, Missing, "events %d..%d are missing (deleted or purged); the next stored event is %d", next, seq-1, seq)
		}
		next++
		var ev Event
		if err := json.Unmarshal(m.Data(), &ev); err != nil {
			return problem(seq, Unreadable, "event %d is not an audit event: %s", seq, escape.Line(err.Error()))
		}
		if h := ev.computeHash(); h != ev.Hash {
			return problem(seq, Altered, "event %d (%s by %s) was altered: its hash is %s, its content hashes to %s",
				seq, escape.Line(ev.Action), escape.Line(ev.Actor), escape.Line(ev.Hash), h)
		}
		if ev.Prev != prev {
			return problem(seq, BrokenLink, "event %d does not chain onto event %d: prev is %s, want %s (an event before it was altered, replaced or removed)",
				seq, seq-1, escape.Line(ev.Prev), cmp.Or(prev, `""`))
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
		problem(next, Missing, "events %d..%d are missing (deleted at the end of the stream)", next, info.State.LastSeq)
	}
	if v.Problem == nil && !anchorFound {
		problem(v.LastSeq, NoAnchor, "no event has the anchor hash %s: events were cut off or the stream was replaced", escape.Line(anchor))
	}
	v.OK = v.Problem == nil
	return v, nil
}
