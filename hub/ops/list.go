package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
)

// Filter selects messages for inspect and bulk replay. Empty fields match
// everything; Kinds empty means DLQ and PARKING and POISON.
type Filter struct {
	Kinds       []string `json:"kinds,omitempty"` // dlq, parking, poison
	Stage       string   `json:"stage,omitempty"`
	Cause       string   `json:"cause,omitempty"`
	Partner     string   `json:"partner,omitempty"`
	ErrorClass  string   `json:"error_class,omitempty"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	// Code and Segment are the error code and segment tag of the error
	// text (ErrorDetail): with stage and cause they select a group.
	Code    string        `json:"error_code,omitempty"`
	Segment string        `json:"error_segment,omitempty"`
	Since   time.Duration `json:"since,omitempty"` // stored within this long before now
	// Superseded includes originals replaced by an edit (never replayed).
	Superseded bool `json:"superseded,omitempty"`
}

// ParseFilter reads key=value pairs separated by commas, as --filter and the
// API take them: kind (or stream), stage, cause, partner, error-class,
// fingerprint, code, segment, since (a Go duration or Nd for days).
func ParseFilter(s string) (Filter, error) {
	var f Filter
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			return f, fmt.Errorf("filter %q: want key=value", escape.Line(part))
		}
		if err := f.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return f, err
		}
	}
	return f, nil
}

// Set sets one filter field by its key.
func (f *Filter) Set(k, v string) error {
	switch strings.ToLower(k) {
	case "kind", "stream":
		for _, x := range strings.Split(strings.ToLower(v), "|") {
			if x != wire.KindDLQ && x != wire.KindParking && x != wire.KindPoison {
				return fmt.Errorf("filter %s=%q: want dlq, parking or poison", k, escape.Line(v))
			}
			f.Kinds = append(f.Kinds, x)
		}
	case "stage":
		f.Stage = v
	case "cause":
		if err := checkKnown("cause", v, KnownCauses()); err != nil {
			return err
		}
		f.Cause = v
	case "partner":
		f.Partner = v
	case "error-class", "error_class", "class":
		f.ErrorClass = v
	case "fingerprint":
		f.Fingerprint = v
	case "code", "error-code", "error_code":
		if digits(v) != v {
			return fmt.Errorf("filter %s=%q: want an error code, a number such as 29", k, escape.Line(v))
		}
		f.Code = v
	case "segment", "error-segment", "error_segment":
		if !validTag(v) {
			return fmt.Errorf("filter %s=%q: want a segment tag such as UNT", k, escape.Line(v))
		}
		f.Segment = v
	case "since":
		d, err := ParseSince(v)
		if err != nil {
			return err
		}
		f.Since = d
	default:
		return fmt.Errorf("filter key %q: want kind, stage, cause, partner, error-class, fingerprint, code, segment or since", escape.Line(k))
	}
	return nil
}

// ParseSince reads a duration such as 90m, 2h or 3d.
func ParseSince(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && days > 0 && fmt.Sprint(days) == n {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("since %q: want a positive duration such as 30m, 2h or 7d", escape.Line(v))
	}
	return d, nil
}

func (f Filter) kinds() []string {
	if len(f.Kinds) == 0 {
		return []string{wire.KindDLQ, wire.KindParking, wire.KindPoison}
	}
	return f.Kinds
}

// IsZero reports whether f selects everything.
func (f Filter) IsZero() bool {
	return len(f.Kinds) == 0 && f.Stage == "" && f.Cause == "" && f.Partner == "" && f.ErrorClass == "" &&
		f.Fingerprint == "" && f.Code == "" && f.Segment == "" && f.Since == 0
}

// String is f as --filter takes it (key=value,...), for a hint that acts
// on what f selects; Superseded has no key and is left out.
func (f Filter) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("kind", strings.Join(f.Kinds, "|"))
	add("stage", f.Stage)
	add("cause", f.Cause)
	add("partner", f.Partner)
	add("error-class", f.ErrorClass)
	add("fingerprint", f.Fingerprint)
	add("code", f.Code)
	add("segment", f.Segment)
	if f.Since > 0 {
		add("since", f.Since.String())
	}
	return strings.Join(parts, ",")
}

func (f Filter) match(e Entry) bool {
	return (f.Stage == "" || e.Stage == f.Stage) && (f.Cause == "" || e.Cause == f.Cause) &&
		(f.Partner == "" || e.Partner == f.Partner) && (f.ErrorClass == "" || e.ErrorClass == f.ErrorClass) &&
		(f.Fingerprint == "" || e.Fingerprint == f.Fingerprint) && (f.Code == "" || e.ErrorCode == f.Code) &&
		(f.Segment == "" || e.ErrorSegment == f.Segment) && (f.Superseded || !e.Superseded())
}

// Inspect returns the messages f selects, oldest first per stream, with
// headers but without payloads (those stay on the server; Show reads one).
func (o *Ops) Inspect(ctx context.Context, f Filter) ([]Entry, error) {
	edits, replayed, err := o.edits(ctx)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if f.Since > 0 {
		since = o.o.Now().Add(-f.Since)
	}
	var all []Entry
	for _, k := range f.kinds() {
		stream := o.o.Streams.StreamOf(k)
		err := ejs.Scan(ctx, o.o.JS, stream, &ejs.ScanOptions{Since: since, HeadersOnly: true}, func(m js.Msg, md *js.MsgMetadata) error {
			all = append(all, o.entryOf(stream, md.Sequence.Stream, m.Subject(), md.Timestamp, m.Headers(), 0))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// An edited copy supersedes its original even if the KV link was lost
	// after the copy was stored, but only when Edit claimed the original
	// first (editPending): an x-edited-from that someone else published on
	// a DLQ subject never hides a real dead letter.
	for _, e := range all {
		if e.EditedFrom != "" {
			if edits[e.EditedFrom] == editPending {
				edits[e.EditedFrom] = e.ID
			}
		}
	}
	out := all[:0]
	for _, e := range all {
		e.SupersededBy = edits[e.ID]
		if e.SupersededBy != "" {
			e.EditReplayedAs = replayed[e.ID]
		}
		if f.match(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// SummaryRow counts the messages of one stream, stage, cause and partner.
type SummaryRow struct {
	Kind    string         `json:"kind"`
	Stream  string         `json:"stream"`
	Stage   string         `json:"stage"`
	Cause   string         `json:"cause"`
	Partner string         `json:"partner"`
	Count   int            `json:"count"`
	Bytes   int64          `json:"bytes"`
	Oldest  time.Time      `json:"oldest"`
	Newest  time.Time      `json:"newest"`
	Ages    map[string]int `json:"ages"` // <1h, 1h-24h, 1d-7d, >7d
}

// Summary is what `edihub dlq ls` shows.
type Summary struct {
	Rows       []SummaryRow   `json:"rows"`
	Totals     map[string]int `json:"totals"`     // per kind
	Superseded int            `json:"superseded"` // originals kept beside their edit
}

// AgeBuckets name the age columns, youngest first.
var AgeBuckets = []string{"<1h", "1h-24h", "1d-7d", ">7d"}

func ageBucket(d time.Duration) string {
	switch {
	case d < time.Hour:
		return AgeBuckets[0]
	case d < 24*time.Hour:
		return AgeBuckets[1]
	case d < 7*24*time.Hour:
		return AgeBuckets[2]
	}
	return AgeBuckets[3]
}

// List counts the messages of DLQ, PARKING and POISON by stage, cause,
// partner and age. Superseded originals are counted apart: they need no
// decision.
func (o *Ops) List(ctx context.Context) (Summary, error) {
	entries, err := o.Inspect(ctx, Filter{Superseded: true})
	if err != nil {
		return Summary{}, err
	}
	return Summarize(entries, o.o.Now()), nil
}

// Summarize counts entries by kind, stream, stage, cause, partner and age
// at now, as `dlq ls` shows them (List is Inspect + Summarize; the API's
// overview summarises the entries it keeps).
func Summarize(entries []Entry, now time.Time) Summary {
	s := Summary{Totals: map[string]int{wire.KindDLQ: 0, wire.KindParking: 0, wire.KindPoison: 0}}
	idx := map[[5]string]int{}
	for _, e := range entries {
		if e.Superseded() {
			s.Superseded++
			continue
		}
		s.Totals[e.Kind]++
		k := [5]string{e.Kind, e.Stream, e.Stage, e.Cause, e.Partner}
		i, ok := idx[k]
		if !ok {
			i = len(s.Rows)
			idx[k] = i
			s.Rows = append(s.Rows, SummaryRow{Kind: e.Kind, Stream: e.Stream, Stage: e.Stage, Cause: e.Cause, Partner: e.Partner,
				Oldest: e.Time, Newest: e.Time, Ages: map[string]int{}})
		}
		r := &s.Rows[i]
		r.Count++
		r.Bytes += int64(e.Size)
		if e.Time.Before(r.Oldest) {
			r.Oldest = e.Time
		}
		if e.Time.After(r.Newest) {
			r.Newest = e.Time
		}
		r.Ages[ageBucket(now.Sub(e.Time))]++
	}
	order := map[string]int{wire.KindDLQ: 0, wire.KindParking: 1, wire.KindPoison: 2}
	sort.SliceStable(s.Rows, func(i, j int) bool {
		a, b := s.Rows[i], s.Rows[j]
		if a.Kind != b.Kind {
			return order[a.Kind] < order[b.Kind]
		}
		if a.Stage != b.Stage {
			return a.Stage < b.Stage
		}
		if a.Cause != b.Cause {
			return a.Cause < b.Cause
		}
		return a.Partner < b.Partner
	})
	return s
}
