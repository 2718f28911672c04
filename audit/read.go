package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
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
	Altered         = "altered"         // the event's hash does not match its content
	BrokenLink      = "broken-link"     // prev is not the hash of the authentic event before (reordered, replaced, removed)
	Missing         = "missing"         // a sequence is gone (deleted or purged)
	Unreadable      = "unreadable"      // the stored bytes are not an event (foreign or malformed)
	Forged          = "forged"          // the MAC does not verify, or its key is not in the keyring
	Unauthenticated = "unauthenticated" // no MAC, after signed events began: forged without the key, or written without it
)

// Problem is one place where the chain does not hold.
type Problem struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Acknowledged: a foreign message an operator acknowledged with an
	// authentic AckForeignAction event (Verification.Foreign only).
	Acknowledged bool `json:"acknowledged,omitempty"`
}

// AckForeignAction is the event by which an operator acknowledges foreign
// messages in the audit stream (IDs AUDIT:<seq>): once acknowledged by an
// authentic event they no longer turn the verdict red.
const AckForeignAction = "acknowledge-foreign"

// isForeign: the kinds of messages that are not the hub's events (junk,
// forged, unsigned), as opposed to damage to the hub's own chain.
func isForeign(kind string) bool {
	return kind == Unreadable || kind == Forged || kind == Unauthenticated
}

// Verification is the result of Verify.
type Verification struct {
	// OK: no problem, and (with a keyring) every event after the legacy
	// ones is signed. Without a keyring OK covers the hash chain only:
	// Authenticated is false and Note says so.
	OK       bool   `json:"ok"`
	Events   int    `json:"events"` // events that chain (problems excluded)
	LastSeq  uint64 `json:"last_seq"`
	LastHash string `json:"last_hash,omitempty"`
	// Authenticated: a keyring was given and MACs were checked.
	Authenticated bool `json:"authenticated"`
	// Legacy counts events without a MAC written before the first signed
	// one (from before audit keys): they are only as good as the plain
	// hash chain. LegacyThrough is the last of them.
	Legacy        int    `json:"legacy,omitempty"`
	LegacyThrough uint64 `json:"legacy_through,omitempty"`
	Note          string `json:"note,omitempty"`
	// AnchorMissing: no event's hash starts with the anchor given. Either
	// it was mistyped or events after it were cut off; only the caller can
	// tell, so it is not counted among the problems.
	AnchorMissing bool `json:"anchor_missing,omitempty"`
	// Problem is the first of Problems, for callers that show one.
	Problem  *Problem  `json:"problem,omitempty"`
	Problems []Problem `json:"problems,omitempty"`
	// ChainOK: the authentic events chain (nothing altered, missing,
	// reordered), whatever foreign messages lie between them.
	ChainOK bool `json:"chain_ok"`
	// Foreign lists every message that is not an authentic event, by
	// sequence, acknowledged or not; the unacknowledged ones are also in
	// Problems and make OK false.
	Foreign []Problem `json:"foreign,omitempty"`
}

// NoKeyNote is Verification.Note when no keyring was given.
const NoKeyNote = "events not authenticated: no key (hash chain checked only; anyone who can publish on the audit subject can append a chained event)"

// Verify is VerifyWith without a keyring: the hash chain only.
func Verify(ctx context.Context, j js.JetStream, stream, anchor string) (Verification, error) {
	return VerifyWith(ctx, j, stream, anchor, nil)
}

// MinAnchorDigits is the shortest anchor prefix Verify takes (the length
// listings show).
const MinAnchorDigits = 12

// ErrBadAnchor is an anchor that is not a hex prefix of at least
// MinAnchorDigits digits, or one that matches more than one event.
var ErrBadAnchor = errors.New("bad anchor")

func checkAnchor(a string) error {
	if a == "" {
		return nil
	}
	if len(a) < MinAnchorDigits || len(a) > 64 || strings.Trim(strings.ToLower(a), "0123456789abcdef") != "" {
		return fmt.Errorf("%w %q: want at least %d hex digits of a last hash", ErrBadAnchor, escape.Line(a), MinAnchorDigits)
	}
	return nil
}

// VerifyWith walks the stream from sequence 1 and reports every event
// whose hash does not match its content, whose prev does not chain onto
// the last authentic event before it, every sequence that is missing,
// every message that is not an event, and, with keys, every event whose
// MAC is wrong or absent (legacy events before the first signed one
// excepted). The chain continues over foreign and forged events, which is
// what appenders do too. With anchor (a last_hash noted earlier, e.g. in a
// ticket or another system), it also checks that the event with that hash
// is still there, which catches the one change the chain alone cannot
// see: events cut off at the end.
func VerifyWith(ctx context.Context, j js.JetStream, stream, anchor string, keys *Keyring) (Verification, error) {
	v := Verification{Authenticated: keys != nil}
	if keys == nil {
		v.Note = NoKeyNote
	}
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return v, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return v, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	next, prev := uint64(1), ""
	resync := false // after a gap: the next event's prev cannot be checked
	signed := false // a signed event was seen: unsigned ones are no longer legacy
	seen := map[string]uint64{}
	if err := checkAnchor(anchor); err != nil {
		return v, err
	}
	anchorMatches := map[string]bool{}
	acked := map[uint64]bool{} // foreign messages acknowledged by an operator's event
	var pending []altered      // hash mismatches waiting for the next authentic event (with keys)
	problem := func(seq uint64, kind, format string, a ...any) {
		v.Problems = append(v.Problems, Problem{Seq: seq, Kind: kind, Detail: fmt.Sprintf(format, a...)})
	}
	err = ejs.Scan(ctx, j, stream, nil, func(m js.Msg, md *js.MsgMetadata) error {
		seq := md.Sequence.Stream
		if seq != next {
			problem(next, Missing, "events %d..%d are missing (deleted or purged); the next stored event is %d", next, seq-1, seq)
			resync = true
		}
		next = seq + 1
		var ev Event
		if err := json.Unmarshal(m.Data(), &ev); err != nil {
			problem(seq, Unreadable, "message %d on %s is not an audit event (foreign or malformed; skipped): %s", seq, escape.Line(m.Subject()), escape.Line(err.Error()))
			return nil
		}
		if !ev.wellFormed() {
			problem(seq, Unreadable, "message %d on %s is not an audit event (no action, time or hash; skipped)", seq, escape.Line(m.Subject()))
			return nil
		}
		if h := ev.computeHash(); h != ev.Hash {
			detail := fmt.Sprintf("event %d (%s by %s) was altered: its hash is %s, its content hashes to %s",
				seq, escape.Line(ev.Action), escape.Line(ev.Actor), escape.Line(ev.Hash), h)
			if keys != nil {
				// With a key, junk with an event's shape and an altered
				// event look alike until the next authentic event: it
				// chains onto an altered event's hash, never onto junk.
				pending = append(pending, altered{seq: seq, hash: ev.Hash, detail: detail})
				return nil
			}
			problem(seq, Altered, "%s", detail)
			prev, resync = ev.Hash, false // what comes next chained onto the original
			return nil
		}
		if keys != nil {
			switch {
			case ev.MAC == "" && !signed:
				v.Legacy++
				v.LegacyThrough = seq
			case ev.MAC == "":
				problem(seq, Unauthenticated, "event %d (%s by %s) has no MAC although signed events come before it: forged by someone without the key, or written by a process without it (skipped)",
					seq, escape.Line(ev.Action), escape.Line(ev.Actor))
				return nil
			default:
				if err := keys.Check(macDomain, ev.KID, ev.MAC, ev.macInput()); err != nil {
					problem(seq, Forged, "event %d (%s by %s) is not authentic: %s (skipped)", seq, escape.Line(ev.Action), escape.Line(ev.Actor), escape.Line(err.Error()))
					return nil
				}
				signed = true
			}
		}
		for _, p := range pending {
			if p.hash == ev.Prev {
				problem(p.seq, Altered, "%s", p.detail)
				prev, resync = p.hash, false
			} else {
				problem(p.seq, Forged, "message %d has an event's shape but is no event of the hub (its hash does not match its content, and no event chains onto it; skipped)", p.seq)
			}
		}
		pending = nil
		if ev.Prev != prev && !resync {
			where := "no event before it has that hash"
			if k, ok := seen[ev.Prev]; ok {
				where = fmt.Sprintf("it points to event %d", k)
			}
			problem(seq, BrokenLink, "event %d does not chain onto event %d: prev is %s, want %s; %s (reordered, replaced or removed events)",
				seq, v.LastSeq, escape.Line(ev.Prev), cmp.Or(prev, `""`), where)
		} else {
			v.Events++
			if ev.Action == AckForeignAction && (keys == nil || ev.MAC != "") {
				ackedSeqs(ev, stream, acked)
			}
		}
		prev, resync = ev.Hash, false
		seen[ev.Hash] = seq
		v.LastSeq, v.LastHash = seq, ev.Hash
		if anchor != "" && strings.HasPrefix(ev.Hash, strings.ToLower(anchor)) {
			anchorMatches[ev.Hash] = true
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	for _, p := range pending { // nothing authentic after them: altered at the end, or junk
		problem(p.seq, Altered, "%s (or junk: no authentic event follows to tell)", p.detail)
	}
	if next <= info.State.LastSeq {
		problem(next, Missing, "events %d..%d are missing (deleted at the end of the stream)", next, info.State.LastSeq)
	}
	if anchor != "" {
		switch len(anchorMatches) {
		case 0:
			// A mistyped anchor and events cut off after it look alike;
			// the caller says which to check (not a chain problem).
			v.AnchorMissing = true
		case 1:
		default:
			return v, fmt.Errorf("%w: %s matches %d events; give more digits", ErrBadAnchor, escape.Line(anchor), len(anchorMatches))
		}
	}
	sort.SliceStable(v.Problems, func(i, j int) bool { return v.Problems[i].Seq < v.Problems[j].Seq })
	all := v.Problems
	v.Problems, v.ChainOK = nil, true
	for _, p := range all {
		if !isForeign(p.Kind) {
			v.ChainOK = false
			v.Problems = append(v.Problems, p)
			continue
		}
		p.Acknowledged = acked[p.Seq]
		v.Foreign = append(v.Foreign, p)
		if !p.Acknowledged {
			v.Problems = append(v.Problems, p)
		}
	}
	if len(v.Problems) > 0 {
		v.Problem = &v.Problems[0]
	}
	v.OK = len(v.Problems) == 0
	return v, nil
}

// altered is a message whose hash does not match its content.
type altered struct {
	seq          uint64
	hash, detail string
}

// ackedSeqs reads the sequences an AckForeignAction event names (IDs
// <stream>:<seq>).
func ackedSeqs(ev Event, stream string, into map[uint64]bool) {
	for _, id := range ev.IDs {
		if ref, err := wire.ParseMsgRef(id, stream); err == nil {
			into[ref.Seq] = true
		}
	}
}
